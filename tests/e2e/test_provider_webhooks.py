"""The providers' webhooks, one pattern end to end: verified at the gateway (a forged one of any kind is refused
there and changes nothing), stored on the PROVIDER stream (a repeat is applied once; while NATS cannot store a
message the provider gets 503 and sends it again), and applied by the owning service, even when it was stopped
as the message came."""
import json
import time
from contextlib import contextmanager

import pytest

from providers.messaging.webhooks import INBOUND_PATH, STATUS_PATH
from providers.payments.webhooks import EVENTS_PATH, SIGNATURE_HEADER
from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.simulator.playback import sign
from services.accounts.billing.payments_service import EVENTS_CONSUMER
from services.calls.lifecycle_service import CONSUMER as CALLS_CONSUMER
from services.messaging.provider_service import STATUS_CONSUMER
from tests.billing import subscription_of, workspace
from tests.emails import owner_notices
from tests.provider_webhooks import all_applied, payment_event, post_payment_event, post_sms_status
from tests.texting import events_of, number, opt_in, send, settled_message
from tests.waiting import wait_until

MESSAGES = "/api/v1/providers/voice/messages"


async def queued_text(api, account, agent, sms, suffix: str) -> dict:
    """A text sent to a number of its own whose provider callbacks are all forged (refused), so that it stays
    queued until a test reports its status."""
    key = account["key"]
    to = number(suffix)
    await opt_in(api, key, to)
    assert (await sms.control("POST", "/callbacks", {"bad_signature": True}))[0] == 201
    status, sent, _ = await send(api, key, agent, to)
    assert status == 200, sent
    return sent


def delivered(sent: dict, agent: dict) -> dict[str, str]:
    """The form of the provider's `delivered` callback of a text."""
    return {"MessageSid": sent["message_sid"], "SmsSid": sent["message_sid"], "MessageStatus": "delivered",
            "SmsStatus": "delivered", "From": agent["phone_number"], "To": sent["to"], "ApiVersion": "2010-04-01"}


async def overdue(api, business_id: str, created: int | None = None) -> dict:
    """The provider's word that the business's subscription (its own, as the provider named it) is past due (grace
    0 in the tests: it pauses)."""
    return payment_event("customer.subscription.updated", {
        "id": await subscription_of(api, business_id), "object": "subscription", "status": "past_due",
        "metadata": {"business_id": business_id}}, created)


async def message_status(api, key, message_id: str) -> str:
    _, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key, params={"limit": "100"})
    [message] = [m for m in page["messages"] if m["id"] == message_id]
    return message["status"]


async def test_a_forged_webhook_of_any_kind_is_refused_at_the_gateway_and_changes_nothing(
        api, account, calling_agent, sms, voice, stack, db):
    key, bid, agent = account["key"], account["business_id"], calling_agent
    sent = await queued_text(api, account, agent, sms, "0161")

    # SMS status callback and inbound text: signed with another token, or not at all.
    refused = [await post_sms_status(api, stack, sent["message_id"], delivered(sent, agent), token="not-ours"),
               (await api.request("POST", f"{STATUS_PATH}?message_id={sent['message_id']}",
                                  data=delivered(sent, agent)))[:2],
               (await api.request("POST", INBOUND_PATH, data={"MessageSid": "SMforged", "From": sent["to"],
                                                               "To": agent["phone_number"], "Body": "STOP"},
                                  headers={"X-Twilio-Signature": "bm90IG91cnM="}))[:2]]
    for status, body in refused:
        assert status == 401 and body["error"]["code"] == "unauthorized", body

    # Payment event: signed with another secret, or too long ago.
    forged = await overdue(api, bid)
    for secret, at in (("whsec_not_ours", None), (None, time.time() - 3600)):
        status, body = await post_payment_event(api, stack, forged, secret=secret, signed_at=at)
        assert status == 401 and body["error"]["code"] == "unauthorized", body

    # Voice status update of a real call: signed with another secret.
    await voice.playback(silent=True)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": agent["id"],
                                                                               "to": "+14155550196"})
    assert code == 201, call
    update = json.dumps({"message": {"type": "status-update", "status": "in-progress", "call": {
        "id": call["conversation_id"], "assistantOverrides": {"metadata": {"switchboard_call_id": call["id"]}}}}}
                        ).encode()
    status, body, _ = await api.request("POST", MESSAGES, data=update, headers={
        "Content-Type": "application/json", **sign(WebhookAuth("hmac", "not-ours").plan(), update, time.time())})
    assert status == 401 and body["error"]["code"] == "unauthorized", body

    # Nothing was stored, so once the owners have applied all they hold, nothing moved.
    for durable in (STATUS_CONSUMER, EVENTS_CONSUMER, CALLS_CONSUMER):
        await all_applied(stack, durable)
    assert await message_status(api, key, sent["message_id"]) == "queued"
    _, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": sent["to"]})
    assert consent["state"] == "opted_in"
    ws = await workspace(api, key, bid)
    assert (ws["subscription_status"], ws["lifecycle_state"]) == ("trialing", "active")
    assert await db.fetchval("SELECT count(*) FROM accounts.payment_events WHERE event_id = $1", forged["id"]) == 0
    _, now, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert now["status"] == "queued"


async def test_a_webhook_is_verified_before_its_body_is_read_as_json(api):
    """An unsigned or badly signed request is refused for its signature whatever its body: the gateway parses no
    JSON it has not verified, and reads no body past the route's limit."""
    not_json = b'{"message": ' + b"[" * 5000
    voice_headers = {"Content-Type": "application/json",
                     **sign(WebhookAuth("hmac", "not-ours").plan(), not_json, time.time())}
    for path, headers in ((MESSAGES, voice_headers), (MESSAGES, {"Content-Type": "application/json"}),
                          (EVENTS_PATH, {"Content-Type": "application/json", SIGNATURE_HEADER: "t=1,v1=00"}),
                          (EVENTS_PATH, {"Content-Type": "application/json"})):
        status, body, _ = await api.request("POST", path, data=not_json, headers=headers)
        assert status == 401 and body["error"]["code"] == "unauthorized", (path, body)
    status, body, _ = await api.request("POST", EVENTS_PATH, data=b"{" + b" " * (2 * 1024 * 1024) + b"}",
                                        headers={"Content-Type": "application/json"})
    assert status == 400 and "larger than 1024 KiB" in body["error"]["message"], body


async def test_the_same_status_callback_or_payment_event_twice_is_applied_once(
        api, account, calling_agent, sms, stack):
    key, agent = account["key"], calling_agent
    sent = await queued_text(api, account, agent, sms, "0162")
    for _ in range(2):
        assert await post_sms_status(api, stack, sent["message_id"], delivered(sent, agent)) == (200, None)
    assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
    await all_applied(stack, STATUS_CONSUMER)
    assert len(await events_of(api, key, "sms.delivered", sent["message_id"])) == 1

    await api.confirm_address(stack, account["email"])
    ending = payment_event("customer.subscription.trial_will_end", {
        "id": "sub_trial", "object": "subscription", "status": "trialing", "trial_end": int(time.time()) + 3 * 86400,
        "metadata": {"business_id": account["business_id"]}})
    for _ in range(2):
        assert await post_payment_event(api, stack, ending) == (200, {"received": True})
    await wait_until(lambda: owner_notices(api, key, "trial"), "the owner's e-mail about the trial's end")
    await all_applied(stack, EVENTS_CONSUMER)
    assert len(await owner_notices(api, key, "trial")) == 1


@pytest.fixture
def stopped(stack):
    """`with stopped(name):` the service is down inside the block, and up and ready again after it."""
    @contextmanager
    def stop(name: str):
        process = stack.process(name)
        stack.stop_process(process)
        try:
            yield
        finally:
            stack.spawn(process)
            stack.wait_ready(30)
    return stop


async def test_a_payment_event_stored_while_accounts_is_down_is_applied_once_it_is_back(
        api, account, stack, stopped):
    key, bid = account["key"], account["business_id"]
    with stopped("accounts"):
        assert await post_payment_event(api, stack, await overdue(api, bid)) == (200, {"received": True})
    ws = await wait_until(lambda: workspace(api, key, bid), "the stored event to pause the workspace",
                          lambda ws: ws["lifecycle_state"] == "paused", timeout=20)
    assert ws["subscription_status"] == "past_due"


async def test_a_status_callback_stored_while_messaging_is_down_is_applied_once_it_is_back(
        api, account, calling_agent, sms, stack, stopped):
    key, agent = account["key"], calling_agent
    sent = await queued_text(api, account, agent, sms, "0163")
    with stopped("messaging"):
        assert await post_sms_status(api, stack, sent["message_id"], delivered(sent, agent)) == (200, None)
    assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
    assert await events_of(api, key, "sms.delivered", sent["message_id"])


async def test_while_nats_cannot_store_them_callbacks_and_events_get_503_and_apply_when_sent_again(
        api, account, calling_agent, sms, stack):
    """The gateway answers only once JetStream stored the message: while NATS is down the provider is told 503, so
    nothing is acknowledged and lost. (The payment provider sends it again; Twilio, with its default connection
    settings, does not resend an answered status callback: the test sends it again itself.)"""
    if stack.nats is None:
        pytest.skip("NATS_URL points at an external server this test cannot stop")
    key, bid, agent = account["key"], account["business_id"], calling_agent
    sent = await queued_text(api, account, agent, sms, "0164")
    event = await overdue(api, bid)
    port = stack.nats.port
    stack.nats.stop()
    try:
        status, body = await post_sms_status(api, stack, sent["message_id"], delivered(sent, agent))
        assert status == 503 and body["error"]["code"] == "unavailable", body
        status, body = await post_payment_event(api, stack, event)
        assert status == 503 and body["error"]["code"] == "unavailable", body
    finally:
        stack.nats.start(port=port)
    # sent again, as the payment provider retries, until the gateway is connected again
    await wait_until(lambda: post_sms_status(api, stack, sent["message_id"], delivered(sent, agent)),
                     "the gateway to store the status callback", lambda answer: answer[0] == 200)
    await wait_until(lambda: post_payment_event(api, stack, event), "the gateway to store the payment event",
                     lambda answer: answer[0] == 200)
    assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
    await wait_until(lambda: workspace(api, key, bid), "the event to pause the workspace",
                     lambda ws: ws["lifecycle_state"] == "paused", timeout=20)
    stack.wait_ready(30)
