"""The retention job (issue 56): what a business keeps of its customers' personal data past the retention it set
(services.accounts.data_retention_rules) is deleted or redacted by the services holding it.

`DataRetentionRunner` runs a round every interval: it claims a few businesses whose retention is due (schema.
businesses.retention_next_at; a new business is due at once, and one that changed its retention too), each under a
lease of its own (FOR UPDATE SKIP LOCKED, then the lease: any number of replicas run each business once), torn-down
and paused ones included. For each it computes the cutoffs from now, then asks every service of core.registry.
PERSONAL_DATA_SERVICES to apply them (ApplyRetention, through the port, with no transaction or connection held),
asking a service again while its report says `more`, up to CALLS_PER_ROUND times. Every report line is logged
(business, run, service, what, action, count). A service that fails is logged and the others still run; the
business is then due again after the retry delay, or at once when a service had more than its round took, else a
day later (rules.next_run). The lease is renewed after each call, so a runner that died loses the business within
LEASE and another replica takes it over; each service's ApplyRetention is safe to repeat.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core import registry, tenant
from core.background import Periodic
from core.ids import new_id, utcnow
from core.uow import UnitOfWork
from services.accounts import data_retention_rules as rules
from services.accounts.privacy.personal_data import RetentionPort
from services.accounts.records import RetentionClaim
from services.accounts.repository import AccountsUnit

log = logging.getLogger(__name__)

ACTOR = "privacy-retention"
# A business's lease, renewed after each service's answer: longer than ApplyRetention's deadline (30 s) with room.
LEASE = timedelta(seconds=90)
CLAIM_BATCH = 5
BATCH = 100  # records of each kind one ApplyRetention deletes or redacts (the calls: 100 provider deletions, 5 at
# once, well within its 30 s deadline)
CALLS_PER_ROUND = 10  # ApplyRetention calls per service and business in a round (then: due again at once)


@dataclass
class RetentionRound:
    """How one business's round went: whether a service had more left than the round took, and which failed."""

    more: bool = False
    failed: list[str] = field(default_factory=list)


class DataRetention:
    def __init__(self, uow: UnitOfWork[AccountsUnit], services: RetentionPort, *, retry_seconds: float,
                 batch: int = BATCH, lease: timedelta = LEASE, calls_per_round: int = CALLS_PER_ROUND,
                 clock: Callable[[], datetime] = utcnow):
        self.uow = uow
        self.services = services
        self.retry = timedelta(seconds=retry_seconds)
        self.batch = batch
        self.lease = lease
        self.calls_per_round = calls_per_round
        self.clock = clock  # what is due, the cutoffs and the leases are of its time (the service's: utcnow)

    async def run_due(self, limit: int = CLAIM_BATCH) -> int:
        """Apply the retention of the businesses that are due, each claimed under its lease; how many were claimed."""
        async with self.uow.transaction() as work:
            claimed = await work.data_retention.claim_due(self.clock(), limit, self.lease)
        for business in claimed:
            await self.run(business)
        return len(claimed)

    async def run(self, business: RetentionClaim) -> RetentionRound | None:
        """One round of the business's retention; None when another runner took it over meanwhile."""
        run_id, now = new_id(), self.clock()
        cutoffs = rules.cutoffs_of(business.retention, now)
        done = RetentionRound()
        ctx = tenant.set_current(tenant.acting_for(business.business_id, ACTOR))
        try:
            for service in registry.PERSONAL_DATA_SERVICES:
                if not await self._apply(business, run_id, service, cutoffs, done):
                    return None
        finally:
            tenant.reset_current(ctx)
        next_at = rules.next_run(self.clock(), more=done.more, failed=bool(done.failed), retry=self.retry)
        async with self.uow.transaction() as work:
            if not await work.data_retention.finish(business.business_id, business.token, next_at):
                return None
        log.info("retention %s of business %s done (more: %s, failed: %s); due again at %s", run_id,
                 business.business_id, done.more, ", ".join(done.failed) or "none", next_at.isoformat())
        return done

    async def _apply(self, business: RetentionClaim, run_id: str, service: str, cutoffs: rules.Cutoffs,
                     done: RetentionRound) -> bool:
        """Ask `service` until it has nothing more past the cutoffs (or its calls of the round are spent); False
        when the lease was lost."""
        for _ in range(self.calls_per_round):
            try:
                report = await self.services.apply(service, business.business_id, run_id, cutoffs, self.batch)
            except Exception as exc:  # noqa: BLE001 - a refusal or an outage of one service: the others still run
                log.warning("retention %s of business %s: %s failed (%s: %s); retried later", run_id,
                            business.business_id, service, type(exc).__name__, exc)
                done.failed.append(service)
                return await self._renew(business)
            for line in report.items:
                log.info("retention %s of business %s: %s %s %s %d", run_id, business.business_id, service,
                         line["what"], line["action"], line["count"])
            if not await self._renew(business):
                return False
            if not report.more:
                return True
        done.more = True
        return True

    async def _renew(self, business: RetentionClaim) -> bool:
        async with self.uow.transaction() as work:
            kept = await work.data_retention.renew(business.business_id, business.token, self.clock() + self.lease)
        if not kept:
            log.warning("retention of business %s: its lease was taken over; this runner stops", business.business_id)
        return kept


class DataRetentionRunner(Periodic):
    """Every `interval` seconds: the businesses whose retention is due, claimed under their leases (run several
    replicas)."""

    task_name = "data-retention-runner"

    def __init__(self, job: DataRetention, interval: float):
        self.job = job
        self.interval = interval

    async def round(self) -> bool:
        return await self.job.run_due() >= CLAIM_BATCH
