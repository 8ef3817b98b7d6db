"""The stack's logs after a representative flow (signup, a key, an agent with a number, an inbound call through the
voice simulator, a text, a webhook delivery): every line of every process is a JSON object with the fields of
core.logs (but those gRPC's C core writes itself), trace ids are there, and not one of the flow's phone numbers,
email addresses, keys, tokens or secrets is in any line.

The shared stack's logs also hold the other tests' lines: the checks of values are of this flow's own."""
import json
import re
import secrets

from gateway.dashboard.session_cookie import PLAIN_NAME
from tests.calling import our_call, ring, settled
from tests.receiver import Receiver, settled_deliveries
from tests.texting import number, opt_in, send, settled_message

CALLER = "+13125550142"  # the flow's own numbers: no other test uses them
FIELDS = {"timestamp", "level", "logger", "message", "service"}
# gRPC's C core writes its own lines to stderr (abseil's format: `E1127 17:41:45.815108 4242 file.cc:12] ...`), which
# Python's logging never sees
GRPC_CORE = re.compile(r"[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] |WARNING: All log messages before absl::")


async def test_the_logs_of_a_flow_are_json_with_trace_ids_and_hold_no_secret_or_phone_number(
        stack, api, account, calling_agent, voice):
    key, agent, texted = account["key"], calling_agent, number("0142")
    trace_id = secrets.token_hex(16)
    traced = {"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"}
    receiver = await Receiver().start()
    try:
        status, made, _ = await api.request("POST", "/api/v1/webhooks", key=key, headers=traced, json={
            "webhook_url": receiver.url, "events": ["sms.sent"]})
        assert status == 201, made
        await opt_in(api, key, texted)
        status, sent, _ = await send(api, key, agent, texted)
        assert status == 200, sent
        assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
        await settled_deliveries(api, key, 1, webhook_id=made["webhook"]["id"])
        at_provider = await ring(voice, agent["phone_number"], CALLER)
        await settled(api, key, (await our_call(api, key, agent["id"], at_provider["id"]))["id"])
        # a traced request whose provider call is retried: the agents service logs the retry in the caller's trace
        await voice.fail_next("PATCH", "/assistant", 503)
        status, body, _ = await api.request("PATCH", "/api/v1/agents", key=key, headers=traced,
                                            json={"id": agent["id"], "name": "Front desk"})
        assert status == 200, body
    finally:
        await receiver.stop()

    [session] = [c.value for c in account["dashboard"].session.cookie_jar if c.key == PLAIN_NAME]
    magic_token = account["signup"]["dashboard_magic_link"].rsplit("token=", 1)[1]
    never = {"caller": CALLER, "texted": texted, "agent's number": agent["phone_number"], "key": key,
             "read key": account["read_key"], "webhook secret": made["webhook_secret"], "session": session,
             "magic link token": magic_token, "owner's address": account["email"],
             "owner's address as stored": account["email"].lower()}
    lines, traced_lines = 0, []
    for process in stack.processes:
        for line in process.log.read_text(encoding="utf-8").splitlines():
            leaked = [what for what, value in never.items() if value in line]
            assert not leaked, f"{process.name} logged the {', '.join(leaked)}: {line}"
            if GRPC_CORE.match(line):
                continue
            lines += 1
            record = json.loads(line)  # every other line is one JSON object
            assert set(record) >= FIELDS, f"{process.name}: {line}"
            assert process.name.startswith(record["service"]), f"{process.name}: {line}"
            if "trace_id" in record:
                traced_lines.append(record)
    assert lines > len(stack.processes)
    assert all(len(r["trace_id"]) == 32 and len(r["span_id"]) == 16 for r in traced_lines)
    [retried] = [r for r in traced_lines if r["trace_id"] == trace_id]
    assert retried["service"] == "agents" and "attempt 1/" in retried["message"], retried
    assert retried["business_id"] == account["business_id"]
