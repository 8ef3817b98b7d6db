"""The providers' webhooks as the tests send them (signed the way each provider signs), and waiting until the
owning service has applied what the gateway stored on the PROVIDER stream."""
import json
import time
import uuid

from nats.js.errors import NotFoundError

from core.bus import PROVIDER_STREAM
from providers.messaging import signatures
from providers.messaging.webhooks import STATUS_PATH
from providers.payments.webhooks import EVENTS_PATH, SIGNATURE_HEADER, sign_payload
from tests.nats_admin import admin_connection
from tests.waiting import wait_until


async def all_applied(stack, durable: str, timeout: float = 20) -> None:
    """Once the owner's consumer `durable` of the PROVIDER stream has applied (acknowledged) every message stored
    for it so far."""
    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()

        async def outstanding() -> int | None:
            try:
                info = await js.consumer_info(PROVIDER_STREAM, durable)
            except NotFoundError:  # the service has not subscribed yet (it does within a second of its start)
                return None
            return info.num_pending + info.num_ack_pending
        await wait_until(outstanding, f"{durable} to apply what the gateway stored", lambda n: n == 0,
                         timeout=timeout)
    finally:
        await nc.close()


async def post_sms_status(api, stack, message_id: str, params: dict[str, str], token: str | None = None):
    """A status callback of our text `message_id` as the messaging provider posts it, signed with the stack's auth
    token (or `token`); the answer's status and body."""
    path = f"{STATUS_PATH}?message_id={message_id}"
    env = stack.env()
    signature = signatures.sign(token or env["SMS_AUTH_TOKEN"], env["PUBLIC_BASE_URL"] + path, params)
    return (await api.request("POST", path, data=params, headers={signatures.SIGNATURE_HEADER: signature}))[:2]


def payment_event(kind: str, obj: dict, created: int | None = None) -> dict:
    """A payment provider's event of a kind of our own making (a fresh id)."""
    return {"id": f"evt_test_{uuid.uuid4().hex}", "object": "event", "type": kind, "api_version": "2024-06-20",
            "created": created or int(time.time()), "livemode": False, "data": {"object": obj}}


async def post_payment_event(api, stack, event: dict, secret: str | None = None, signed_at: float | None = None):
    """`event` as the payment provider posts it, signed with the stack's webhook secret (or `secret`, at
    `signed_at`); the answer's status and JSON body."""
    body = json.dumps(event).encode()
    signature = sign_payload(body, secret or stack.env()["PAYMENTS_WEBHOOK_SECRET"], int(signed_at or time.time()))
    return (await api.request("POST", EVENTS_PATH, data=body, headers={
        "Content-Type": "application/json", SIGNATURE_HEADER: signature}))[:2]
