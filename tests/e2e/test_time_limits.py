"""A slow provider holds no request past its route's time limit (`x-time-limit-seconds` in the OpenAPI document,
core.deadlines): the answer is 504 `timeout` by then, and what the request started goes on to its end and is
recorded (a text whose send outlived the request is sent, never failed nor sent twice)."""
import time
import uuid

import pytest

from core import registry
from deploy.local.servers import free_port, wait_for_port
from deploy.local.stack import Process
from tests.api import Api
from tests.texting import events_of, message_to, number, opt_in, text_settled, texts_to


@pytest.fixture
async def patient(stack, api):
    """A gateway replica whose texts go to a messaging replica that would wait 30 s for the provider's answer
    (SMS_TIMEOUT_SECONDS): only the deadlines stop a slow provider there."""
    port = free_port()
    messaging = Process(f"messaging-patient-{uuid.uuid4().hex[:6]}", "services.messaging", port,
                        registry.SECRETS["messaging"], env={"MESSAGING_GRPC_PORT": str(port), "SMS_TIMEOUT_SECONDS": "30"})
    stack.processes.append(messaging)
    stack.spawn(messaging)
    started = [messaging]
    try:
        wait_for_port(port, 30, messaging.proc, messaging.name, messaging.log)
        started.append(stack.add_gateway(f"gateway-patient-{uuid.uuid4().hex[:6]}",
                                         {"MESSAGING_ADDR": f"127.0.0.1:{port}"}))
        yield Api(api.session, f"http://127.0.0.1:{started[-1].port}")
    finally:
        for process in reversed(started):
            stack.stop_process(process)
            stack.processes.remove(process)


async def test_a_send_the_provider_holds_answers_at_the_routes_limit_and_the_text_goes_out_once(
        api, patient, stack, account, sms, calling_agent):
    status, document, _ = await api.request("GET", "/api/v1/openapi.json")
    limit = document["paths"]["/api/v1/sms/send"]["post"]["x-time-limit-seconds"]
    key, to = account["key"], number("0176")
    await opt_in(api, key, to)
    status, body = await sms.control("POST", "/faults", {
        "method": "POST", "path": "/2010-04-01/Accounts", "status": 0, "times": 1, "delay_seconds": limit + 2,
        "hold": "request"})  # the provider takes the text only after the route's limit
    assert status == 201, body
    text = {"to": to, "from_agent_id": calling_agent["id"], "message": "Your quote is ready."}
    idempotency = {"Idempotency-Key": f"slow-{uuid.uuid4()}"}
    began = time.monotonic()
    status, body, _ = await patient.request("POST", "/api/v1/sms/send", key=key, headers=idempotency, json=text)
    took = time.monotonic() - began
    assert status == 504 and body["error"]["code"] == "timeout", body
    assert took < limit + 0.5, f"answered after {took:.1f} s; the route's limit is {limit} s"
    assert f"{limit:g} s" in body["error"]["message"] and "Idempotency-Key" in body["error"]["message"]
    # The send goes on: still pending (neither failed nor unknown) while the provider holds it, then sent.
    assert (await message_to(api, key, to))["status"] == "pending"
    sent = await text_settled(api, key, to, ("queued", "sending", "sent", "delivered"), timeout=limit + 10)
    assert sent["message_sid"], sent
    assert len(await events_of(api, key, "sms.sent", sent["id"])) == 1
    assert await events_of(api, key, "sms.failed", sent["id"], expected=0) == []
    # A retry with the key answers that text; the provider took one text.
    status, again, _ = await patient.request("POST", "/api/v1/sms/send", key=key, headers=idempotency, json=text)
    assert status == 200 and again["message_id"] == sent["id"], again
    assert len(await texts_to(stack, to)) == 1
