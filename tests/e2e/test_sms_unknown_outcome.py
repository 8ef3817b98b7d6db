"""A text whose send timed out after the provider took it: recorded `unknown`, never `failed` (it may have gone out);
a retry with the same Idempotency-Key answers that text instead of texting again; its outcome comes from the
provider's callback, or, when no callback gets through, from asking the provider (the reconciliation). A text whose
status callbacks were all lost (the provider does not resend one we refused) is settled by asking the provider too."""
import uuid

import pytest

from tests.texting import events_of, message_to, number, opt_in, send, text_settled

TIMEOUT = 5.0  # SMS_TIMEOUT_SECONDS' default: the provider holds its answer back longer


async def slow_answer(sms) -> None:
    status, body = await sms.control("POST", "/faults", {
        "method": "POST", "path": "/2010-04-01/Accounts", "status": 0, "times": 1, "delay_seconds": TIMEOUT + 1.5,
        "hold": "answer"})
    assert status == 201, body


async def provider_sends(sms) -> int:
    status, log = await sms.control("GET", "/log?path=/2010-04-01/Accounts&method=POST")
    return len(log) if isinstance(log, list) else 0


async def test_a_send_whose_answer_never_came_is_unknown_and_a_retry_with_its_key_texts_no_one_twice(
        api, account, sms, calling_agent):
    key, to, idempotency = account["key"], number("0174"), {"Idempotency-Key": f"quote-{uuid.uuid4()}"}
    await opt_in(api, key, to)
    status, body = await sms.control("POST", "/callbacks", {"bad_signature": True})
    assert status == 201, body  # every callback of the next send is refused as forged: nothing tells us
    await slow_answer(sms)
    text = {"to": to, "from_agent_id": calling_agent["id"], "message": "Your quote is ready."}
    status, body, _ = await api.request("POST", "/api/v1/sms/send", key=key, headers=idempotency, json=text)
    assert status == 500 and body["error"]["code"] == "sms_send_failed", body
    assert "may have gone out" in body["error"]["message"] and "Idempotency-Key" in body["error"]["message"]
    unknown = await message_to(api, key, to)
    assert unknown["status"] == "unknown"
    sends = await provider_sends(sms)
    # The retry with the key: the same text as it is now, and nothing more sent.
    status, again, _ = await api.request("POST", "/api/v1/sms/send", key=key, headers=idempotency, json=text)
    assert status == 200 and again["message_id"] == unknown["id"], again
    assert await provider_sends(sms) == sends
    # The reconciliation asks the provider, finds the text and records it as sent.
    found = await text_settled(api, key, to, ("queued", "sending", "sent", "delivered"))
    assert found["message_sid"], found
    [sent] = await events_of(api, key, "sms.sent", found["id"])
    assert sent["data"]["message_sid"] == found["message_sid"]
    # Never failed, though the send did: no sms.failed came before the sms.sent.
    assert await events_of(api, key, "sms.failed", unknown["id"], expected=0) == []


async def test_a_callback_that_comes_before_the_late_answer_settles_the_send(
        api, account, sms, calling_agent):
    key, to = account["key"], number("0175")
    await opt_in(api, key, to)
    await slow_answer(sms)  # the callbacks come within the wait: the platform knows the text went out
    status, sent, _ = await send(api, key, calling_agent, to)
    assert status == 200 and sent["success"] and sent["message_sid"], sent
    assert await events_of(api, key, "sms.sent", sent["message_id"])


@pytest.fixture
async def checking_soon(stack):
    """A messaging replica that asks the provider about a text no callback settled half a second after its last
    change (the stack's own waits SMS_STATUS_CHECK_AFTER_SECONDS' ten minutes)."""
    replica = stack.add_replica("messaging", f"messaging-checks-{uuid.uuid4().hex[:6]}",
                                {"SMS_STATUS_CHECK_AFTER_SECONDS": "0.5"})
    try:
        yield replica
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)


async def test_a_text_whose_callbacks_were_all_lost_is_settled_by_asking_the_provider(
        api, account, sms, calling_agent, checking_soon):
    key, to = account["key"], number("0190")
    await opt_in(api, key, to)
    status, body = await sms.control("POST", "/callbacks", {"bad_signature": True})
    assert status == 201, body  # every callback of the next send is refused, and the provider does not resend them
    status, sent, _ = await send(api, key, calling_agent, to)
    assert status == 200, sent
    found = await text_settled(api, key, to, ("delivered",), timeout=20)
    assert found["id"] == sent["message_id"]
    [delivered] = await events_of(api, key, "sms.delivered", sent["message_id"])
    assert delivered["data"]["message_sid"] == sent["message_sid"]
