"""Erasing one person of a business from the sdr service (ErasePerson, the accounts service's privacy job's first
step: services.accounts.privacy): the rules as plain functions, and `Erasure`, the use case.

Who: the business's leads with one of the request's phones (E.164, compared normalized: every writer here stores
E.164, core.contact) or emails (lower case), or with one of its lead ids (ids of another business's leads name
nothing here: every query is of the request's business). A lead of another business with the same phone is not
touched.

What becomes of their records:
- leads: deleted, with their interactions and the pipeline's activity entries naming them (GET /api/v1/leads/{id}
  answers 404, the lists and the pipeline no longer show them);
- voicemails (linked to one of their leads or left from their number): deleted, transcripts and recording links
  with them (the recordings at the provider are the calls service's step);
- bookings (linked to one of their leads, or with their phone or email): deleted, past and future alike. A future
  confirmed one frees its slot; no booking.canceled event is raised, as it would carry the person's name and number
  to the business's webhooks (the privacy job's erasure.completed event tells partner systems instead);
- communication runs' touches to their number (or whose context names one of their leads): a planned touch not
  executed yet (waiting, or paused with its run) is canceled with the reason "erased", so the run never contacts
  them, and its run completes if that was its last touch (communication.run_ended, counts only); every touch and
  call attempt to them keeps its status, attempts and outcome (the counts a run reports stay) and loses the number,
  the context and the words (reason "erased"). A touch being placed at that instant (executing, or a call in
  progress) may still reach them once: the call is the calls service's to erase, and a retry of it has no number
  to dial (the calls service refuses it, and the touch ends refused);
- the owner's briefings naming one of their leads: the escalation's name and reason emptied, the text's lines
  naming the lead replaced with "- (erased)";
- this service's outbox rows naming them (lead.created, booking.*, communication.touch_*, the briefing's
  escalations): the personal fields emptied, the row's id, event id, type, business and every other field kept.

Counts: the analytics reports count the leads the business holds (services.sdr.analytics_service, by the leads'
created_at): an erased lead leaves the lead totals, the by-status counts and the funnel of the period it was
created in, as a lead deleted any other way would. The calls it made stay counted (the calls service's), and so do
its runs' touches (kept, redacted). No count of erasures is kept here: the privacy job's report is the record.

Batches: each step is one transaction over at most BATCH rows (LEADS_BATCH leads), repeated until a step finds
fewer; no provider is called. Leads are deleted last, after everything found through them, so an erasure that
stops midway (a crash, a deadline) finds everything left when it is asked again. Asked again after it finished, it
finds nothing: every line of the report counts zero.

A torn-down business's deletion (`whole_business`: services.accounts.privacy.teardown_deletion) is this erasure of
every person the business's records name (its leads, and the numbers and addresses of its bookings, voicemails, run
touches and call attempts), a batch per request (`erase_business`) until none is left."""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core import erasure_subject as subject
from core import tenant
from core.ids import is_uuid, require_uuid, utcnow
from core.uow import UnitOfWork
from services.sdr.repository import SdrUnit
from services.sdr.runs_events import end_run

log = logging.getLogger(__name__)

BATCH = 500  # rows one step (one transaction) changes at most
LEADS_BATCH = 100  # leads whose interactions and activity one round deletes before deleting them
BUSINESS_BATCH = 200  # a torn-down business's deletion: records of each kind whose people one request erases
ERASED = "erased"  # a canceled touch's reason, and what a redacted touch says happened to it
ERASED_LINE = "- (erased)"  # a briefing's line that named the person

# The report's lines, in order: (what, action). Every line is reported, zeros too.
ITEMS = (("sdr.lead", "deleted"), ("sdr.interaction", "deleted"), ("sdr.pipeline_activity", "deleted"),
         ("sdr.voicemail", "deleted"), ("sdr.booking", "deleted"), ("sdr.run_touch", "canceled"),
         ("sdr.run_touch", "redacted"), ("sdr.run_attempt", "redacted"), ("sdr.briefing", "redacted"),
         ("sdr.outbox", "redacted"))


# -- the rules -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Person:
    """Whom to erase, normalized: phones in E.164, emails in lower case, lead ids as given (UUIDs)."""

    phones: tuple[str, ...]
    emails: tuple[str, ...]
    lead_ids: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not (self.phones or self.emails or self.lead_ids)


def person_of(phones: Iterable[str], emails: Iterable[str], lead_ids: Iterable[str]) -> Person:
    """The request's person, normalized and without repeats (blank values dropped)."""
    return Person(subject.phones(phones), subject.emails(emails), subject.ids(lead_ids))


def lead_names(rows: Iterable[Any]) -> tuple[str, ...]:
    """The names the pipeline wrote of these leads (rows with name, first_name, last_name): the name, else the
    first and last names joined (services.sdr.pipeline_run)."""
    names: dict[str, None] = {}
    for row in rows:
        for name in (row.name, " ".join(filter(None, (row.first_name, row.last_name)))):
            if name and name.strip():
                names[name] = None
    return tuple(names)


# What of each event type names a person, and what it becomes: the field and its empty value (an optional field
# null, a plain one empty), as core.events.to_data writes them.
_EVENT_PERSONAL: dict[str, dict[str, Any]] = {
    "lead.created": {"name": None, "email": None, "phone": None},
    **{f"booking.{kind}": {"name": "", "phone_number": "", "email": None, "notes": None}
       for kind in ("created", "rescheduled", "canceled")},
    "communication.touch_completed": {"to": ""},
    "communication.touch_failed": {"to": "", "reason": ""},
    "communication.touch_deferred": {"to": "", "message": ""},
}


def _names_person(event_type: str, data: dict[str, Any], person: Person, lead_ids: frozenset[str]) -> bool:
    if event_type == "lead.created":
        return (data.get("id") in lead_ids or data.get("phone") in person.phones
                or data.get("email") in person.emails)
    if event_type.startswith("booking."):
        return (data.get("lead_id") in lead_ids or data.get("phone_number") in person.phones
                or data.get("email") in person.emails)
    if event_type.startswith("communication.touch_"):
        return data.get("to") in person.phones
    return False


def redacted_event(event_type: str, data: dict[str, Any], person: Person,
                   lead_ids: Iterable[str]) -> dict[str, Any] | None:
    """An outbox row's data without what names the person (`lead_ids`: their leads found), or None when it
    names nothing of them (any more: a redacted row is left alone)."""
    ids = frozenset(lead_ids)
    redacted = dict(data)
    if event_type in _EVENT_PERSONAL and _names_person(event_type, data, person, ids):
        redacted.update(_EVENT_PERSONAL[event_type])
    if event_type == "dispatcher.briefing_created":
        redacted["needs_owner"] = redacted_escalations(data.get("needs_owner") or [], ids)
    return redacted if redacted != data else None


def redacted_escalations(needs_owner: list[dict[str, Any]], lead_ids: frozenset[str]) -> list[dict[str, Any]]:
    """A briefing's escalations ({lead_id, name, reason}), those of the person's leads without name and reason."""
    return [{**entry, "name": "", "reason": ""} if entry.get("lead_id") in lead_ids else entry
            for entry in needs_owner]


def briefing_needles(lead_ids: Iterable[str], names: Iterable[str]) -> tuple[str, ...]:
    """What a briefing naming one of the leads holds: its id (escalations, a line of a lead without a name), or a
    line naming it (pipeline_runner.briefing_text: "- name: why" or "- name (action): why")."""
    return (*lead_ids, *(f"- {name}{sep}" for name in names for sep in (": ", " (")))


def redacted_briefing(needs_owner: list[dict[str, Any]], text: str, lead_ids: Iterable[str],
                      names: Iterable[str]) -> tuple[list[dict[str, Any]], str] | None:
    """A briefing's escalations and text without what names the leads, or None when it names none of them. A line
    naming a lead's name goes even when another lead of the same name was meant: erasure errs toward less."""
    ids = frozenset(lead_ids)
    prefixes = tuple(needle for needle in briefing_needles(ids, names) if needle.startswith("- ")) + \
        tuple(f"- {lead_id}{sep}" for lead_id in ids for sep in (": ", " ("))
    lines = [ERASED_LINE if line.startswith(prefixes) else line for line in text.split("\n")]
    escalations = redacted_escalations(needs_owner, ids)
    redacted = (escalations, "\n".join(lines))
    return redacted if redacted != (needs_owner, text) else None


def uuids(values: Iterable[Any]) -> list[str]:
    """The UUIDs among these values (call or message ids; a text's reference is the provider's sid), as text."""
    return [str(v) for v in values if v is not None and is_uuid(str(v))]


@dataclass
class Erased:
    """What the erasure removed (ErasureReport): counts per line of ITEMS, and the ids found of the person."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    lead_ids: list[str] = field(default_factory=list)
    call_ids: dict[str, None] = field(default_factory=dict)
    message_ids: dict[str, None] = field(default_factory=dict)

    def add(self, what: str, action: str, count: int) -> None:
        self.counts[(what, action)] += count

    def calls(self, values: Iterable[Any]) -> None:
        self.call_ids.update(dict.fromkeys(uuids(values)))

    def messages(self, values: Iterable[Any]) -> None:
        self.message_ids.update(dict.fromkeys(uuids(values)))

    def items(self) -> list[tuple[str, str, int]]:
        return [(what, action, self.counts[(what, action)]) for what, action in ITEMS]


# -- the use case ------------------------------------------------------------------------------------------------

class Erasure:
    def __init__(self, uow: UnitOfWork[SdrUnit]):
        self.uow = uow

    async def erase(self, business_id: str, erasure_id: str, phones: Sequence[str], emails: Sequence[str],
                    lead_ids: Sequence[str]) -> Erased:
        """Erase the person from the business's records here (the module's rules), step by step."""
        who = tenant.current()
        if who.account_id:  # the privacy job acting for the business (core.tenant.acting_for)
            business_id = tenant.require_business(who, business_id)
        else:
            business_id = require_uuid(business_id, "business_id")
        person = person_of(phones, emails, lead_ids)
        erased = Erased()
        if person.empty:
            return erased
        found = await self._leads(business_id, person)
        erased.lead_ids = [str(row.id) for row in found]
        ids = tuple(erased.lead_ids)  # the request's ids of the business's leads alone: another's name nothing here
        names = lead_names(found)
        await self._touches(business_id, person, ids, erased)
        await self._outbox(business_id, person, ids, erased)
        await self._repeat(erased, "sdr.booking", "deleted", lambda work: work.erasure.delete_bookings(
            business_id, ids, person.phones, person.emails, BATCH), calls=True)
        await self._repeat(erased, "sdr.voicemail", "deleted", lambda work: work.erasure.delete_voicemails(
            business_id, ids, person.phones, BATCH), calls=True)
        await self._briefings(business_id, ids, names, erased)
        for start in range(0, len(erased.lead_ids), LEADS_BATCH):
            await self._delete_leads(business_id, erased.lead_ids[start:start + LEADS_BATCH], erased)
        log.info("erasure %s of business %s in sdr: %s", erasure_id, business_id,
                 ", ".join(f"{what} {action} {n}" for what, action, n in erased.items() if n) or "nothing found")
        return erased

    async def erase_business(self, business_id: str, erasure_id: str) -> tuple[Erased, bool]:
        """A torn-down business's deletion: the people its records name (BUSINESS_BATCH of each kind per request)
        erased as above; and whether there may be more (`more`: a kind had a full batch and something changed, so
        a record this erasure cannot match is not asked about forever)."""
        async with self.uow.read() as work:
            lead_ids, phones, emails, full = await work.erasure.business_people(
                require_uuid(business_id, "business_id"), BUSINESS_BATCH)
        erased = await self.erase(business_id, erasure_id, phones, emails, lead_ids)
        return erased, full and any(erased.counts.values())

    async def _leads(self, business_id: str, person: Person) -> list[Any]:
        found: list[Any] = []
        async with self.uow.read() as work:
            while True:
                rows = await work.erasure.person_leads(business_id, person.phones, person.emails, person.lead_ids,
                                                       str(found[-1].id) if found else None, BATCH)
                found += rows
                if len(rows) < BATCH:
                    return found

    async def _repeat(self, erased: Erased, what: str, action: str, step: Any, *, calls: bool = False) -> None:
        """A step (rows returned, each with a call_id when `calls`) in a transaction each, until one changes fewer
        than BATCH rows."""
        while True:
            async with self.uow.transaction() as work:
                rows = await step(work)
            erased.add(what, action, len(rows))
            if calls:
                erased.calls(r.call_id for r in rows)
            if len(rows) < BATCH:
                return

    async def _outbox(self, business_id: str, person: Person, lead_ids: Sequence[str], erased: Erased) -> None:
        needles = (*lead_ids, *person.phones, *person.emails)
        after = 0
        while True:
            async with self.uow.transaction() as work:
                rows = await work.erasure.outbox_candidates(business_id, needles, after, BATCH)
                changed = [(r.id, data) for r in rows
                           if (data := redacted_event(r.type, r.data, person, lead_ids)) is not None]
                await work.erasure.rewrite_outbox(changed)
            erased.add("sdr.outbox", "redacted", len(changed))
            if len(rows) < BATCH:
                return
            after = rows[-1].id

    async def _touches(self, business_id: str, person: Person, lead_ids: Sequence[str], erased: Erased) -> None:
        """First (before the outbox: a touch made meanwhile raises an event naming the number), the planned touches
        are canceled and redacted, their runs completed if that was their last; then the others are redacted."""
        if not (person.phones or lead_ids):
            return
        while True:
            now = utcnow()
            async with self.uow.transaction() as work:
                rows = await work.erasure.cancel_touches(business_id, person.phones, lead_ids, now, BATCH)
                for run_id in sorted({str(r.run_id) for r in rows}):
                    await end_run(work, run_id, now)
            erased.add("sdr.run_touch", "canceled", len(rows))
            erased.add("sdr.run_touch", "redacted", len(rows))
            if len(rows) < BATCH:
                break
        while True:
            async with self.uow.transaction() as work:
                rows = await work.erasure.redact_touches(business_id, person.phones, lead_ids, utcnow(), BATCH)
            erased.add("sdr.run_touch", "redacted", len(rows))
            erased.calls(r.call_id for r in rows)
            erased.messages(r.message_id for r in rows)
            if len(rows) < BATCH:
                break
        await self._repeat(erased, "sdr.run_attempt", "redacted", lambda work: work.erasure.redact_attempts(
            business_id, person.phones, BATCH), calls=True)

    async def _briefings(self, business_id: str, lead_ids: Sequence[str], names: Sequence[str],
                         erased: Erased) -> None:
        if not lead_ids:
            return
        needles = briefing_needles(lead_ids, names)
        after: str | None = None
        while True:
            async with self.uow.transaction() as work:
                rows = await work.erasure.briefing_candidates(business_id, needles, after, BATCH)
                changed = 0
                for row in rows:
                    redacted = redacted_briefing(row.needs_owner, row.text, lead_ids, names)
                    if redacted is not None:
                        await work.erasure.rewrite_briefing(str(row.id), *redacted)
                        changed += 1
            erased.add("sdr.briefing", "redacted", changed)
            if len(rows) < BATCH:
                return
            after = str(rows[-1].id)

    async def _delete_leads(self, business_id: str, lead_ids: Sequence[str], erased: Erased) -> None:
        """These leads' interactions and activity entries, a batch at a time, then the leads."""
        while True:
            async with self.uow.transaction() as work:
                rows = await work.erasure.delete_interactions(business_id, lead_ids, BATCH)
            erased.add("sdr.interaction", "deleted", len(rows))
            erased.calls(r.reference for r in rows if r.channel == "call")
            if len(rows) < BATCH:
                break
        while True:
            async with self.uow.transaction() as work:
                deleted = await work.erasure.delete_activity(business_id, lead_ids, BATCH)
            erased.add("sdr.pipeline_activity", "deleted", deleted)
            if deleted < BATCH:
                break
        async with self.uow.transaction() as work:
            erased.add("sdr.lead", "deleted", await work.erasure.delete_leads(business_id, lead_ids))
