"""What the messaging provider tells us: status callbacks of our texts and inbound texts, each verified by the
gateway (X-Twilio-Signature, gateway.routes.providers) before it reaches us.

A callback needs no answer: the gateway stores it on the PROVIDER stream and a consumer here applies each fetched
batch in stream order in one transaction (`apply_statuses`). It moves its message forward only (late, repeated
and reordered callbacks change nothing more) and emits sms.delivered or sms.failed once. An inbound text comes
over RPC, as its answer may carry a reply: it lands in its thread (the number's business, the sender), raises the
unread count and emits sms.received, all in one transaction with the consent evidence it carries: the carriers'
keywords opt out (STOP ...) or in (START ...) at once, any other text is conversational consent (the kind of
keyword is the provider's OptOutType when it sends one, Advanced Opt-Out's, else the word itself). Who answers the
keywords is a setting (SMS_PROVIDER_OPT_OUT, domain.KEYWORD_ANSWERERS): by default the provider does (Twilio's
default opt-out handling replies to STOP, START and HELP itself, so our TwiML answers them with nothing); with
`ours` (the provider's handling turned off) we answer them with TwiML (an opt-out is confirmed once, then
silence). The sdr service turns sms.received into a lead or an interaction (services.sdr.sms_consumer), so a text
is never lost to an sdr outage.
"""
from __future__ import annotations

from typing import Any

from core import tenant
from core.bus import PermanentError, business_event, subject_for
from core.contact import normalize_e164
from core.errors import ServiceError
from core.ids import is_uuid, new_id, utcnow
from core.messages import optional
from core.uow import UnitOfWork
from providers.messaging import signatures
from providers.messaging.adapter import carrier_error
from services.messaging import domain
from services.messaging.consent_service import evidence_of
from services.messaging.ports import Neighbours, NumberRoute
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.service import failed_event, ours, sent_event
from switchboard.v1 import events_pb2

ACTOR = "messaging-inbound"
CALLS_SUBJECT = subject_for("call.received")
CALLS_CONSUMER = "messaging-calls"
STATUS_CONSUMER = "messaging-sms-status"


class ProviderRequests:
    def __init__(self, uow: UnitOfWork[MessagingUnit], others: Neighbours, *, keywords_answered_by: str = "twilio"):
        if keywords_answered_by not in domain.KEYWORD_ANSWERERS:
            raise ValueError(f"keywords are answered by one of {domain.KEYWORD_ANSWERERS}")
        self.uow = uow
        self.others = others  # asked as the tenant set below (services.messaging.ports)
        self.keyword_replies = keywords_answered_by == "ours"  # else the provider answers them

    # -- status callbacks ------------------------------------------------------------------------

    async def apply_statuses(self, stored: list[Any]) -> None:
        """The PROVIDER stream's consumer: status callbacks as the gateway verified and stored them (`{message_id,
        params}`: our text's id from the callback URL we gave, else None, and the form), in order, in one
        transaction. One that can never apply is PermanentError (terminated)."""
        callbacks = [_callback(s) for s in stored]
        async with self.uow.transaction() as work:
            for message_id, params in callbacks:
                await apply_status(work, message_id, params)

    # -- inbound texts ---------------------------------------------------------------------------

    async def inbound(self, params: dict[str, str]) -> str:
        """Take in a text (its form, verified by the gateway); the TwiML to answer it with."""
        try:
            sender, number = normalize_e164(params.get("From", "")), normalize_e164(params.get("To", ""))
        except ServiceError:
            return signatures.twiml_reply([])  # a short code or an alphanumeric sender: nothing to thread
        sid, body = params.get("MessageSid", ""), params.get("Body", "")
        route = await self.others.agents.route(number)
        if route is None:
            return signatures.twiml_reply([])  # a number no business holds any more
        async with self.uow.read() as work:
            if await work.messages.message_by_sid(sid) is not None:
                return signatures.twiml_reply([])  # the provider sent it again: answered already
        with tenant.acting_as(tenant.acting_for(route.business_id, ACTOR)):
            lead = await self.others.leads.lead_with_phone(route.business_id, sender)
            lead_id = lead.id if lead else None
            reply = await self._take_in(route, sender, number, sid, body, lead_id, params.get("OptOutType"))
        return signatures.twiml_reply([reply] if reply else [])

    async def _take_in(self, route: NumberRoute, sender: str, number: str, sid: str, body: str, lead_id: str | None,
                       opt_out_type: str | None) -> str | None:
        kind = domain.keyword(body, opt_out_type)
        answer = kind is not None and self.keyword_replies
        now = utcnow()
        agent_id = route.agent_id
        before = None
        async with self.uow.transaction() as work:
            row = ours(await work.messages.add_to_thread(
                business_number=number, contact_number=sender, id=new_id(), business_id=route.business_id,
                direction="inbound", from_number=sender, to_number=number, body=body, status=domain.RECEIVED,
                provider_sid=sid, agent_id=agent_id, lead_id=lead_id, created_at=now, updated_at=now))  # no key: added
            if answer:  # whether this keyword changes anything (a second STOP is not confirmed again)
                before = domain.consent_state(
                    evidence_of(await work.consent.consent_history(route.business_id, sender)), now)
            await work.consent.add_consent(business_id=route.business_id, phone=sender,
                                           kind=kind if kind in ("opt_in", "opt_out") else "conversational",
                                           source="keyword" if kind in ("opt_in", "opt_out") else "inbound_text",
                                           actor=sender, reference=sid, created_at=now)
            work.emit(events_pb2.SmsReceived(
                message_id=row.id, conversation_id=row.conversation_id, message_sid=sid, to=number, body=body,
                agent_id=agent_id, lead_id=row.lead_id, keyword=kind,
                **{"from": sender}), route.business_id)
        if kind is None or not answer:
            return None
        business_name = await self.others.workspaces.business_name(route.business_id)
        already = before == ("opted_out" if kind == "opt_out" else "opted_in")
        return domain.keyword_reply(kind, business_name, already)

    # -- calls as consent evidence ---------------------------------------------------------------

    async def record_call(self, message: dict[str, Any]) -> None:
        """An inbound call (call.received) is conversational consent of its caller with that business."""
        event, call = business_event(message)
        assert isinstance(call, events_pb2.CallReceived) and event.business_id is not None  # the subject's
        caller = optional(call, "from")
        if not caller:
            return  # a withheld number
        async with self.uow.transaction() as work:
            history = await work.consent.consent_history(event.business_id, caller)
            if any(row.reference == call.call_id for row in history):
                return  # the event again
            await work.consent.add_consent(business_id=event.business_id, phone=caller, kind="conversational",
                                           source="inbound_call", actor=caller, reference=call.call_id,
                                           created_at=event.occurred_at)


def _callback(stored: object) -> tuple[str | None, dict[str, str]]:
    """A stored status callback as (our message id or None, its form); PermanentError when it is not one."""
    params = stored.get("params") if isinstance(stored, dict) else None
    if not isinstance(stored, dict) or not isinstance(params, dict) or not all(
            isinstance(v, str) for v in params.values()):
        raise PermanentError("a stored status callback is {message_id, params} with the form's text parameters")
    message_id = stored.get("message_id")
    return (message_id if isinstance(message_id, str) and is_uuid(message_id) else None), params


async def apply_status(work: MessagingUnit, message_id: str | None, params: dict[str, str]) -> bool:
    """Move our text forward as a status callback says (nothing for a text not ours, or a late status); whether it
    moved. The reconciliation applies what the provider answers about a text in the same form."""
    status, sid = params.get("MessageStatus", ""), params.get("MessageSid", "")
    row = await work.messages.message_for_callback(message_id, sid)
    if row is None or not domain.moves_forward(row.status, status):
        return False  # not ours, or late
    changes: dict[str, Any] = {"status": status, "updated_at": utcnow(),
                               "provider_sid": row.provider_sid or sid or None}
    if params.get("ErrorCode"):
        changes.update(error_code=params["ErrorCode"], error_message=carrier_error(params["ErrorCode"]))
    updated = ours(await work.messages.change_message(row.id, changes))
    if row.status == domain.UNKNOWN:  # the send's answer never came: this is the first word of it
        work.emit(sent_event(updated), updated.business_id)
    event = domain.event_of_status(status)
    if event == "sms.delivered":
        work.emit(events_pb2.SmsDelivered(
            message_id=updated.id, conversation_id=updated.conversation_id, message_sid=updated.provider_sid,
            to=updated.to_number, external_ref=updated.external_ref, touch_id=updated.touch_id,
            **{"from": updated.from_number}), updated.business_id)
    elif event == "sms.failed":
        work.emit(failed_event(updated), updated.business_id)
    return True
