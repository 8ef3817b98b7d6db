"""Inbound calls the provider took that its server messages never told us of. The provider sends an
`assistant-request` once and its other messages with a few quick retries: while a gateway or this service is down,
every one of a call's messages can fail, and the call (a caller, often a new lead) would be lost.

Every interval one replica (the round is claimed: `CallsRepository.claim_round`) reads the provider's calls created
in the last `lookback` and records each ended inbound call we have no record of (by the provider's call id) through
the end-of-call report's own path (`Lifecycle.apply`: the call recorded as an assistant-request would have, with its
lead and `call.received`, then moved to its outcome with its terminal event), so a late message of the same call
changes nothing more, and a call recorded meanwhile is not recorded twice. A call our answer refused on purpose
(a number no agent of ours answers, a business held: the provider's ended message is the words we gave it) was not
lost and stays unrecorded, as the inbound path left it; so is one to a number no business of ours holds, or whose
business may not take calls now. Outbound calls, which we place with our id, are never listed
(`VoiceProvider.inbound_calls_since`).

The provider is asked with no connection held; each write is the report path's own short transaction."""
from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.voice.port import CallReport, ProviderError, VoiceProvider
from services.calls.inbound_service import HELD_MESSAGE, NOT_IN_SERVICE
from services.calls.lifecycle_service import Lifecycle
from services.calls.repository import CallsUnit

log = logging.getLogger(__name__)
ROUND = "inbound-reconciliation"  # the claimed round's name
# A call's messages normally reach us within seconds of its end: one that ended more recently is left to them.
SETTLE = timedelta(seconds=5)
REFUSALS = frozenset({HELD_MESSAGE, NOT_IN_SERVICE})  # the words of our answers that refuse a call on purpose


def unrecorded(reports: Sequence[CallReport], recorded: Iterable[str], now: datetime,
               settle: timedelta = SETTLE) -> list[CallReport]:
    """The provider's ended inbound calls we have no record of (`recorded`: the provider call ids we have), that
    ended at least `settle` ago (a call with no end time has no messages still coming), each once; never one our
    answer refused on purpose."""
    seen = set(recorded)
    missing = []
    for report in reports:
        call = report.call
        if not call.inbound or not call.provider_call_id or call.provider_call_id in seen:
            continue
        if report.ended_message in REFUSALS:
            continue
        if report.ended_at is not None and report.ended_at > now - settle:
            continue
        seen.add(call.provider_call_id)
        missing.append(report)
    return missing


class InboundReconciliation(Periodic):
    task_name = "calls-inbound-reconciliation"

    def __init__(self, uow: UnitOfWork[CallsUnit], voice: VoiceProvider, lifecycle: Lifecycle, *, interval: float,
                 lookback: timedelta):
        self.uow, self.voice, self.lifecycle = uow, voice, lifecycle
        self.interval, self.lookback = interval, lookback

    async def round(self) -> bool:
        async with self.uow.transaction() as work:
            claimed = await work.calls.claim_round(ROUND, timedelta(seconds=self.interval))
        if claimed:
            await self.reconcile()
        return False

    async def reconcile(self) -> int:
        """Record the provider's ended inbound calls we missed; how many were missing."""
        now = utcnow()
        try:
            listed = await self.voice.inbound_calls_since(now - self.lookback)
        except ProviderError as exc:
            log.info("inbound reconciliation: the voice provider could not be asked (%s); next round", exc)
            return 0
        candidates = unrecorded(listed, (), now)
        if not candidates:
            return 0
        async with self.uow.read() as work:
            recorded = await work.calls.recorded_provider_ids([r.call.provider_call_id for r in candidates])
        missing = unrecorded(candidates, recorded, now)
        for report in missing:
            log.info("inbound reconciliation: provider call %s is not recorded; recording it (%s)",
                     report.call.provider_call_id, report.ended_reason)
            await self.lifecycle.apply([report])
        return len(missing)
