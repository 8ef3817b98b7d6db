"""The retention a business set, applied to its calls (issue 56): `ApplyRetention`, asked by the accounts service's
retention job (services.accounts.privacy.data_retention), which alone may ask it (core.registry.RPC_CALLERS).

Two kinds are the calls service's, counted from when the call was made, on ended calls only:
- recordings (`recordings_before`): the recording is deleted at the voice provider and its link cleared here
  (GET /api/v1/recordings then answers none, and the provider's recording URL serves nothing);
- transcripts (`transcripts_before`): the transcript, the summary and the data extracted from it (structured_data),
  and the arguments and results of the call's tool calls (what the caller said to them), are cleared here, and the
  provider's copy deleted too. The call itself stays, redacted: its parties, status, duration, cost, timestamps,
  quality scores and recording consent are what counts, billing and the evidence need.
At the voice provider (Vapi) a call is one object holding its recording, transcript, messages and artifacts, and it
is deleted only as a whole (`VoiceProvider.delete_call`, as the erasure does): the call is deleted there as soon as
either kind is past its cutoff. So past `recordings_before` the provider's transcript goes too (ours stays until
`transcripts_before`), and past `transcripts_before` the recording goes with it (a recording is kept no longer than
its transcript). This service's own events still in its outbox that carry these fields are redacted alike.

Each kind takes up to `batch` calls a request, oldest first (`more` when there are more past the cutoff). The calls
are read, the connection released, the provider asked (no transaction or connection held meanwhile), then one
transaction rewrites them from their rows as they are then (a report that landed meanwhile is cleared too). A call
whose provider deletion failed is left as it was, and the request fails provider_error once the others are done:
the job asks again later. Repeating a request changes nothing more: a call cleared holds nothing a scan finds (the
partial indexes calls_recorded and calls_transcribed), and a provider's call already gone counts as deleted.
"""
from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from core.errors import ServiceError
from core.ids import require_uuid, utcnow
from core.messages import timestamp
from core.uow import UnitOfWork
from providers.voice.port import VoiceProvider
from services.calls.erasure import delete_at_provider, redacted_event
from services.calls.records import Call
from services.calls.repository import CallsUnit
from switchboard.v1 import common_pb2

log = logging.getLogger(__name__)

DEFAULT_BATCH, MAX_BATCH = 200, 500
RECORDING, TRANSCRIPT = "recording", "transcript"
REDACTED_TEXT = "[past retention]"  # a tool call's written result, once cleared
# What each kind clears on the call, and in its events.
CLEARED = {RECORDING: ("recording_url",), TRANSCRIPT: ("transcript", "summary", "structured_data")}
EVENT_FIELDS = {RECORDING: ("recording_url",),
                TRANSCRIPT: ("recording_url", "transcript", "summary", "contact_name", "contact_email", "intent")}
# The reply's lines, in order: (what, action).
RECORDINGS = ("calls.recording", "deleted")
TRANSCRIPTS = ("calls.transcript", "redacted")
PROVIDER_CALLS = ("provider.call", "provider_deleted")
TOOL_CALLS = ("calls.tool_call_arguments", "redacted")
OUTBOX = ("calls.outbox", "redacted")
REPORT = (RECORDINGS, TRANSCRIPTS, PROVIDER_CALLS, TOOL_CALLS, OUTBOX)


def kinds_past(call: dict[str, Any], recordings_before: datetime | None,
               transcripts_before: datetime | None) -> set[str]:
    """The kinds past their cutoff for a call (its columns as a dict)."""
    past = set()
    if recordings_before is not None and call["created_at"] < recordings_before:
        past.add(RECORDING)
    if transcripts_before is not None and call["created_at"] < transcripts_before:
        past.add(TRANSCRIPT)
    return past


def clearing(call: dict[str, Any], kinds: set[str]) -> dict[str, Any]:
    """The changes to a call once the provider's copy is gone and `kinds` are past retention: each kind's columns
    null, and the recording link in any case (the recording went with the provider's call); {} when it holds none
    of them."""
    columns = {"recording_url", *(column for kind in kinds for column in CLEARED[kind])}
    changes: dict[str, Any] = {column: None for column in columns if call[column] is not None}
    if changes:
        changes["updated_at"] = utcnow()
    return changes


class DataRetention:
    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider):
        self.uow = uow  # the calls, their tool calls and this service's outbox (services.calls.repository)
        self.voice = voice  # deletes the provider's copy of each call

    async def apply(self, request: common_pb2.RetentionRequest) -> common_pb2.RetentionReport:
        business_id = require_uuid(request.business_id, "business_id").lower()
        batch = min(request.batch or DEFAULT_BATCH, MAX_BATCH)
        if batch < 1:
            raise ServiceError("invalid_request", f"batch must be 1 to {MAX_BATCH}")
        cutoffs = {RECORDING: timestamp(request, "recordings_before"),
                   TRANSCRIPT: timestamp(request, "transcripts_before")}
        found: dict[str, Call] = {}
        more = False
        async with self.uow.read() as work:
            for kind, before in cutoffs.items():
                if before is not None:
                    calls = await work.calls.past_retention(business_id, kind, before, batch + 1)
                    more = more or len(calls) > batch
                    found.update((call.id, call) for call in calls[:batch])
        chosen = sorted(found.values(), key=lambda c: (c.created_at, c.id))
        deleted = await delete_at_provider(self.voice, chosen, f"retention {request.run_id}") if chosen else set()
        counts = dict.fromkeys(REPORT, 0)
        counts[PROVIDER_CALLS] = sum(1 for c in chosen if c.provider_call_id and c.id in deleted)
        await self._clear([c.id for c in chosen if c.id in deleted], cutoffs, counts)
        log.info("retention %s of business %s: %d calls past retention, %s%s", request.run_id, business_id,
                 len(chosen), ", ".join(f"{what} {action} {n}" for (what, action), n in counts.items()),
                 " (more left)" if more else "")
        if len(deleted) < len(chosen):
            raise ServiceError("provider_error", "the voice provider could not delete every call past retention; the "
                               "others are done, and the same request again finishes the rest")
        return common_pb2.RetentionReport(
            items=[common_pb2.ErasedItem(what=what, action=action, count=n) for (what, action), n in counts.items()],
            more=more)

    async def _clear(self, call_ids: list[str], cutoffs: dict[str, datetime | None],
                     counts: dict[tuple[str, str], int]) -> None:
        """Clear the calls as they stand now (locked), their tool calls and their events still in the outbox."""
        if not call_ids:
            return
        async with self.uow.transaction() as work:
            repository = work.calls
            rows = await repository.for_messages(call_ids, [])
            changes: dict[str, dict[str, Any]] = {}
            kinds_of: dict[str, set[str]] = {}
            for row in rows:
                kinds_of[row["id"]] = kinds_past(row, cutoffs[RECORDING], cutoffs[TRANSCRIPT])
                if change := clearing(row, kinds_of[row["id"]]):
                    changes[row["id"]] = change
                    counts[RECORDINGS] += 1 if "recording_url" in change else 0
                    counts[TRANSCRIPTS] += 1 if any(column in change for column in CLEARED[TRANSCRIPT]) else 0
            await repository.change_many(changes)
            transcribed = [i for i, kinds in kinds_of.items() if TRANSCRIPT in kinds and i in changes]
            if transcribed:
                counts[TOOL_CALLS] += await repository.redact_tool_calls(transcribed, {}, REDACTED_TEXT)
            events = {}
            for row_id, data in await repository.events_of_calls(list(changes)):
                kinds = kinds_of.get(str(data.get("call_id")), set())
                fields = {field for kind in kinds for field in EVENT_FIELDS[kind]}
                if (redacted := redacted_event(data, fields)) is not None:
                    events[row_id] = redacted
            await repository.change_event_data(events)
            counts[OUTBOX] += len(events)
