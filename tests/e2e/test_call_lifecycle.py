"""The call lifecycle from the voice provider's signed server messages: outcomes by test number, the
events of each move, duplicated and reordered messages, and refused (unsigned or stale) messages."""
import asyncio
import hashlib
import hmac
import json
import time

import aiohttp
import pytest

from core.signing import verify
from tests.calling import call_events, settled
from tests.leads import leads_with
from tests.waiting import wait_until

MESSAGES = "/api/v1/providers/voice/messages"


@pytest.fixture
def agent(calling_agent):
    return calling_agent


@pytest.mark.parametrize("to, status, reason, events", [
    ("+14155550188", "completed", "customer-ended-call", ["call.completed", "call.started"]),
    ("+14155550001", "no-answer", "customer-did-not-answer", ["call.failed"]),
    ("+14155550002", "busy", "customer-busy", ["call.failed"]),
    ("+14155550003", "voicemail", "voicemail", ["call.completed", "call.started"]),
    ("+14155550004", "failed", "pipeline-error-openai-llm-failed", ["call.failed"]),
])
async def test_each_outcome_ends_the_call_with_its_events(api, account, agent, to, status, reason, events):
    key = account["key"]
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"], "to": to,
                                                                               "name": "Jordan Lee"})
    assert code == 201, call
    ended = await settled(api, key, call["id"])
    assert (ended["status"], ended["ended_reason"]) == (status, reason)
    if status == "completed":
        assert ended["duration"] > 0 and "water heater" in ended["summary"]
        assert ended["quality_dimensions"] == {"professionalism": 9, "empathy": 8, "information_gathering": 9,
                                               "resolution": 7}
    elif status == "voicemail":  # the agent spoke to the box: the call lasted, nobody summarised it
        assert ended["duration"] > 0 and ended["summary"] is None
    else:
        assert ended["duration"] == 0 and ended["summary"] is None
    assert await call_events(api, key, call["id"], len(events)) == events
    code, page, _ = await api.request("GET", "/api/v1/transcripts", key=key, params={"agent_id": agent["id"]})
    assert code == 200
    if status in ("completed", "voicemail"):  # something was said
        [item] = page["transcripts"]
        assert item["call_id"] == call["id"] and item["status"] == status and item["duration"] == ended["duration"]
        lines = item["transcript"].split("\n")
        # A 415 callee (California: all-party consent) speaks first, and hears the recording disclosure.
        assert all(line.startswith(("Agent: ", "Caller: ")) for line in lines) and "Agent: " in item["transcript"]
        assert any(line.startswith("Caller: ") for line in lines) == (status == "completed")
    else:
        assert page["transcripts"] == []


async def test_transcript_filters_are_checked(api, account, other_key):
    for params in ({"days": "91"}, {"days": "0"}, {"limit": "51"}, {"agent_id": "nope"}):
        code, body, _ = await api.request("GET", "/api/v1/transcripts", key=account["key"], params=params)
        assert code == 400, (params, body)
    code, body, _ = await api.request("GET", "/api/v1/transcripts", key=other_key)
    assert code == 200 and body["transcripts"] == []


async def test_duplicated_and_reordered_messages_change_nothing_more(api, account, agent, voice):
    key = account["key"]
    await voice.playback(duplicate=True, reorder=True)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550189"})
    ended = await settled(api, key, call["id"])
    assert ended["status"] == "completed"  # the report came before the last status update, which moved nothing
    await asyncio.sleep(0.5)  # the duplicates of the last messages
    assert await call_events(api, key, call["id"], 2) == ["call.completed", "call.started"]
    status, again, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert again["status"] == "completed" and again["updated_at"] == ended["updated_at"]


def signed(body: bytes, secret: str, at: float, milliseconds: bool = False) -> dict:
    stamp = str(int(at * 1000) if milliseconds else int(at))
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {"x-signature": digest, "x-timestamp": stamp, "Content-Type": "application/json"}


async def test_unsigned_forged_and_stale_messages_are_refused(stack):
    secret = stack.env()["VOICE_WEBHOOK_SECRET"]
    body = json.dumps({"message": {"type": "status-update", "status": "ringing",
                                   "call": {"id": "not-one-of-ours"}}}).encode()
    async with aiohttp.ClientSession() as session:
        async def post(headers):
            async with session.post(stack.base_url + MESSAGES, data=body, headers=headers) as r:
                return r.status, await r.json()

        status, reply = await post({"Content-Type": "application/json"})
        assert status == 401 and "x-signature" in reply["error"]["message"]
        status, reply = await post(signed(body, "not-the-secret", time.time()))
        assert status == 401 and "signature" in reply["error"]["message"]
        status, reply = await post(signed(body, secret, time.time() - 3600))
        assert status == 401 and "x-timestamp" in reply["error"]["message"]
        # The stack's credential is the HMAC plan: a bearer token, even the secret itself, is not accepted.
        status, reply = await post({"Authorization": f"Bearer {secret}", "Content-Type": "application/json"})
        assert status == 401 and "x-signature" in reply["error"]["message"]
        assert await post(signed(body, secret, time.time())) == (200, {})  # authentic, about no call of ours
        # The provider does not document x-timestamp's unit: milliseconds (13 digits) are read as such.
        assert await post(signed(body, secret, time.time(), milliseconds=True)) == (200, {})
        status, reply = await post(signed(body, secret, time.time() - 3600, milliseconds=True))
        assert status == 401 and "x-timestamp" in reply["error"]["message"]


@pytest.mark.parametrize("script", [{"timestamp_ms": True}, {"legacy_recording": True}])
async def test_a_call_signed_in_milliseconds_or_with_the_deprecated_recording_field_settles(api, account, agent,
                                                                                            voice, script):
    """Both units of the HMAC timestamp are accepted; a report naming its recording only by the deprecated
    artifact.recordingUrl still gives the call its recording."""
    key = account["key"]
    await voice.playback(**script)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550187"})
    assert code == 201, call
    ended = await settled(api, key, call["id"])
    assert ended["status"] == "completed" and "water heater" in ended["summary"]
    status, rec, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": call["id"]})
    assert status == 200 and rec["recording_status"] == "available"


async def test_outbound_calls_detect_voicemail_unless_the_agent_chose(api, account, agent, voice):
    """The provider's voicemail detection is off by default: our calls turn it on, or leave the agent's own."""
    key = account["key"]
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550003"})
    assert (await settled(api, key, call["id"]))["status"] == "voicemail"
    status, placed = await voice.request("GET", f"/call/{call['conversation_id']}")
    assert placed["assistantOverrides"]["voicemailDetection"] == {"provider": "vapi"}
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "provider_config": {"voicemailDetection": {"provider": "google"}}})
    assert status == 200, body
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550003"})
    assert (await settled(api, key, call["id"]))["status"] == "voicemail"  # the assistant's own detection
    status, placed = await voice.request("GET", f"/call/{call['conversation_id']}")
    assert "voicemailDetection" not in placed["assistantOverrides"]


async def test_a_status_update_nats_cannot_store_is_refused_and_applied_when_sent_again(api, account, agent, voice,
                                                                                        stack):
    """The gateway answers a status update only once JetStream stored it: while NATS is down the provider is told
    503 (and sends it again), so the message is never acknowledged and lost."""
    if stack.nats is None:
        pytest.skip("NATS_URL points at an external server this test cannot stop")
    key = account["key"]
    await voice.playback(silent=True)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550192"})
    assert code == 201
    secret = stack.env()["VOICE_WEBHOOK_SECRET"]
    body = json.dumps({"message": {"type": "status-update", "status": "in-progress", "call": {
        "id": call["conversation_id"], "assistantOverrides": {"metadata": {"switchboard_call_id": call["id"]}}}}}).encode()
    async with aiohttp.ClientSession() as session:
        async def post():
            async with session.post(stack.base_url + MESSAGES, data=body, headers=signed(body, secret, time.time())) as r:
                return r.status, await r.json()

        port = stack.nats.port
        stack.nats.stop()
        try:
            status, reply = await post()
            assert status == 503 and reply["error"]["code"] == "unavailable", reply
        finally:
            stack.nats.start(port=port)
        # sent again, as the provider retries, until the gateway is connected again
        answer = await wait_until(post, "the gateway to store the status update", lambda a: a[0] == 200)
        assert answer == (200, {})

    async def call_status() -> str:
        _, now, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
        return now["status"]
    await wait_until(call_status, "the call to be in progress", lambda s: s == "in-progress")
    assert await call_events(api, key, call["id"], 1) == ["call.started"]
    stack.wait_ready(30)


async def test_the_reaper_closes_a_call_whose_messages_never_came(api, account, agent, voice):
    """The provider played the call but sent nothing: past max_duration plus the margin (1 s in the tests) the
    reaper asks the provider and closes the call with its record."""
    key = account["key"]
    await voice.playback(silent=True)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": "+14155550190", "max_duration": 10})
    assert code == 201
    await asyncio.sleep(5)
    status, still, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert still["status"] == "queued"  # nothing heard yet, and not yet overdue
    ended = await settled(api, key, call["id"])
    assert (ended["status"], ended["ended_reason"]) == ("completed", "customer-ended-call")
    assert ended["duration"] > 0 and "water heater" in ended["summary"]
    assert await call_events(api, key, call["id"], 2) == ["call.completed", "call.started"]


async def lead_by_phone(api, key, phone: str, interactions: int) -> dict:
    """The lead with this phone once it counts `interactions` interactions."""
    leads = await wait_until(lambda: leads_with(api, key, phone), f"a lead of {phone} with {interactions} interactions",
                             lambda found: bool(found) and found[0]["interaction_count"] >= interactions)
    return leads[0]


async def test_a_conversation_counts_on_the_lead_or_makes_one(api, account, agent):
    key = account["key"]
    # No lead has this number yet: the call makes one from what the agent collected.
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550191"})
    await settled(api, key, call["id"])
    lead = await lead_by_phone(api, key, "+14155550191", 1)
    assert (lead["name"], lead["email"], lead["source"], lead["interaction_count"]) == (
        "Jordan Lee", "jordan@example.com", "outbound_call", 1)
    # A second call with it, linked by lead_id, counts on the same lead (once, however often the event comes).
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": "+14155550191", "lead_id": lead["id"]})
    await settled(api, key, call["id"])
    again = await lead_by_phone(api, key, "+14155550191", 2)
    assert again["id"] == lead["id"] and again["interaction_count"] == 2 and again["score"] >= lead["score"]
    # A call nobody answered is no interaction.
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": "+14155550001", "lead_id": lead["id"]})
    await settled(api, key, call["id"])
    await asyncio.sleep(0.5)
    assert (await lead_by_phone(api, key, "+14155550191", 2))["interaction_count"] == 2


async def test_a_calls_minutes_and_cost_reach_the_usage_log_and_the_balance(api, account, agent):
    key = account["key"]
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550192"})
    ended = await settled(api, key, call["id"])

    async def entries() -> list[dict]:
        status, usage, _ = await api.request("GET", "/api/v1/usage", key=key)
        return [u for u in usage["usage"] if u["call_id"] == call["id"] and u["method"] == "CALL"]
    [entry] = await wait_until(entries, f"the usage entry of call {call['id']}")
    assert entry["method"] == "CALL" and entry["endpoint"] == "/api/v1/calls" and entry["cost_cents"] > 0
    status, balance, _ = await api.request("GET", "/api/v1/balance", key=key)
    [mine] = [b for b in balance["businesses"] if b["business_id"] == account["business_id"]]
    assert mine["minutes_used"] == -(-ended["duration"] // 60) and mine["phone_numbers"] == 1


async def test_a_calls_own_webhook_gets_its_outcome_signed_with_the_call_secret(api, account, agent):
    from tests.receiver import Receiver

    key = account["key"]
    status, masked, _ = await api.request("GET", "/api/v1/webhooks/call-secret", key=key)
    assert status == 200 and masked["webhook_secret_masked"] is None and "webhook_secret" not in masked
    status, shown, _ = await api.request("POST", "/api/v1/webhooks/call-secret", key=key, json={})
    assert status == 200 and shown["webhook_secret"].startswith("whsec_")
    secret = shown["webhook_secret"]
    status, masked, _ = await api.request("GET", "/api/v1/webhooks/call-secret", key=key)
    assert masked["webhook_secret_masked"].endswith(secret[-4:]) and masked["previous_secret_expires_at"] is None
    receiver = await Receiver().start()
    try:
        ids = {}
        for to in ("+14155550193", "+14155550002"):  # answered, busy
            code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={
                "agent_id": agent["id"], "to": to, "webhook_url": receiver.url})
            assert code == 201, call
            ids[to] = call["id"]
        got = await receiver.wait_for(2)
        by_call = {r["json"]["data"]["call_id"]: r for r in got.values()}
        completed, failed = by_call[ids["+14155550193"]], by_call[ids["+14155550002"]]
        assert completed["json"]["event"] == "call.completed" and completed["json"]["data"]["status"] == "completed"
        assert failed["json"]["event"] == "call.failed" and failed["json"]["data"]["status"] == "busy"
        for record in (completed, failed):
            assert verify(record["headers"]["X-Service-Signature"], record["body"], secret)
            assert record["json"]["data"]["webhook_url"] == receiver.url
    finally:
        await receiver.stop()


async def test_recordings_are_served_by_signed_expiring_links_with_ranges(api, account, agent, other_key, stack):
    key = account["key"]
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550194"})
    await settled(api, key, call["id"])
    status, rec, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": call["id"]})
    assert status == 200 and (rec["recording_status"], rec["transcript_status"]) == ("available", "available")
    url = rec["recording_url"]
    async with aiohttp.ClientSession() as session:  # no key: the link is the credential
        async with session.get(url) as r:
            whole = await r.read()
            assert r.status == 200 and r.headers["Content-Type"] == "audio/wav" and whole[:4] == b"RIFF"
            assert whole[8:12] == b"WAVE" and r.headers["Accept-Ranges"] == "bytes"
        async with session.get(url, headers={"Range": "bytes=100-199"}) as r:
            assert r.status == 206 and r.headers["Content-Range"] == f"bytes 100-199/{len(whole)}"
            assert await r.read() == whole[100:200]
        tampered = url[:-1] + ("1" if url.endswith("0") else "0")  # the signature's last digit changed
        async with session.get(tampered) as r:
            assert r.status == 401
        secret = stack.env()["RECORDING_LINKS_SECRET"]
        expires = int(time.time()) - 10
        signature = hmac.new(secret.encode(), f"{call['id']}.{expires}".encode(), hashlib.sha256).hexdigest()
        async with session.get(stack.base_url + "/api/v1/recordings/audio", params={
                "call_id": call["id"], "expires": str(expires), "signature": signature}) as r:
            body = await r.json()
            assert r.status == 401 and "expired" in body["error"]["message"]
    status, body, _ = await api.request("GET", "/api/v1/recordings", key=other_key, params={"call_id": call["id"]})
    assert status == 404
    code, unanswered, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                                    "to": "+14155550001"})
    await settled(api, key, unanswered["id"])
    status, rec, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": unanswered["id"]})
    assert (rec["recording_status"], rec["transcript_status"], rec["recording_url"]) == ("none", "none", None)
