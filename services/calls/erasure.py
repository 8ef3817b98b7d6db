"""A person's erasure from the calls service (issue 56): `ErasePerson`, a step of the accounts service's privacy
job (services.accounts.privacy), which alone may ask it (core.registry.RPC_CALLERS).

Which calls: those of the request's business, not erased yet, whose other party is one of the person's phones (an
inbound call's caller, `from_number`; an outbound call's callee, `to_number`), whose collected email
(`structured_data.email`, in lower case) is one of their emails, or which the earlier steps named (`call_ids`, or
`lead_ids`: the call's lead). An id of another business's call, or a malformed one, finds nothing, however it is
given.

Each call is deleted at the voice provider first (`VoiceProvider.delete_call`: the call with its recording,
transcript and artifact; one already gone counts as deleted), with no transaction or connection held: the ids are
read, the connection released, the provider asked, and then one transaction per batch redacts our rows, their tool
calls and this service's outbox rows that name them. A crash between the two leaves our row as it was, still found
by the same request: the repeat asks the provider again (a 404 there: done) and redacts it. A call once redacted
has `erased_at` and is never found again, so the same request again changes nothing and reports zeros. A call the
provider could not delete (an outage) is left unredacted and the request fails `provider_error` once the others
are done, for the job to retry.

What a redacted call keeps and loses (`redaction`):
- gone (null): transcript, recording_url, summary, structured_data (the collected name, email and intent), name,
  context and first_message (the business's words for this person), and the first name in `variables`;
- the person's numbers become ERASED_NUMBER ("[erased]", which is no phone number: nothing dials or matches it):
  the other party's number, and any number of the call that is one of the person's phones (a forward-to phone);
- kept, for billing, analytics and evidence: ids (the lead's, whose record sdr erases, and the provider's),
  direction, status, ended_reason, answered, duration, cost, the timestamps, the quality scores, the recording
  disclosure and the consent answer ({type, granted_at}), the business's own number, the run's references;
- `erased_at` is set: the writers that could bring personal data back leave it out from then on
  (lifecycle_service: a status update or an end-of-call report still moves the call and its cost, but writes no
  transcript, recording, summary or extracted data, and its events name no one; tools_service: a tool call of
  the call is refused and recorded nowhere; service: a call erased while it was being placed is deleted at the
  provider once its id is known).
Its tool calls keep their name, outcome and timing; their arguments become {} and a written result ERASED_TEXT.
Its events still waiting in the outbox (or kept there after publication) keep their id, type and business; their
personal fields (`PERSONAL_EVENT_FIELDS`) become null.

The reply counts what changed, a line per kind (`REPORT`), and names the calls found (and their leads) for the
steps after (webhooks' event history names them).

A torn-down business's deletion (`whole_business`, services.accounts.privacy.teardown_deletion) erases every call of
the business the same way (the other party's number is the person's), BUSINESS_BATCHES batches per request, and
answers `more` while there may be others; it names no ids (the steps after take the business whole)."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core import erasure_subject as subject
from core.errors import ServiceError
from core.ids import require_uuid, utcnow
from core.uow import UnitOfWork
from providers.voice.port import ProviderError, VoiceProvider
from services.calls.records import Call
from services.calls.repository import CallsUnit
from switchboard.v1 import common_pb2

log = logging.getLogger(__name__)

ERASED_NUMBER = "[erased]"
ERASED_TEXT = "[erased]"
# The columns an erased call never gets back, whoever writes (the end-of-call report above all).
PERSONAL_COLUMNS = ("transcript", "recording_url", "summary", "structured_data", "name", "context", "first_message")
PARTY_COLUMNS = ("to_number", "from_number")  # the two ends of the call
NUMBER_COLUMNS = (*PARTY_COLUMNS, "forwarded_to")  # forwarded_to: the business's forward-to phone (a transfer's)
PERSONAL_VARIABLES = ("name",)  # domain.enrichment's: the person's first name
# What this service's events (events.proto: call.*, voicemail.received) carry of the other party.
PERSONAL_EVENT_FIELDS = ("to", "from", "from_number", "summary", "transcript", "recording_url", "contact_name",
                         "contact_email", "intent")
BATCH = 25  # calls deleted at the provider, then redacted in one transaction
BUSINESS_BATCHES = 4  # a whole business's deletion: batches per request (`more` past them), well within its deadline
AT_ONCE = 5  # provider deletions in flight
# The reply's lines, in order: (what, action).
CALLS = ("calls.call", "redacted")  # the calls redacted
TRANSCRIPTS = ("calls.transcript", "redacted")  # of those, the ones with a transcript
RECORDINGS = ("calls.recording", "redacted")  # and with a recording
PROVIDER_CALLS = ("provider.call", "provider_deleted")  # the provider's calls deleted (or found gone)
TOOL_CALLS = ("calls.tool_call_arguments", "redacted")
OUTBOX = ("calls.outbox", "redacted")  # this service's events that named them
REPORT = (CALLS, TRANSCRIPTS, RECORDINGS, PROVIDER_CALLS, TOOL_CALLS, OUTBOX)


# -- the rules -----------------------------------------------------------------------------------------------------

def redaction(call: dict[str, Any], phones: Iterable[str]) -> dict[str, Any]:
    """The changes that redact a call (its columns as a dict) of the person with these phones: see the module's
    docstring. The same whatever the call holds now, so a report that landed meanwhile is redacted too."""
    changes: dict[str, Any] = dict.fromkeys(PERSONAL_COLUMNS)
    person = set(phones)
    other_party = "from_number" if call["direction"] == "inbound" else "to_number"
    for column in NUMBER_COLUMNS:
        if call[column] is not None and (column == other_party or call[column] in person):
            changes[column] = ERASED_NUMBER
    variables = call["variables"] or {}
    changes["variables"] = {k: v for k, v in variables.items() if k not in PERSONAL_VARIABLES}
    now = utcnow()
    changes["erased_at"] = changes["updated_at"] = now
    return changes


def without_personal(call: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """What a writer may still change on the call: all of `changes`, or for an erased call none of its personal
    columns (its status, timing and cost still move: billing needs them)."""
    if call.get("erased_at") is None:
        return changes
    return {k: v for k, v in changes.items() if k not in PERSONAL_COLUMNS and k not in PARTY_COLUMNS}


def for_events(call: dict[str, Any]) -> dict[str, Any]:
    """The call as its events show it: an erased call's numbers blank (a consumer finds no one by them: sdr counts
    no contact, messaging records no consent)."""
    if call.get("erased_at") is None:
        return call
    return {**call, **{column: ("" if column == "to_number" else None) for column in NUMBER_COLUMNS
                       if call[column] == ERASED_NUMBER}}


def redacted_event(data: dict[str, Any], fields: Iterable[str] = PERSONAL_EVENT_FIELDS) -> dict[str, Any] | None:
    """An outbox event's data with its personal `fields` null, or None when it holds none (nothing to change)."""
    fields = tuple(fields)
    if all(data.get(f) in (None, "") for f in fields):
        return None
    return {**data, **{f: None for f in fields if f in data}}


async def delete_at_provider(voice: VoiceProvider, calls: list[Call], why: str) -> set[str]:
    """The ids of the calls the voice provider no longer holds (deleted now, found gone, or never placed there),
    AT_ONCE deletions in flight; a deletion that failed is logged under `why` (the erasure, the retention round)."""
    limit = asyncio.Semaphore(AT_ONCE)

    async def delete(call: Call) -> str | None:
        if not call.provider_call_id:
            return call.id
        async with limit:
            try:
                await voice.delete_call(call.provider_call_id)
            except ProviderError as exc:
                log.warning("%s: the voice provider did not delete call %s (%s): retried later", why, call.id,
                            exc.message)
                return None
        return call.id

    return {i for i in await asyncio.gather(*(delete(c) for c in calls)) if i is not None}


@dataclass
class Tally:
    """What one request changed, per line of REPORT."""

    counts: dict[tuple[str, str], int]

    @classmethod
    def empty(cls) -> Tally:
        return cls(dict.fromkeys(REPORT, 0))

    def add(self, line: tuple[str, str], n: int = 1) -> None:
        self.counts[line] += n

    def items(self) -> list[common_pb2.ErasedItem]:
        return [common_pb2.ErasedItem(what=what, action=action, count=self.counts[(what, action)])
                for what, action in REPORT]


# -- the use case --------------------------------------------------------------------------------------------------

class Erasure:
    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider, *, batch: int = BATCH):
        self.uow = uow  # the calls, their tool calls and this service's outbox (services.calls.repository)
        self.voice = voice  # deletes the provider's copy of each call
        self.batch = batch

    async def erase(self, request: common_pb2.ErasureRequest) -> common_pb2.ErasureReport:
        business_id = require_uuid(request.business_id, "business_id").lower()
        phones, emails = list(subject.phones(request.phones)), list(subject.emails(request.emails))
        call_ids, lead_ids = list(subject.ids(request.call_ids)), list(subject.ids(request.lead_ids))
        found: list[Call] = []
        whole = request.whole_business
        if whole:
            async with self.uow.read() as work:
                found = await work.calls.business_erasable(business_id, self.batch * BUSINESS_BATCHES)
        elif phones or emails or call_ids or lead_ids:
            async with self.uow.read() as work:
                found = await work.calls.erasable(business_id, phones, emails, call_ids, lead_ids)
        tally, failed = Tally.empty(), None
        for start in range(0, len(found), self.batch):
            chunk = found[start:start + self.batch]
            deleted = await delete_at_provider(self.voice, chunk, f"erasure {request.erasure_id}")
            tally.add(PROVIDER_CALLS, sum(1 for c in chunk if c.provider_call_id and c.id in deleted))
            failed = failed or next((c for c in chunk if c.id not in deleted), None)
            await self._redact([c.id for c in chunk if c.id in deleted], phones, tally)
        log.info("erasure %s: %d calls of business %s found, %s", request.erasure_id, len(found), business_id,
                 ", ".join(f"{what} {action} {n}" for (what, action), n in tally.counts.items()))
        if failed is not None:
            raise ServiceError("provider_error", "the voice provider could not delete every call of this person; "
                               "the others are erased, and the same request again finishes the rest")
        if whole:  # the ids would be every call of the business: the later steps take the business whole too
            return common_pb2.ErasureReport(items=tally.items(), more=len(found) >= self.batch * BUSINESS_BATCHES)
        return common_pb2.ErasureReport(items=tally.items(), call_ids=[c.id for c in found],
                                        lead_ids=sorted({c.lead_id for c in found if c.lead_id}))

    async def _redact(self, call_ids: list[str], phones: list[str], tally: Tally) -> None:
        """Redact the calls (those another erasure did not redact meanwhile), their tool calls and their events."""
        if not call_ids:
            return
        async with self.uow.transaction() as work:
            repository = work.calls
            rows = [row for row in await repository.for_messages(call_ids, []) if row["erased_at"] is None]
            if not rows:
                return
            ids = [row["id"] for row in rows]
            await repository.change_many({row["id"]: redaction(row, phones) for row in rows})
            tally.add(CALLS, len(rows))
            tally.add(TRANSCRIPTS, sum(1 for row in rows if row["transcript"]))
            tally.add(RECORDINGS, sum(1 for row in rows if row["recording_url"]))
            tally.add(TOOL_CALLS, await repository.redact_tool_calls(ids, {}, ERASED_TEXT))
            changed = {row_id: data for row_id, data in
                       ((row_id, redacted_event(data)) for row_id, data in await repository.events_of_calls(ids))
                       if data is not None}
            await repository.change_event_data(changed)
            tally.add(OUTBOX, len(changed))

