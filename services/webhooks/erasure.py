"""A person's erasure from the webhook event history (issue 56): the privacy job's last step (ErasePerson, asked by
the accounts service's privacy job alone: core.registry.RPC_CALLERS), after sdr, calls and messaging have named the
person's leads, calls and messages.

What names the person (`names`): in the events of the request's business only, any string value (at any depth:
keys do not matter) containing one of the person's phone numbers (its digits, so "+14155550142", "14155550142" and
"%2B14155550142" match), email addresses (as written or URL-encoded, in any case) or the ids of their leads, calls
and messages (lead_id, call_id, message_id, lead.created's id, a briefing's needs_owner[].lead_id, a recording URL
holding the call id...). The database finds the candidates the same way (the data's JSON text, in lower case, LIKE
any of these needles: store.events_naming, on the events_business_occurred index and skipping the types that
carry no customer's data, NO_PERSONAL_DATA); `redact` decides. It errs towards redaction: a longer number holding
the same digits would match too.

The rule (`redact`): an event naming the person keeps its envelope (event_id, type, business_id, occurred_at) and,
of its data, only the platform's ids that are set (KEPT_IDS: id, lead_id, call_id, message_id, message_sid, conversation_id,
agent_id, touch_id, communication_run_id, job_id, briefing_id, email_id), plus `"redacted": true`; every other field
(numbers, names, emails, bodies, transcripts, summaries, notes, explanations, the call's webhook_url, the
partner's external_ref) is gone. An id that itself holds the phone or email is dropped too. One exception: an event
about many people (a dispatcher.briefing_created's needs_owner list) keeps the others: only the list entries naming
the person are redacted the same way ({"lead_id": ..., "redacted": true}). A redacted event redacted again is
unchanged, so a repeated erasure counts nothing; each batch of events is committed as it is done, so an erasure cut
short (its deadline) is finished by the next. Replays (Replay, POST /api/v1/events/replay), pending retries and
GET /api/v1/events read the stored data: they send and show the redacted data.

Deliveries and attempts store no request or response body (the body is made from the stored event at each
attempt: delivery.post_signed); they hold a target URL (a call's own webhook_url) and error texts, in which the
person's phone or email is replaced by "[redacted]" (`redact_text`), counted as redacted deliveries.

What stays elsewhere: the webhooks service does not own NATS (core.registry.BUS gives it no bus access; the
dispatcher only consumes EVENTS). Every event is still on the EVENTS stream (subjects events.<type>, all businesses
mixed) until its limits drop it: NATS_EVENTS_MAX_AGE_DAYS (7 days by default) or NATS_EVENTS_MAX_BYTES (4 GiB,
oldest first); an event a consumer gave up on is on DEADLETTERS for NATS_DEADLETTERS_MAX_AGE_DAYS (30). Those are
the bound: this erasure does not purge them. A purge by subject cannot pick one person (a subject is an event type
of every business); it would take deleting messages one by one by sequence (STREAM.MSG.DELETE) after reading the
stream for the business's events naming the person, with permissions this service does not have. An event
published before the producing service's own erasure but stored here after this step (the dispatcher's lag, or a
replayed dead letter) arrives unredacted: the privacy job runs this step last, and running it again redacts it.

A torn-down business's deletion (`whole_business`: services.accounts.privacy.teardown_deletion) keeps nothing of its
history: every event of the business, every delivery with its attempts, then its subscriptions (with their secrets)
and its per-call signing secret are deleted (`erase_business`). The EVENTS stream's bound above holds for it too.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from core.uow import UnitOfWork
from services.webhooks.repository import WebhooksUnit

log = logging.getLogger(__name__)

REDACTED = "redacted"
TEXT_MARK = "[redacted]"
# The platform's ids an event keeps once redacted (none of them says who the person is).
KEPT_IDS = ("id", "lead_id", "call_id", "message_id", "message_sid", "conversation_id", "agent_id", "touch_id",
            "communication_run_id", "job_id", "briefing_id", "email_id")
# Event types whose data is about the business, never a customer of it: not searched.
NO_PERSONAL_DATA = ("phone_number.assigned", "phone_number.released", "workspace.paused", "workspace.canceled",
                    "workspace.teardown_completed", "workspace.standing_changed", "workspace.owner_notice",
                    "agent.prompt_changed", "webhook.test", "communication.run_ended")
# Fewer digits than this are no phone number worth searching by digits alone (they would match too much).
MIN_PHONE_DIGITS = 7
BATCH = 200  # events redacted per transaction
BUSINESS_ROUNDS = 20  # a torn-down business's deletion: batches per request (`more` past them)


@dataclass(frozen=True)
class Person:
    """Who to erase, as the request names them (ErasureRequest)."""

    phones: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()  # their lead, call and message ids

    @classmethod
    def of(cls, phones: Iterable[str], emails: Iterable[str], ids: Iterable[str]) -> Person:
        return cls(tuple(p for p in phones if p.strip()), tuple(e for e in emails if e.strip()),
                   tuple(i for i in ids if i.strip()))

    @property
    def texts(self) -> tuple[str, ...]:
        """What says who they are, in lower case, as it may be written in a value: each phone's digits, each email
        as written and URL-encoded."""
        found: list[str] = []
        for phone in self.phones:
            digits = re.sub(r"\D", "", phone)
            found.append(digits if len(digits) >= MIN_PHONE_DIGITS else phone.strip().lower())
        for email in self.emails:
            email = email.strip().lower()
            found += [email, quote(email, safe="").lower()]
        return tuple(dict.fromkeys(found))

    @property
    def needles(self) -> list[str]:
        """Every string whose presence in a value names the person: `texts` and their ids (lower case)."""
        return list(dict.fromkeys([*self.texts, *(i.strip().lower() for i in self.ids)]))


def names(value: Any, needles: Iterable[str]) -> bool:
    """Whether a value (a string, or any string at any depth of a dict or list) contains one of `needles`."""
    if isinstance(value, str):
        text = value.lower()
        return any(n in text for n in needles)
    if isinstance(value, dict):
        return any(names(v, needles) for v in value.values())
    if isinstance(value, list):
        return any(names(v, needles) for v in value)
    return False


def _kept(data: dict[str, Any], person: Person) -> dict[str, Any]:
    """The data's platform ids that are set (and do not hold the phone or email themselves), marked redacted."""
    texts = person.texts
    return {**{k: data[k] for k in KEPT_IDS if isinstance(data.get(k), str) and data[k] and not names(data[k], texts)},
            REDACTED: True}


def redact(data: dict[str, Any], person: Person) -> dict[str, Any]:
    """An event's data with the person's personal data gone (the module's rule); the same data when it does not
    name them or was redacted already."""
    needles = person.needles
    lists = {k: v for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)}
    rest = {k: v for k, v in data.items() if k not in lists}
    if names(rest, needles):
        return _kept(data, person)
    return {**data, **{k: [_kept(x, person) if names(x, needles) else x for x in v] for k, v in lists.items()}}


def redact_text(text: str | None, person: Person) -> str | None:
    """The text with the person's phone numbers and email addresses replaced by TEXT_MARK (in any case)."""
    if not text:
        return text
    for needle in person.texts:
        text = re.sub(re.escape(needle), TEXT_MARK, text, flags=re.IGNORECASE)
    return text


@dataclass(frozen=True)
class Erased:
    """What one erasure changed: events redacted, deliveries whose texts were redacted."""

    events: int
    deliveries: int


class Erasure:
    """The use case: redact what the business's event history and deliveries hold of one person."""

    def __init__(self, uow: UnitOfWork[WebhooksUnit], batch: int = BATCH):
        self.uow = uow
        self.batch = batch

    async def erase(self, business_id: str, person: Person, erasure_id: str = "") -> Erased:
        """Redact the business's events naming the person, a batch per transaction (each held for update, so two
        erasures touching one event apply one after the other), then their deliveries' texts."""
        needles = person.needles
        if not needles:
            return Erased(0, 0)
        redacted, after = 0, None
        while True:
            async with self.uow.transaction() as work:
                found = await work.events.naming(business_id, needles, NO_PERSONAL_DATA, after, self.batch)
                changed = {e.event_id: new for e in found if (new := redact(e.data, person)) != e.data}
                await work.events.rewrite(changed)
            redacted += len(changed)
            if len(found) < self.batch:
                break
            after = found[-1].event_id
        deliveries = await self._deliveries(business_id, person)
        log.info("erasure %s: webhooks redacted %d events and %d deliveries of business %s", erasure_id or "-",
                 redacted, deliveries, business_id)
        return Erased(redacted, deliveries)

    async def erase_business(self, business_id: str) -> tuple[dict[str, int], bool]:
        """A torn-down business's deletion: its deliveries (with their attempts) and its event history deleted, a
        batch of each per transaction, up to BUSINESS_ROUNDS batches per request, then its subscriptions; the
        counts per report line and whether there may be more (`more`: ask again)."""
        counts = {"webhooks.delivery": 0, "webhooks.event": 0, "webhooks.subscription": 0}
        for _ in range(BUSINESS_ROUNDS):
            async with self.uow.transaction() as work:
                deliveries = await work.business_data.delete_deliveries(business_id, self.batch)
                deleted = await work.business_data.delete_events(business_id, self.batch)
            counts["webhooks.delivery"] += deliveries
            counts["webhooks.event"] += deleted
            if deliveries < self.batch and deleted < self.batch:
                break
        else:
            return counts, True
        async with self.uow.transaction() as work:
            counts["webhooks.subscription"] = await work.business_data.delete_subscriptions(business_id)
        log.info("teardown of business %s: webhooks deleted %d events, %d deliveries and %d subscriptions",
                 business_id, counts["webhooks.event"], counts["webhooks.delivery"], counts["webhooks.subscription"])
        return counts, False

    async def _deliveries(self, business_id: str, person: Person) -> int:
        texts = list(person.texts)
        if not texts:
            return 0
        async with self.uow.transaction() as work:
            found = await work.deliveries.naming(business_id, texts)
            rewritten = {d.id: {"target_url": redact_text(d.target_url, person),
                                "last_error": redact_text(d.last_error, person)} for d in found}
            attempts = await work.deliveries.attempts_naming(business_id, texts)
            errors = {attempt_id: redact_text(error, person) or "" for attempt_id, _, error in attempts}
            await work.deliveries.rewrite_texts(rewritten, errors)
        return len(set(rewritten) | {delivery_id for _, delivery_id, _ in attempts})
