"""NATS with identities, against the stack's real NATS (run with the registry's users, core.nats_auth): nobody
connects without an identity of its own, a process publishes only its own subjects, and what sits on the PROVIDER
stream is applied only with the gateway's proof (core.provider_proof)."""
import asyncio
import json
import uuid

import nats
import pytest
from nats.js.api import StreamInfo

from core import deadletters, provider_proof
from core.bus import PROVIDER_STREAM
from core.caller import KeyRing
from providers.payments.webhooks import EVENTS_SUBJECT
from services.accounts.billing.payments_service import EVENTS_CONSUMER
from tests.billing import signup, subscription, workspace
from tests.nats_admin import admin_connection
from tests.provider_webhooks import all_applied, payment_event, post_payment_event

DISPATCHER = "webhooks-dispatcher"  # delivers webhooks: it may only read EVENTS


def checkout_completed(business_id: str) -> dict:
    """The payment provider's word that the business paid its checkout (what would start its trial)."""
    return payment_event("checkout.session.completed", {
        "id": f"cs_test_{uuid.uuid4().hex}", "object": "checkout.session", "status": "complete",
        "client_reference_id": business_id, "metadata": {"business_id": business_id},
        "customer": f"cus_forged_{uuid.uuid4().hex[:8]}", "subscription": f"sub_forged_{uuid.uuid4().hex[:8]}"})


async def _provider_stream(stack) -> StreamInfo:
    nc = await admin_connection(stack)
    try:
        return await nc.jetstream().stream_info(PROVIDER_STREAM)
    finally:
        await nc.close()


async def test_an_anonymous_connection_is_refused(stack):
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):
        await nats.connect(stack.nats_url, allow_reconnect=False, connect_timeout=2)


async def test_another_process_cannot_publish_a_payment_event_or_a_teardown(stack):
    before = (await _provider_stream(stack)).state.messages
    refused: list[Exception] = []

    async def on_error(exc: Exception) -> None:
        refused.append(exc)

    nc = await nats.connect(stack.nats_url, error_cb=on_error, **stack.nats_login(DISPATCHER).options())
    admin = await admin_connection(stack)
    marker = f"forged-{uuid.uuid4().hex}"  # the gateways and accounts speak on these subjects too: ours must not pass
    heard: list[bytes] = []

    async def overheard(msg) -> None:
        heard.append(msg.data)

    try:
        await admin.subscribe("switchboard.>", cb=overheard)
        await admin.subscribe("events.workspace.teardown_completed", cb=overheard)
        await admin.flush()
        with pytest.raises((nats.errors.TimeoutError, nats.errors.NoRespondersError)):
            await nc.jetstream().publish(EVENTS_SUBJECT, json.dumps(checkout_completed(str(uuid.uuid4()))).encode(),
                                         timeout=1)
        await nc.publish("events.workspace.teardown_completed", marker.encode())
        await nc.publish("switchboard.ratelimit.taken", json.dumps({"replica": marker, "taken": {}}).encode())
        await nc.publish("switchboard.auth.invalidate", marker.encode())
        await nc.flush()
        await asyncio.sleep(0.5)
        assert {str(e).split('"')[1] for e in refused} == {
            EVENTS_SUBJECT, "events.workspace.teardown_completed", "switchboard.auth.invalidate",
            "switchboard.ratelimit.taken"}, refused
        assert all("permissions violation" in str(e).lower() for e in refused)
        assert not [data for data in heard if marker.encode() in data]  # nothing got through
        # nor may it listen to what it does not consume
        await nc.subscribe("switchboard.auth.invalidate")
        await nc.flush()
        await asyncio.sleep(0.3)
        assert any("subscription" in str(e).lower() for e in refused[4:]), refused
    finally:
        await nc.close()
        await admin.close()
    assert (await _provider_stream(stack)).state.messages == before


async def test_a_forged_payment_event_on_the_provider_stream_is_not_applied(api, stack, db):
    """Placed on the stream by an identity that may publish there (the test harness's), without the gateway's proof
    or with another process's signature: kept as dead letters with the refusal (core.deadletters), not applied. The
    same event through the gateway's webhook route, which verifies the provider's signature, is."""
    status, body, _ = await signup(api)
    assert status == 200, body
    key, bid = body["api_key"], body["business_id"]
    assert (await workspace(api, key, bid))["subscription_status"] == "incomplete"

    accounts_key = KeyRing.parse(stack.caller_keys()["accounts"][0], "")  # a process's key, not the gateway's
    forged = [checkout_completed(bid) for _ in range(3)]
    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()
        for event, proof in zip(forged, (None, "gateway:1=AAAA", "accounts"), strict=True):
            data, msg_id = json.dumps(event).encode(), event["id"]
            headers = {"Nats-Msg-Id": msg_id}
            if proof == "accounts":
                headers[provider_proof.HEADER] = provider_proof.sign(accounts_key, EVENTS_SUBJECT, msg_id, data)
            elif proof:
                headers[provider_proof.HEADER] = proof
            await js.publish(EVENTS_SUBJECT, data, stream=PROVIDER_STREAM, headers=headers)
    finally:
        await nc.close()
    await all_applied(stack, EVENTS_CONSUMER)  # terminated counts: nothing left for the consumer

    assert (await workspace(api, key, bid))["subscription_status"] == "incomplete"
    seen = await db.fetchval("SELECT count(*) FROM accounts.payment_events WHERE event_id = ANY($1::text[])",
                             [e["id"] for e in forged])
    assert seen == 0
    nc = await admin_connection(stack)
    try:
        dead = await deadletters.stored(nc.jetstream(), deadletters.Filter(stream=PROVIDER_STREAM,
                                                                           consumer=EVENTS_CONSUMER))
    finally:
        await nc.close()
    refused = {json.loads(letter.payload)["id"]: letter.error for _, letter in dead}
    assert all("without the gateway's proof" in refused[e["id"]] for e in forged), refused

    assert await post_payment_event(api, stack, checkout_completed(bid)) == (200, {"received": True})
    await subscription(api, key, bid, "trialing")
