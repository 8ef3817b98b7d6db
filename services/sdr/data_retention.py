"""The retention a business set, applied by the sdr service (ApplyRetention: the accounts service's retention job
asks it, again while the report says `more`; core.registry lets no other process ask). Issue 56.

What the sdr service holds of the issue's kinds (recordings, transcripts, message bodies, webhook event history,
evidence logs), and what becomes of it past its cutoff (an unset cutoff keeps that kind; at most `batch` records of
each kind a call, oldest first):

- voicemails: the transcript deleted past `transcripts_before`, the recording link past `recordings_before`, by when
  the voicemail was received (the voicemail itself stays: who called, when, the lead; the recording at the provider
  is the calls service's to delete, with the call's);
- communication runs' text touches that ended before `message_bodies_before`: the words they sent (their context's
  body) deleted; the touch keeps its number, status, outcome and the rest of its context (a touch still waiting
  keeps its words until it has ended).

The evidence logs are not here: the compliance decision log of calls and texts alike, and the consent history, are
the messaging service's (services.messaging.data_retention). Other things this service holds are none of the kinds
and stay until a person's erasure or the business's teardown: leads (their names, numbers, notes and scores are the
business's records of its customers), bookings and their notes, the pipeline's activity, the owner's briefings.
The outbox's events are the platform's own records, pruned within RETENTION_OUTBOX_DAYS (core.retention).

No provider is called. Each kind is one transaction over one batch; a repeated call finds nothing and answers
zeros."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime

from core import data_retention
from core.data_retention import Asked
from core.uow import UnitOfWork
from services.sdr.repository import SdrUnit

log = logging.getLogger(__name__)

# The report's lines, in order: (what, action). Every line is reported, zeros too.
TRANSCRIPTS, RECORDINGS, TOUCH_BODIES = (("sdr.voicemail_transcript", "deleted"),
                                         ("sdr.voicemail_recording_link", "deleted"),
                                         ("sdr.run_touch_body", "deleted"))
ITEMS = (TRANSCRIPTS, RECORDINGS, TOUCH_BODIES)
# Each line's cutoff (a RetentionRequest field) and the method of the unit's data_retention repository applying it.
STEPS: tuple[tuple[tuple[str, str], str, str], ...] = (
    (TRANSCRIPTS, "transcripts_before", "transcripts"),
    (RECORDINGS, "recordings_before", "recordings"),
    (TOUCH_BODIES, "message_bodies_before", "touch_bodies"))


@dataclass
class Applied:
    counts: dict[tuple[str, str], int] = field(default_factory=lambda: dict.fromkeys(ITEMS, 0))
    more: bool = False

    def items(self) -> list[tuple[str, str, int]]:
        return [(what, action, self.counts[(what, action)]) for what, action in ITEMS]


class DataRetention:
    def __init__(self, uow: UnitOfWork[SdrUnit]):
        self.uow = uow

    async def apply(self, asked: Asked) -> Applied:
        applied = Applied()
        for line, cutoff, method in STEPS:
            before = getattr(asked, cutoff)
            if before is None:
                continue
            async with self.uow.transaction() as work:
                step: Callable[[str, datetime, int], Awaitable[tuple[int, bool]]] = getattr(work.data_retention, method)
                applied.counts[line], more = await step(asked.business_id, before, asked.batch)
            applied.more |= more
        log.info("retention %s of business %s in sdr: %s%s", asked.run_id or "-", asked.business_id,
                 data_retention.summary(applied.items()), " (more to do)" if applied.more else "")
        return applied
