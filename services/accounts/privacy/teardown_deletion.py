"""A torn-down business's data deletion (issue 56, docs/privacy.md "Teardown deletes"): the rules, and the claimed job.

The teardown (PATCH /api/v1/workspaces/{id} action=teardown) sets `data_deletion_due_at` to the teardown's time plus
the grace period (TEARDOWN_GRACE_DAYS, for billing disputes: accounts.domain.data_deletion_due). From then on `TeardownDeletionRunner` claims each
business whose deletion is due under the deletion's own lease (any number of replicas run each once) and runs its
steps (STEPS): each service of core.registry.TEARDOWN_SERVICES in order (agents first: its assistants at the voice
provider; then sdr, calls, messaging, webhooks) asked ErasePerson with `whole_business`, again while its report says
`more`, with no transaction or connection held while it answers; each round's report is added to the step's
(`with_round`) and stored at once, under the lease, so a deletion taken over after a crash resumes at the round it
was at (every round is safe to repeat). Last, the ACCOUNTS step closes the business's access here, in one
transaction that also sets `data_deleted_at` (`close_access`). A step that fails leaves the deletion due again after
privacy.domain.retry_delay; it is never given up (it must end), its error kept for the operator.

Once deleted, the business is a tombstone: its row stays (invoices and usage need it), no principal reaches it
(store.standings_of), and its workspace read answers data_deleted_at to the services acting for it.
"""
from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from core import registry, tenant
from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from services.accounts.ports import Invalidation
from services.accounts.privacy import domain
from services.accounts.privacy.personal_data import PersonalData
from services.accounts.privacy.service import ERROR_MAX, FORGET_SUBJECT, LEASE
from services.accounts.records import DataDeletionRecord
from services.accounts.repository import AccountsUnit
from services.accounts.teardown_repository import RELEASED

log = logging.getLogger(__name__)

ACTOR = "privacy-teardown"
ACCOUNTS = "accounts"  # the last step: this service's own records of the business
STEPS: tuple[str, ...] = (*registry.TEARDOWN_SERVICES, ACCOUNTS)
CLAIM_BATCH = 5
MAX_ROUNDS = 1000  # rounds of one step in one run (a service that keeps saying `more` yields to the others)


# -- the rules -------------------------------------------------------------------------------------------------------

def next_step(steps: dict[str, Any]) -> str | None:
    """The first step not done (None: every one is)."""
    return next((step for step in STEPS if not steps.get(step, {}).get("done")), None)


def with_round(steps: dict[str, Any], step: str, items: tuple[dict[str, Any], ...] | list[dict[str, Any]],
               more: bool) -> dict[str, Any]:
    """The steps once `step` answered a round: its lines' counts added to those of the rounds before (line order
    kept), done unless it said `more`."""
    counts: dict[tuple[str, str], int] = {(line["what"], line["action"]): int(line["count"])
                                          for line in steps.get(step, {}).get("lines", ())}
    for item in items:
        key = (item["what"], item["action"])
        counts[key] = counts.get(key, 0) + int(item["count"])
    lines = [{"what": what, "action": action, "count": n} for (what, action), n in counts.items()]
    return {**steps, step: {"lines": lines, "done": not more}}


def report_lines(steps: dict[str, Any]) -> list[dict[str, Any]]:
    """{service, what, action, count} per line, in step order."""
    return [{"service": step, **line} for step in STEPS for line in steps.get(step, {}).get("lines", ())]


def summary(lines: list[dict[str, Any]]) -> str:
    return ", ".join(f"{line['what']} {line['action']} {line['count']}" for line in lines if line["count"]) or \
        "nothing found"


# -- the job ---------------------------------------------------------------------------------------------------------

class TeardownDeletions:
    def __init__(self, uow: UnitOfWork[AccountsUnit], personal_data: PersonalData, identity: Invalidation, *,
                 retry_seconds: float, lease: timedelta = LEASE):
        self.uow = uow
        self.personal_data = personal_data
        self.identity = identity  # tells the gateways to forget the account's cached principals
        self.retry_seconds = retry_seconds
        self.lease = lease

    async def run_due(self, limit: int = CLAIM_BATCH) -> int:
        """Run the deletions that are due, each claimed under its lease; how many were claimed."""
        async with self.uow.transaction() as work:
            claimed = await work.data_deletions.claim_due(limit, self.lease)
        for job in claimed:
            await self.run(job, job.data_deletion_lease_token or "")
        return len(claimed)

    async def run(self, job: DataDeletionRecord, token: str) -> DataDeletionRecord | None:
        """Run the steps from the first not done until the data is deleted or a step fails; the deletion as it
        stands after, or None when another runner took it over (this one's lease ran out)."""
        ctx = tenant.set_current(tenant.acting_for(job.id, ACTOR))
        step = next_step(job.data_deletion_steps)
        rounds = 0
        try:
            while step is not None and step != ACCOUNTS and rounds < MAX_ROUNDS:
                report = await self.personal_data.erase_business(step, job.id)
                rounds += 1
                steps = with_round(job.data_deletion_steps, step, report.items, report.more)
                if not report.more:
                    log.info("teardown deletion of business %s: %s done: %s", job.id, step,
                             summary(steps[step]["lines"]))
                saved = await self._save(job, token, data_deletion_steps=steps)
                if saved is None:
                    return None
                job, step = saved, next_step(steps)
            if step is None:  # done already
                return job
            if step == ACCOUNTS:
                return await self._close_access(job, token)
            # MAX_ROUNDS: let the lease go, due again at once for any runner.
            return await self._save(job, token, data_deletion_next_at=utcnow(), **RELEASED)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of a step (a refusal, an outage, a deploy) is retried
            return await self._failed(job, token, step, exc)
        finally:
            tenant.reset_current(ctx)

    async def _close_access(self, job: DataDeletionRecord, token: str) -> DataDeletionRecord | None:
        """The last step, in one transaction: the business's keys revoked, the account's access ended where it
        reaches nothing else, its OAuth grants without it, its erasures not over ended, and the data deleted."""
        now = utcnow()
        async with self.uow.transaction() as work:
            deletions = work.data_deletions
            items = [{"what": "accounts.api_key", "action": "revoked",
                      "count": await deletions.revoke_keys(job.id, now)}]
            if await deletions.other_live_business(job.account_id, job.id):
                account_keys, ended = 0, 0
            else:
                account_keys, ended = await deletions.close_account(job.account_id, now)
            narrowed, revoked = await deletions.drop_from_grants(job.account_id, job.id, now)
            items += [{"what": "accounts.api_key", "action": "revoked_account_wide", "count": account_keys},
                      {"what": "accounts.session", "action": "ended", "count": ended},
                      {"what": "accounts.oauth_grant", "action": "narrowed", "count": narrowed},
                      {"what": "accounts.oauth_grant", "action": "revoked", "count": revoked},
                      {"what": "accounts.erasure", "action": "ended",
                       "count": await deletions.end_erasures(job.id, now, FORGET_SUBJECT)}]
            steps = with_round(job.data_deletion_steps, ACCOUNTS, items, False)
            done = await deletions.leased_update(job.id, token, {
                "data_deletion_steps": steps, "data_deleted_at": now, "data_deletion_error": None,
                "updated_at": now, **RELEASED})
        if done is not None:
            await self.identity.invalidate(job.account_id)
            log.info("teardown deletion of business %s: accounts done: %s", job.id, summary(items))
            log.info("teardown deletion of business %s completed: %s", job.id, summary(report_lines(steps)))
        return done

    async def _failed(self, job: DataDeletionRecord, token: str, step: str | None,
                      exc: Exception) -> DataDeletionRecord | None:
        reason = domain.failure(exc)
        reason = f"{step} step failed: {reason}"[:ERROR_MAX]
        attempts = job.data_deletion_attempts + 1
        log.warning("teardown deletion of business %s: attempt %d failed, retried later: %s", job.id, attempts,
                    reason)
        return await self._save(job, token, data_deletion_attempts=attempts, data_deletion_error=reason,
                                data_deletion_next_at=utcnow() + domain.retry_delay(attempts, self.retry_seconds),
                                **RELEASED)

    async def _save(self, job: DataDeletionRecord, token: str, **values: Any) -> DataDeletionRecord | None:
        """The deletion after `values`, its lease renewed unless they release it (None: another runner took it)."""
        now = utcnow()
        async with self.uow.transaction() as work:
            return await work.data_deletions.leased_update(job.id, token, {
                "updated_at": now, "data_deletion_lease_until": now + self.lease, **values})


class TeardownDeletionRunner(Periodic):
    """Every `interval` seconds: the torn-down businesses whose deletion is due, claimed under their leases."""

    task_name = "teardown-deletion-runner"

    def __init__(self, deletions: TeardownDeletions, interval: float):
        self.deletions = deletions
        self.interval = interval

    async def round(self) -> bool:
        return await self.deletions.run_due() >= CLAIM_BATCH
