"""A person's erasure from the messaging service (ErasePerson): the accounts service's privacy job asks it of each
service holding personal data in turn (issue 56; core.registry lets no other process ask).

Scope: the request's business only. The person is their phone numbers (E.164) and email addresses (lower case), and
the texts other services found of theirs (`message_ids`, of this business: another business's are ignored); the
numbers those texts were with are theirs too. What becomes of their records:

- texts (messages): at the provider first, each redacted as Twilio documents it (its body emptied, its media deleted:
  providers.messaging), then here: the body "", the person's number (the sender of an inbound text, the recipient of
  an outbound one) replaced by the marker `erased:<erasure id>`, in the provider's error message too, and in an
  idempotency key by the number's suppression hash. Status, direction, times, the business's number, the provider's
  sid (its segments and price, for billing) stay;
- threads (conversations): the number replaced by `erased:<erasure id>/<thread id>` (a business number has one thread
  per contact number, so each keeps a marker of its own);
- emails to (or answered to) their address: the address replaced by the marker, subject and body "", and one not
  sent yet failed ("erased before it was sent"); the owner's approval of the address (approved_recipients) deleted;
- this service's outbox events about their texts (sms.*): their number replaced by the marker and the body "";
- the evidence (consent_events, compliance_decisions: append-only) keeps its rows, as the law may ask: the number
  replaced by its suppression hash (services.messaging.suppression), a consent event's note dropped (a number as its
  actor hashed too), a decision's message with the number hashed; nothing else may change (the tables' triggers let
  exactly that update through: schema.CONSENT_ERASURE, DECISION_ERASURE, migration 0014). The touch ledger
  (counted_touches) keeps its rows under the hash as well;
- the do-not-contact list: their entries kept under the hash, and with `suppress` (which the privacy job sets
  unless the erasure's request said otherwise) the hash listed (once: a listed hash is not listed again). Every later
  check asks of a number and of its hash (compliance_service, consent_service), so a text or a call to someone
  erased with suppression, or who had said STOP, is refused, and the refusal logged under the hash.

Provider first, then the database, with no connection held while the provider is asked: the texts are read, the
provider redacts them, then one transaction writes everything here. A crash in between leaves the texts unerased
here, found again by the next attempt and redacted at the provider again (a redaction repeats harmlessly); a text
erased here is found no more (its number is a marker now), so the same request again finds nothing, changes
nothing and answers zeros.

A torn-down business's deletion (`whole_business`: services.accounts.privacy.teardown_deletion) is this erasure of
every person the business texted or emailed, a batch of them per request (`erase_business`), without suppression.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core import erasure_subject as subject
from core import tenant
from core.errors import ServiceError, not_found
from core.ids import new_id, require_uuid, utcnow
from core.uow import UnitOfWork
from providers.messaging.adapter import MessagingProvider, ProviderError
from services.messaging.repositories.erasure import FoundText
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.suppression import Suppression

log = logging.getLogger(__name__)

PROVIDER_AT_ONCE = 8  # the provider's redactions in flight at once
BUSINESS_BATCH = 50  # a torn-down business's deletion: contact numbers (and addresses) erased per request
ERASED = "erased"
EVENT_CONTENT = ("body",)  # what a person wrote, in this service's events (sms.received)


@dataclass(frozen=True)
class Person:
    """Whom an erasure is about, checked."""

    business_id: str
    erasure_id: str
    phones: tuple[str, ...]
    emails: tuple[str, ...]
    message_ids: tuple[str, ...]
    suppress: bool


def person(business_id: str, erasure_id: str, phones: Iterable[str], emails: Iterable[str],
           message_ids: Iterable[str], suppress: bool) -> Person:
    """The request checked: the business an id, the numbers E.164, the addresses lower case (each once); message ids
    that are no id name nothing, so they are dropped."""
    return Person(require_uuid(business_id, "business_id"), erasure_id.strip(),
                  subject.phones(phones), subject.emails(emails), subject.ids(message_ids), suppress)


def marker(erasure_id: str) -> str:
    """What stands for the person's number or address once erased: `erased:<erasure id>`."""
    return f"{ERASED}:{erasure_id}" if erasure_id else ERASED


def numbers_of(asked: Iterable[str], texts: Iterable[FoundText]) -> list[str]:
    """The person's numbers: those asked, and those their texts (named by id) were with, each once."""
    return list(dict.fromkeys([*asked, *(t.contact for t in texts)]))


def redacted_event(data: dict[str, Any], numbers: Iterable[str], replacement: str) -> dict[str, Any]:
    """An event's data with the person's numbers replaced wherever they appear (its to or from, a provider's error
    message quoting one) and what they wrote emptied."""
    numbers = list(numbers)
    redacted = dict(data)
    for field, value in data.items():
        if isinstance(value, str):
            for phone in numbers:
                value = value.replace(phone, replacement)
            redacted[field] = "" if field in EVENT_CONTENT and value else value
    return redacted


async def redact_at_provider(sms: MessagingProvider, sids: Iterable[str], ask_again: str) -> int:
    """Each text redacted at the provider (its body emptied, its media deleted: MessagingProvider.redact_message),
    PROVIDER_AT_ONCE at a time, with no connection held; how many the provider still had. One it could not redact
    fails the whole (unavailable, saying `ask_again`) after every redaction asked has ended: a redaction repeats
    harmlessly, so the caller writes nothing and asks again. The erasure and the retention a business set
    (services.messaging.data_retention) redact through it."""
    gate = asyncio.Semaphore(PROVIDER_AT_ONCE)

    async def redact(sid: str) -> bool:
        async with gate:
            return await sms.redact_message(sid) is not None

    done = await asyncio.gather(*(redact(sid) for sid in sids), return_exceptions=True)
    failed = [d for d in done if isinstance(d, BaseException)]
    for exc in failed:
        if not isinstance(exc, ProviderError):
            raise exc
    if failed:
        raise ServiceError("unavailable", f"the messaging provider could not redact {len(failed)} of the texts "
                           f"({failed[0]}): {ask_again}")
    return sum(1 for d in done if d is True)


@dataclass
class Removed:
    """What was removed where: a report line per kind of record."""

    provider_messages: int = 0
    texts: int = 0
    threads: int = 0
    emails: int = 0
    recipients: int = 0
    events: int = 0
    consent_events: int = 0
    decisions: int = 0
    touches: int = 0
    dnc_hashed: int = 0
    suppressed: int = 0

    def items(self) -> list[tuple[str, str, int]]:
        """(what, action, count) lines, every one even at zero (a repeated request answers zeros)."""
        return [("provider.message", "redacted", self.provider_messages),
                ("messaging.message_body", "redacted", self.texts),
                ("messaging.conversation", "redacted", self.threads),
                ("messaging.email", "redacted", self.emails),
                ("messaging.approved_recipient", "deleted", self.recipients),
                ("messaging.outbox", "redacted", self.events),
                ("messaging.consent_events", "redacted", self.consent_events),
                ("messaging.compliance_decisions", "redacted", self.decisions),
                ("messaging.counted_touches", "redacted", self.touches),
                ("messaging.dnc", "redacted", self.dnc_hashed),
                ("messaging.dnc", "suppressed", self.suppressed)]


@dataclass(frozen=True)
class Erased:
    removed: Removed
    message_ids: list[str]  # the person's texts found here (their events elsewhere name them)


class Erasures:
    def __init__(self, uow: UnitOfWork[MessagingUnit], sms: MessagingProvider, suppression: Suppression):
        self.uow, self.sms, self.suppression = uow, sms, suppression

    async def erase(self, who: Person) -> Erased:
        caller = tenant.current()
        if caller.business_ids and not caller.can_access(who.business_id):
            raise not_found("business")  # the privacy job acts for the business it erases for
        async with self.uow.read() as work:
            texts = await work.erasure.texts(who.business_id, list(who.phones), list(who.message_ids))
        removed = Removed(provider_messages=await self._at_the_provider(who, texts))
        numbers = numbers_of(who.phones, texts)
        await self._here(who, texts, numbers, removed)
        log.info("erasure %s of business %s: %s", who.erasure_id, who.business_id,
                 ", ".join(f"{what} {action} {n}" for what, action, n in removed.items() if n))
        return Erased(removed, [t.id for t in texts])

    async def erase_business(self, business_id: str, erasure_id: str) -> tuple[Erased, bool]:
        """A torn-down business's deletion: the people its threads and emails are with (BUSINESS_BATCH numbers and
        addresses per request), each erased as above without suppression (their numbers' do-not-contact and
        consent evidence stays, under the hash); and whether there may be more (`more`)."""
        async with self.uow.read() as work:
            phones, emails = await work.erasure.contacts(require_uuid(business_id, "business_id"), BUSINESS_BATCH)
        erased = await self.erase(person(business_id, erasure_id, phones, emails, (), False))
        changed = any(n for _, _, n in erased.removed.items())  # a number it cannot erase is not asked about forever
        return erased, max(len(phones), len(emails)) >= BUSINESS_BATCH and changed

    async def _at_the_provider(self, who: Person, texts: list[FoundText]) -> int:
        """Each text the provider took redacted there (none held: no connection is); how many it still had."""
        return await redact_at_provider(self.sms, [t.provider_sid for t in texts if t.provider_sid],
                                        f"nothing was erased here yet; ask again (erasure {who.erasure_id})")

    async def _here(self, who: Person, texts: list[FoundText], numbers: list[str], removed: Removed) -> None:
        """Everything here, in one transaction."""
        now, business_id, replacement = utcnow(), who.business_id, marker(who.erasure_id)
        hashes = {phone: self.suppression.hash(phone) for phone in numbers}
        by = f"privacy:{who.erasure_id}"
        async with self.uow.transaction() as work:
            erasure = work.erasure
            ids = [t.id for t in texts]
            for contact in dict.fromkeys(t.contact for t in texts):
                removed.texts += await erasure.erase_texts(business_id, ids, contact, replacement, hashes[contact])
            if numbers:
                removed.threads = await erasure.erase_threads(business_id, numbers, replacement)
            if who.emails:
                removed.emails = await erasure.erase_emails(business_id, list(who.emails), replacement, now)
                removed.recipients = await erasure.forget_recipients(business_id, list(who.emails))
            if ids:
                for event_id, data in await erasure.events_naming(business_id, ids):
                    redacted = redacted_event(data, numbers, replacement)
                    if redacted != data:
                        await erasure.rewrite_event(event_id, redacted)
                        removed.events += 1
            for phone, hashed in hashes.items():
                evidence = await erasure.hash_evidence(business_id, phone, hashed)
                removed.consent_events += evidence.consent_events
                removed.decisions += evidence.decisions
                removed.touches += evidence.touches
                removed.dnc_hashed += await erasure.hash_dnc(business_id, phone, hashed, now, by,
                                                             "kept under its suppression hash: the person was erased")
                if who.suppress:
                    removed.suppressed += await erasure.suppress(
                        id=new_id(), business_id=business_id, phone=hashed, added_by=by, created_at=now,
                        reason="the person was erased: kept as the hash of their number, never to be contacted again")
