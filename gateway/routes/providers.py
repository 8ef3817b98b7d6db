"""The providers' webhooks (voice, SMS, payments), all one pattern: verify at the edge, store, apply in the owner.

Each request is verified here with the provider's own check (the voice provider's webhook credential, Twilio's
X-Twilio-Signature through the `twilio` package, Stripe's Stripe-Signature through the `stripe` package), over the
raw body before any of it is read as JSON (Route.verify); one that fails it is refused (401), nothing parsed and
nothing stored. A message that needs no answer is then stored on the PROVIDER
stream (core.bus: acknowledged by JetStream before the provider gets its 2xx, deduplicated by the provider's own
identity of the message) and the service that owns it applies it from its durable consumer; when NATS does not
take it the provider gets 503 unavailable and sends it again. A message whose answer the provider uses (a voice
assistant-request, tool-calls or transfer-destination-request, an inbound text whose TwiML may carry the STOP/HELP
reply) is forwarded, verified, to its owner over RPC.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from core.errors import ServiceError
from core.settings import Settings
from gateway.route import PUBLIC, Reply, RequestContext, Route
from gateway.routes.calls import CALLS
from gateway.routes.messaging import MESSAGING
from gateway.schemas import PAYMENT_EVENT, PROVIDER_MESSAGE, UUID
from providers.messaging import signatures
from providers.messaging.webhooks import INBOUND_PATH, STATUS_PATH, STATUS_SUBJECT, status_identity
from providers.payments import webhooks as payment_webhooks
from providers.voice.vapi.server_messages import (
    ANSWERED_TYPES,
    AUTH_HEADERS,
    MESSAGES_PATH,
    QUEUED_SUBJECT,
    QUEUED_TYPES,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookAuth,
    message_of,
)
from switchboard.v1 import calls_pb2, messaging_pb2

FORM = "application/x-www-form-urlencoded"


async def _store(ctx: RequestContext, subject: str, body: bytes, message_id: str) -> None:
    """Store a verified message on the PROVIDER stream for its owner; 503 unavailable (the provider sends it again)
    when NATS does not take it. A repeat of `message_id` within the stream's duplicate window is stored once."""
    try:
        await ctx.deps.bus.receive(subject, body, message_id)
    except ConnectionError:
        raise ServiceError("unavailable", "the message could not be stored now; send it again") from None


def _body_hash(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


# -- the voice provider -----------------------------------------------------------------------------------

def voice_refusal(settings: Settings, headers: Mapping[str, str], body: bytes) -> str | None:
    """Why a server message does not carry our webhook credential (Route.verify: checked before it is parsed)."""
    present = {name: headers[name] for name in AUTH_HEADERS if name in headers}
    return WebhookAuth.of(settings).refusal(body, present, time.time())


async def voice_message(ctx: RequestContext) -> Reply:
    """A verified message (voice_refusal): a status update or end-of-call report is stored (the calls service
    applies it in a batch with others); an assistant-request, tool-calls or transfer-destination-request goes to the
    calls service now, for its answer; any other message is acknowledged here."""
    body = await ctx.request.read()
    kind = message_of(ctx.body)["type"]
    if kind in ANSWERED_TYPES:
        reply = await ctx.rpc("calls").HandleProviderMessage(calls_pb2.ProviderMessage(body=body))
        answer: dict[str, Any] = json.loads(reply.response_json)
        return answer
    if kind in QUEUED_TYPES:
        await _store(ctx, QUEUED_SUBJECT, body, _body_hash(body))  # the provider's messages carry no id of their own
    return {}


# -- the messaging (SMS) provider ---------------------------------------------------------------------------

async def _verified_form(ctx: RequestContext) -> dict[str, str]:
    """The provider's form parameters, once its signature holds over our public URL of the path and query it
    requested and every parameter."""
    if ctx.request.can_read_body and ctx.request.content_type != FORM:
        raise ServiceError("invalid_request", f"the messaging provider's requests are {FORM}")
    form = await ctx.request.post()
    params = {k: v for k, v in form.items() if isinstance(v, str)}
    settings = ctx.deps.settings
    if not signatures.is_valid(settings.sms_auth_token.reveal(), settings.public_base_url + ctx.request.path_qs,
                               params, ctx.request.headers.get(signatures.SIGNATURE_HEADER, "")):
        raise ServiceError("unauthorized", f"the {signatures.SIGNATURE_HEADER} header does not match this request: "
                           "it is not from our messaging provider")
    return params


async def sms_status(ctx: RequestContext) -> Reply:
    params = await _verified_form(ctx)
    stored = json.dumps({"message_id": ctx.query.get("message_id"), "params": params}, sort_keys=True).encode()
    await _store(ctx, STATUS_SUBJECT, stored, status_identity(params) or _body_hash(stored))
    return web.Response(text="", content_type=signatures.TWIML)


async def sms_inbound(ctx: RequestContext) -> Reply:
    params = await _verified_form(ctx)
    reply = await ctx.rpc("messaging").HandleInboundMessage(messaging_pb2.ProviderRequest(params=params))
    return web.Response(text=reply.body, content_type=reply.content_type)


# -- the payment provider -----------------------------------------------------------------------------------

def payment_refusal(settings: Settings, headers: Mapping[str, str], body: bytes) -> str | None:
    """Why an event is not signed by the payment provider (Route.verify: checked before it is parsed)."""
    why = payment_webhooks.signature_refusal(body, headers.get(payment_webhooks.SIGNATURE_HEADER, ""),
                                             settings.payments_webhook_secret.reveal())
    return f"payment webhook refused: {why}" if why else None


async def payment_event(ctx: RequestContext) -> Reply:
    """A verified event (payment_refusal), stored for the accounts service."""
    body = await ctx.request.read()
    try:
        event = payment_webhooks.event_of(body)
    except payment_webhooks.InvalidWebhook as exc:
        raise ServiceError("invalid_request", f"payment webhook refused: {exc}") from None
    await _store(ctx, payment_webhooks.EVENTS_SUBJECT, body, event["id"])
    return {"received": True}


STORED = ("Once verified it is stored (the answer waits until it is: a 2xx means it will be applied, in its "
          "owner's own time, even across restarts) and applied moments later, so a read right after may not show "
          "it yet; when it cannot be stored the answer is 503 unavailable and the provider sends it again.")
_TEXT = {"type": "string"}
STATUS_FORM = {"type": "object", "properties": {k: _TEXT for k in (
    "MessageSid", "MessageStatus", "AccountSid", "From", "To", "ErrorCode")}, "required": ["MessageSid",
                                                                                        "MessageStatus"]}
INBOUND_FORM = {"type": "object", "properties": {k: _TEXT for k in (
    "MessageSid", "AccountSid", "From", "To", "Body", "NumMedia")}, "required": ["MessageSid", "From", "To", "Body"]}
SIGNED = ("Called by the messaging provider, not by API clients: a form POST signed with X-Twilio-Signature "
          "(HMAC-SHA1 of the URL and the sorted parameters under the account's auth token); anything else is 401.")
ROUTES = [
    Route("POST", MESSAGES_PATH, voice_message, "The voice provider's server messages", "providers",
          auth=PUBLIC, body=PROVIDER_MESSAGE, verify=voice_refusal, response="ProviderMessageAnswer",
          errors=("unauthorized", "invalid_request", "unavailable"), rpcs=(f"{CALLS}/HandleProviderMessage",),
          description="Called by the voice provider, not by API clients: assistant requests for inbound calls, "
          "status updates and end-of-call reports, authenticated by our webhook credential: by default signed "
          f"(hex HMAC-SHA256 over '<{TIMESTAMP_HEADER}>.<raw body>' in {SIGNATURE_HEADER}, the Unix time in "
          f"{TIMESTAMP_HEADER}), or with VOICE_WEBHOOK_AUTH=bearer our token in Authorization: Bearer (then the "
          "body's message.timestamp dates it). Only the configured way is accepted, and a message more than 5 "
          "minutes off is refused (401). An assistant-request is answered with the number's agent "
          "({assistantId, assistantOverrides}) or {error} for a number no agent answers. A tool-calls message (the "
          "model called the agent's tools) is answered with {results: [{toolCallId, result}]}, a result per tool "
          "call: each runs once per toolCallId (a repeated delivery gets the first result), a custom tool within its "
          "timeout_ms, and a message about no call of ours runs nothing. A transfer-destination-request (the agent "
          "transfers the call with a transfer_call that names no destination) is answered with the business's "
          "phone_forward_to as a number destination, warm or blind as the tool says ({destination: {type: number, "
          "number, message, transferPlan}}), or {error} with words the assistant says when there is none, the agent "
          "no longer has the tool, or the call is not ours. A status update or an "
          "end-of-call report is acknowledged with {}. " + STORED + " Status updates move their call forward "
          "only and a report applies once, so duplicated and reordered messages are harmless. Other message types "
          "(conversation-update, speech-update, hang, user-interrupted and the rest of the provider's defaults) "
          "are acknowledged with {} at once, nothing stored."),
    Route("POST", STATUS_PATH, sms_status, "The messaging provider's status callbacks", "providers",
          auth=PUBLIC, query={"type": "object", "properties": {"message_id": UUID}}, form=STATUS_FORM,
          media=signatures.TWIML, errors=("unauthorized", "invalid_request", "unavailable"),
          description=SIGNED + " Acknowledged with an empty body. " + STORED + " A callback moves its text forward "
          "only (late, repeated and reordered callbacks change nothing more), emitting sms.delivered or sms.failed "
          "once."),
    Route("POST", INBOUND_PATH, sms_inbound, "The messaging provider's inbound texts", "providers", auth=PUBLIC,
          form=INBOUND_FORM, media=signatures.TWIML, errors=("unauthorized", "invalid_request"),
          rpcs=(f"{MESSAGING}/HandleInboundMessage",),
          description=SIGNED + " Threaded at once, as its answer may carry a reply. STOP, STOPALL, UNSUBSCRIBE, "
          "CANCEL, END, QUIT, REVOKE and OPTOUT opt out, START, YES and UNSTOP opt in, HELP and INFO ask for help "
          "(or the kind the provider's OptOutType names); any other text is conversational consent. The provider "
          "answers the keywords itself by default (SMS_PROVIDER_OPT_OUT=twilio: the TwiML is empty); with "
          "SMS_PROVIDER_OPT_OUT=ours the TwiML carries our replies (an opt-out confirmed once, then silence)."),
    Route("POST", payment_webhooks.EVENTS_PATH, payment_event, "The payment provider's webhook events", "providers",
          auth=PUBLIC, body=PAYMENT_EVENT, verify=payment_refusal, response="PaymentEventReceived",
          errors=("unauthorized", "invalid_request", "unavailable"),
          description="Called by the payment provider (Stripe's event objects), not by API clients. Each event is "
          "verified with its Stripe-Signature header (HMAC-SHA256 with our webhook secret, at most 5 minutes "
          "old; otherwise 401) and acknowledged with {received: true}. " + STORED + " Each event is applied "
          "once (a redelivered one changes nothing) and events may come late or out of order: a subscription's "
          "status is only set by an event newer than the one that set it, and canceled is final. "
          "checkout.session.completed starts provisioning; customer.subscription.* and invoice.paid / "
          "invoice.payment_failed keep subscription_status (incomplete, trialing, active, past_due, canceled) and "
          "move the workspace: past_due longer than the grace period (PAYMENT_GRACE_HOURS, 72 by default) or a "
          "trial ended without a completed checkout pauses it (workspace.paused, reason payment_overdue or "
          "trial_ended_unpaid) until it is paid again; a canceled subscription cancels it (workspace.canceled, "
          "reason subscription_canceled)."),
]
