"""Sending texts and reading the threads.

A send asks the outbound compliance decision (do-not-call lists, a lead marked do_not_contact, consent, the
frequency caps over every call and text of the ledger, the quiet hours of every zone the recipient may be in and of
their state) under the recipient's lock, in the transaction that writes the message: its answers come in the order
most useful to the sender: a legal refusal (number_on_dnc, number_opted_out), then the content rules
(content_blocked), then a deferral for the time (tcpa_violation, with when texting opens). A refusal or deferral
is logged and answered with its code and what to do. An allowed send writes the message to its thread as `pending`
with its decision logged and its touch counted, in one short transaction,
hands it to the provider with no transaction held, and records the provider's answer: its sid and status with
`sms.sent`, or `failed` with `sms.failed` and a 500 sms_send_failed. A refusal because the recipient replied STOP
to the sender at the provider (Twilio's 21610: its own opt-out handling, which our consent history may not know of,
e.g. an opt-in recorded through the API after the STOP) also records their opt-out (source `provider`) in the same
transaction and answers 400 number_opted_out, so the next send is refused by our own check; a text the provider
refused frees its slot in the ledger (one of unknown outcome stays counted). The provider's status
callbacks then move
the message forward (services.messaging.provider_service). The callback URL carries our message id, so a
callback that overtakes the provider's answer still finds its message.

A caller that can wait (a communication run) places its texts (PlaceSms): a deferral is then its answer, as data,
instead of an error. A send with an idempotency key claims the key with its message (one insert, the first wins);
a send whose key already names a message of the business answers with that message as it stands (even pending:
its first send may still be at the provider), or with the provider's refusal again when the provider refused it (a
replay answers what the first send did), with no second text and no new decision. The message keeps the run's
reference and touch id, and its sms.* events carry them. An agent's send_sms or send_link (actor agent_tool) may
name the call on which the recipient asked for the text: their asking is conversational consent (source
call_request), recorded in the send's transaction before the decision, where an explicit opt-out still wins.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from contracts import messaging as messaging_contract
from core import tenant
from core.compliance import decision as compliance
from core.compliance import zones
from core.compliance.rules import SMS, Hours
from core.contact import normalize_e164
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.standings import Standings, carried_only
from core.text import optional_text
from core.to_completion import to_completion
from core.uow import UnitOfWork
from providers.messaging.adapter import UNSUBSCRIBED_RECIPIENT, MessagingProvider, ProviderError
from providers.messaging.webhooks import STATUS_PATH
from providers.status import provider_status
from services.messaging import domain
from services.messaging.compliance_service import Compliance
from services.messaging.ports import Lead, Neighbours
from services.messaging.records import LoggedDecision, Message
from services.messaging.repositories.unit import MessagingUnit
from switchboard.v1 import events_pb2

CONVERSATIONS_PAGE = MESSAGES_PAGE = (50, 100)
PROVIDER_ACTOR = "messaging-provider"  # who recorded an opt-out the provider told us of
CALL_REQUEST = "call_request"  # the consent source of a recipient who asked for the text on a call


@dataclass(frozen=True)
class NewText:
    """An outbound text as a client asks for it (unchecked)."""

    to: str
    agent_id: str
    body: str
    lead_id: str | None = None
    idempotency_key: str | None = None
    callee_timezone: str | None = None  # where the caller says the callee is
    actor: str | None = None  # who sends, for the decision log: sms when None, run, pipeline
    reference: str | None = None  # what the decision is about: the message id when None
    external_ref: str | None = None  # a communication run's reference and the touch's id, for its events
    touch_id: str | None = None
    business_hours: tuple[int, int] | None = None  # (start, end hour): the business's own window (a run's text)
    requested_on_call: str | None = None  # the call on which the recipient asked for it (an agent's tool's text)


@dataclass(frozen=True)
class Sent:
    message: Message
    from_number: str


def checked(new: NewText) -> NewText:
    """The request with its number in E.164, its zone and actor checked and its free texts trimmed."""
    actor = new.actor or "sms"
    if actor not in compliance.SMS_ACTORS:
        raise invalid(f"actor of a text must be one of {', '.join(compliance.SMS_ACTORS)}")
    if new.requested_on_call is not None and actor != compliance.AGENT_TOOL:
        raise invalid(f"requested_on_call is for a text an agent's tool sends during a call (actor "
                      f"{compliance.AGENT_TOOL})")
    return replace(
        new, to=normalize_e164(new.to, "to"), actor=actor,
        callee_timezone=zones.check_zone(new.callee_timezone, "callee_timezone") if new.callee_timezone else None,
        idempotency_key=optional_text(new.idempotency_key, "idempotency_key", domain.IDEMPOTENCY_KEY_MAX),
        reference=optional_text(new.reference, "reference", domain.REFERENCE_MAX),
        external_ref=optional_text(new.external_ref, "external_ref", domain.REFERENCE_MAX),
        touch_id=optional_text(new.touch_id, "touch_id", domain.REFERENCE_MAX),
        requested_on_call=require_uuid(new.requested_on_call, "requested_on_call") if new.requested_on_call else None)


def same_text(earlier: Message, text: NewText, sender: str) -> Sent:
    """What the send that wrote the message an idempotency key already names answered, if it was this text (else 409
    conflict): a replay answers as the first send did, errors included. A message the provider refused (failed with
    no sid) is that refusal again; any other is the message as it stands (even pending or unknown: its first send
    may still be at the provider, and the replay is how a caller learns what became of it)."""
    if (earlier.to_number, earlier.body, earlier.from_number) != (text.to, text.body, sender):
        raise ServiceError("conflict", "this idempotency_key was used for another text (recipient, sender or "
                           "body); use a new key for a new text")
    if earlier.status == "failed" and not earlier.provider_sid:
        raise provider_refusal(earlier.to_number, sender, earlier.error_code, earlier.error_message or "")
    return Sent(earlier, sender)


def provider_refusal(to: str, sender: str, code: str | int | None, why: str) -> ServiceError:
    """The error a text the provider refused is answered with (`code`, `why`: the provider's): number_opted_out
    when the recipient replied STOP to the sender there, else sms_send_failed."""
    if code is not None and str(code) == str(UNSUBSCRIBED_RECIPIENT):
        return ServiceError("number_opted_out", f"{to} replied STOP to {sender}: the messaging provider refuses "
                            f"texts to them from it ({code}), and their opt-out is now recorded. Texts resume only "
                            "after they reply START (an opt-in through the API does not lift the provider's block)")
    return ServiceError("sms_send_failed", f"the messaging provider did not take the message: {why}")


def status_callback_url(base_url: str, message_id: str) -> str:
    return f"{base_url}{STATUS_PATH}?message_id={message_id}"


@dataclass(frozen=True)
class Written:
    """What a send's transaction did (Texts._write): its decision and the logged row, and the message written (None
    when the decision did not allow it); `fresh` False: the message of a racing send with the same key."""

    decision: compliance.Decision
    logged: LoggedDecision | None
    message: Message | None = None
    fresh: bool = True


class _KeyTaken(Exception):
    """A racing send claimed the idempotency key first (Texts._write)."""


class Texts:
    def __init__(self, uow: UnitOfWork[MessagingUnit], sms: MessagingProvider, compliance: Compliance,
                 others: Neighbours, base_url: str, *, standings: Standings | None = None):
        self.uow, self.sms, self.compliance = uow, sms, compliance
        self.standings = standings or carried_only()  # may the business spend (core.standings)
        self.others = others  # asked as the caller (services.messaging.ports)
        self.base_url = base_url

    async def send(self, new: NewText) -> Sent:
        """The text sent (or the message its idempotency key already names); a deferral is refused with its code
        and the instant texting opens."""
        placed = await self.place(new)
        if not isinstance(placed, Sent):
            raise ServiceError(placed.code or "tcpa_violation", placed.message)
        return placed

    async def place(self, new: NewText) -> Sent | LoggedDecision:
        """The text sent (as `send`), or the logged decision that deferred it (nothing written or sent)."""
        tenant.require_account()
        text, business_hours = checked(new), domain.calling_hours(new.business_hours)
        to = text.to
        profile = await self.others.agents.sender(text.agent_id)
        if profile.phone_number is None:
            raise not_found(f"phone number of agent {text.agent_id} (assign it one before texting from it)")
        business_id, sender = profile.business_id, profile.phone_number
        if text.idempotency_key is not None:
            async with self.uow.read() as work:
                earlier = await work.messages.message_by_key(business_id, text.idempotency_key)
            if earlier is not None:
                return same_text(earlier, text, sender)
        await self.standings.require_good(business_id, "sending texts")
        plan_id = await self.compliance.plan_of(business_id)
        lead = await self._lead(business_id, to, text.lead_id)
        callee = compliance.Callee(phone=to, timezone=text.callee_timezone, lead_id=lead.id if lead else None,
                                   lead_state=lead.state if lead else None, lead_status=lead.status if lead else None,
                                   converted_at=lead.converted_at if lead else None,
                                   last_inbound_at=lead.last_inbound_at if lead else None)
        # Once decided, an allowed text goes to the provider and its outcome is recorded even if the caller goes
        # away, so a retry with the same key gets this message instead of a pending one that never went out.
        return await to_completion(self._send_decided(business_id, sender, text, callee, business_hours, plan_id))

    async def _send_decided(self, business_id: str, sender: str, text: NewText, callee: compliance.Callee,
                            business_hours: Hours | None, plan_id: str) -> Sent | LoggedDecision:
        to = text.to
        written = await self._write(business_id, sender, text, callee, business_hours, plan_id)
        row = written.message
        if row is None:
            if written.decision.outcome == compliance.DEFER:
                assert written.logged is not None  # a deferral is logged
                return written.logged
            refusal = written.decision.refusal()
            assert refusal is not None  # an allowed text is written
            raise refusal
        if not written.fresh:
            return same_text(row, text, sender)  # a racing send with the same key wrote first
        try:
            accepted = await self.sms.send_message(to=to, from_=sender, body=text.body,
                                                   status_callback=status_callback_url(self.base_url, row.id))
        except ProviderError as exc:
            if exc.maybe_done:
                told = await self._record_unknown(row, exc)
                if told is not None:  # the provider's callback came first: the text went out
                    return Sent(await self.record_accepted(row, {"sid": told.provider_sid, "status": told.status}),
                                sender)
                raise ServiceError("sms_send_failed", f"the messaging provider did not answer ({exc}): the text may "
                                   f"have gone out. Message {row.id} is unknown until the provider's callback or "
                                   "our check says what became of it; to learn it, repeat the request with the same "
                                   "Idempotency-Key (never without one: that could text twice)") from None
            assert written.logged is not None  # an allowed text's decision is logged with it
            await self._record_failure(row, exc, written.logged.id, exc.code == UNSUBSCRIBED_RECIPIENT)
            raise provider_refusal(to, sender, exc.code, str(exc)) from None
        return Sent(await self.record_accepted(row, accepted), sender)

    async def _lead(self, business_id: str, phone: str, lead_id: str | None) -> Lead | None:
        """The lead the text is for: `lead_id` (of the caller's businesses), else the business's lead with that
        phone, else None."""
        if lead_id:
            return await self.others.leads.lead(lead_id)
        return await self.others.leads.lead_with_phone(business_id, phone)

    async def _write(self, business_id: str, sender: str, text: NewText, callee: compliance.Callee,
                     business_hours: Hours | None, plan_id: str) -> Written:
        """The decision on the text, made under the recipient's lock, and in the same transaction either the
        pending message on its thread with the decision logged and the touch counted, or the refusal or deferral
        logged alone; when a racing send claimed the idempotency key first, that send's message with nothing
        written. Content that breaks the rules is refused (content_blocked) after a legal refusal, before a
        deferral, with nothing logged. A recipient who asked for the text on a call has their asking recorded
        first, so the decision reads it with the rest of their consent history."""
        message_id = new_id()
        assert text.actor is not None  # checked() names it
        try:
            async with self.uow.transaction() as work:
                if text.requested_on_call is not None:
                    await work.consent.add_consent(
                        business_id=business_id, phone=text.to, kind="conversational", source=CALL_REQUEST,
                        actor=text.to, reference=text.requested_on_call, created_at=utcnow(),
                        note=f"asked on call {text.requested_on_call} for a text from {sender}")
                decided, now = await self.compliance.decide_locked(work, business_id, SMS, callee, sender=sender,
                                                                   business_hours=business_hours)
                if decided.outcome != compliance.REFUSE:
                    refusal = domain.content_refusal(text.body)
                    if refusal is not None:
                        raise refusal
                if not decided.allowed:
                    logged = await self.compliance.record(work, business_id, SMS, callee, decided, text.actor,
                                                          text.reference, now, plan_id)
                    return Written(decided, logged)
                row = await work.messages.add_to_thread(
                    business_number=sender, contact_number=text.to, id=message_id, business_id=business_id,
                    direction="outbound", from_number=sender, to_number=text.to, body=text.body,
                    status=domain.PENDING, agent_id=text.agent_id, lead_id=callee.lead_id,
                    idempotency_key=text.idempotency_key, external_ref=text.external_ref, touch_id=text.touch_id,
                    created_at=now, updated_at=now)
                if row is None:
                    raise _KeyTaken  # rolls back even the thread: the winner's message is on its own
                logged = await self.compliance.record(work, business_id, SMS, callee, decided, text.actor,
                                                      text.reference or message_id, now, plan_id)
                return Written(decided, logged, row)
        except _KeyTaken:
            assert text.idempotency_key is not None  # only a key is taken
            async with self.uow.read() as work:
                earlier = await work.messages.message_by_key(business_id, text.idempotency_key)
            return Written(decided, None, earlier, fresh=False)

    async def _record_unknown(self, row: Message, exc: ProviderError) -> Message | None:
        """The text is unknown (no sms.failed: it may have gone out; services.messaging.reconciliation finds out),
        unless the provider's callback already told us more: then that message, with its sid."""
        async with self.uow.transaction() as work:
            current = ours(await work.messages.message_for_callback(row.id, ""))
            if current.status != domain.PENDING and current.provider_sid:
                return current
            await work.messages.change_message(row.id, {"status": domain.UNKNOWN, "error_message": str(exc),
                                                        "updated_at": utcnow()})
        return None

    async def _record_failure(self, row: Message, exc: ProviderError, decision_id: str,
                              opted_out: bool = False) -> None:
        """The text failed (sms.failed) and its slot in the ledger is freed (`decision_id`'s); `opted_out`: the
        provider refused it because the recipient replied STOP, which goes into their consent history too."""
        now = utcnow()
        async with self.uow.transaction() as work:
            await work.compliance.release_touch(decision_id, (row.business_id,), now)
            failed = ours(await work.messages.change_message(row.id, {
                "status": "failed", "error_code": str(exc.code) if exc.code else None, "error_message": str(exc),
                "updated_at": now}))
            if opted_out:
                await work.consent.add_consent(
                    business_id=failed.business_id, phone=failed.to_number, kind="opt_out", source="provider",
                    actor=PROVIDER_ACTOR, reference=failed.id, created_at=now,
                    note=f"the messaging provider refused a text from {failed.from_number} ({exc.code}): the "
                         "recipient replied STOP to it")
            work.emit(failed_event(failed), failed.business_id)

    async def record_never_sent(self, row: Message, why: str) -> bool:
        """A text of unknown outcome that never went out: failed (sms.failed), if it is still unknown."""
        async with self.uow.transaction() as work:
            current = await work.messages.message_for_callback(row.id, "")
            if current is None or current.status != domain.UNKNOWN:
                return False
            failed = ours(await work.messages.change_message(row.id, {"status": "failed", "error_message": why,
                                                                       "updated_at": utcnow()}))
            work.emit(failed_event(failed), failed.business_id)
        return True

    async def record_accepted(self, row: Message, accepted: dict[str, Any]) -> Message:
        """The provider's Message for our text (its answer to the send, or found later): its sid, and sms.sent."""
        told = str(accepted.get("status") or "")
        status = told if domain.moves_forward(domain.PENDING, told) else "queued"
        async with self.uow.transaction() as work:
            current = ours(await work.messages.message_for_callback(row.id, accepted["sid"]))
            if row.status == domain.UNKNOWN and current.status != domain.UNKNOWN:
                return current  # found late, but a callback recorded it first (with sms.sent)
            changes = {"provider_sid": accepted["sid"], "updated_at": utcnow()}
            if domain.moves_forward(current.status, status):  # a callback may have moved it further already
                changes["status"] = status
            sent = ours(await work.messages.change_message(row.id, changes))
            work.emit(sent_event(sent), sent.business_id)
        return sent

    async def provider_status(self) -> str:
        """The messaging provider as our account sees it: ok, refused (the account is not active, or our
        credentials are refused) or unavailable (providers.status)."""
        try:
            account = await self.sms.check()
        except ProviderError as exc:
            return provider_status(exc.status)
        return "ok" if account.get("status") == "active" else "refused"

    # -- reads ---------------------------------------------------------------------------------

    async def conversations(self, conversation_id: str | None, page: Page) -> Paged:
        who = tenant.require_account()
        async with self.uow.read() as work:
            paged = await work.messages.conversations_page(who.business_ids, conversation_id, page)
        if conversation_id and not paged.rows:
            raise not_found("conversation")
        return paged

    async def messages(self, conversation_id: str | None, direction: str | None, page: Page) -> Paged:
        """A page of messages newest first; reading a thread's messages marks the thread read."""
        who = tenant.require_account()
        if direction is not None and direction not in messaging_contract.DIRECTIONS:
            raise invalid(f"direction must be one of {', '.join(messaging_contract.DIRECTIONS)}")
        async with self.uow.transaction() as work:
            paged = await work.messages.messages_page(who.business_ids, conversation_id, direction, page)
            if conversation_id and paged.rows:
                await work.messages.mark_read(conversation_id)
        return paged


def ours(message: Message | None) -> Message:
    """A message of ours found by its id: there always is one (messages are never deleted)."""
    if message is None:
        raise LookupError("a message of ours is gone")
    return message


def sent_event(row: Message) -> events_pb2.SmsSent:
    return events_pb2.SmsSent(
        message_id=row.id, conversation_id=row.conversation_id, message_sid=row.provider_sid,
        agent_id=str(row.agent_id), to=row.to_number, lead_id=str(row.lead_id) if row.lead_id else None,
        external_ref=row.external_ref, touch_id=row.touch_id, **{"from": row.from_number})


def failed_event(row: Message) -> events_pb2.SmsFailed:
    return events_pb2.SmsFailed(message_id=row.id, conversation_id=row.conversation_id,
                                message_sid=row.provider_sid, to=row.to_number, status=row.status,
                                error_code=row.error_code, error_message=row.error_message,
                                external_ref=row.external_ref, touch_id=row.touch_id, **{"from": row.from_number})
