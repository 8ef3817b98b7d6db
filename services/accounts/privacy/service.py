"""Erasure of a person: the job (domain.py has the rules and the order of the steps).

`create` stores a job leased to this process and starts it at once in the background (a new erasure does not wait
for the runner's next round); `ErasureRunner` claims the jobs that are due (a retry's time has come, or a runner
died and its lease ran out) so that any number of replicas run each once. A job runs under its row's lease
(core.leases, renewed as each step is stored): each step calls its service (the port, personal_data.py) with no transaction or connection held, then
stores the step's report and the ids it found in a short transaction guarded by the lease, so a crash between the
two repeats a step, which is safe to repeat, and a job taken over resumes at the first step not done. A step that
fails leaves the job queued with its error and next attempt (domain.retry_delay); after the settings' attempts it
is failed. Completed, the raw subject is cleared in the same transaction that emits erasure.completed (the outbox),
which carries the report and no personal data, and that stores the erasure's replay entry (replay.py: the subject
sealed), which the runner's round queues again when a restore of a backup asks it to.
"""
from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Any

from core import leases, tenant
from core.background import Detached, Periodic
from core.errors import ServiceError, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.text import check_idempotency_key
from core.uow import UnitOfWork
from services.accounts.privacy import domain, replay
from services.accounts.privacy.personal_data import PersonalData
from services.accounts.records import ErasureRecord
from services.accounts.repository import AccountsUnit
from services.accounts.secret_keys import SecretKeys
from switchboard.v1 import accounts_pb2

log = logging.getLogger(__name__)

ACTOR = "privacy-erasure"
# A job's lease, renewed each time a step's report is stored: longer than any one step's deadline (ErasePerson's, 30 s)
# with room, so a live runner keeps its job and a dead one's is taken over within this.
LEASE = timedelta(seconds=90)
CLAIM_BATCH = 5
ERROR_MAX = 500
# What is cleared when a job is over: the raw subject and the fingerprint made of it (the masked forms stay).
FORGET_SUBJECT = {"phones": None, "emails": None, "subject_key": None, "request_hash": None}


class Erasures:
    def __init__(self, uow: UnitOfWork[AccountsUnit], personal_data: PersonalData, keys: SecretKeys, *,
                 retry_seconds: float, max_attempts: int, lease: timedelta = LEASE):
        self.uow = uow
        self.personal_data = personal_data
        self.keys = keys
        self.retry_seconds = retry_seconds
        self.max_attempts = max_attempts
        self.lease = lease
        self.started = Detached()  # the jobs `create` started

    # -- the public API (the caller: a key or a session, core.tenant) -----------------------------------------------

    async def create(self, business_id: str | None, phone: str | None, email: str | None, suppress: bool,
                     idempotency_key: str | None) -> tuple[ErasureRecord, bool]:
        """The erasure queued and started (False), or the one of the same subject still queued or running (True),
        or the one this idempotency key made (False; 409 conflict when it was made for another request)."""
        who = tenant.require_account()
        business = tenant.pick_business(who, business_id)
        key = check_idempotency_key(idempotency_key) if idempotency_key else None
        async with self.uow.read() as work:
            forward_to = await work.erasures.forward_to(business)
        subject = domain.subject_of(phone, email, domain.region_of(forward_to))
        fingerprint = domain.request_hash(business, subject, suppress)
        phone_masked, email_masked = subject.masked()
        now, token = utcnow(), new_id()
        async with self.uow.transaction() as work:
            if key is not None and (earlier := await work.erasures.by_key(business, key)) is not None:
                return self._replay(earlier, fingerprint), False
            if (active := await work.erasures.active_of(business, subject.key)) is not None:
                return active, True
            job = await work.erasures.add(
                id=new_id(), business_id=business, status=domain.QUEUED, phones=list(subject.phones),
                emails=list(subject.emails), subject_key=subject.key, phone_masked=phone_masked,
                email_masked=email_masked, suppress=suppress, idempotency_key=key, request_hash=fingerprint,
                next_attempt_at=now, lease_token=token, lease_until=now + self.lease, created_at=now, updated_at=now)
        if job is None:  # a request racing this one stored the key or the subject first
            async with self.uow.read() as work:
                earlier = await work.erasures.by_key(business, key) if key is not None else None
                if earlier is not None:
                    return self._replay(earlier, fingerprint), False
                active = await work.erasures.active_of(business, subject.key)
            if active is None:
                raise ServiceError("conflict", "another erasure of this person was being created; retry")
            return active, True
        log.info("erasure %s of business %s queued", job.id, business)
        self.started.start(self.run(job, token), f"erasure-{job.id}")
        return job, False

    @staticmethod
    def _replay(earlier: ErasureRecord, fingerprint: str) -> ErasureRecord:
        # Over, the job keeps no fingerprint (it was made of the subject): the key answers its erasure.
        if earlier.request_hash is not None and earlier.request_hash != fingerprint:
            raise ServiceError("conflict", "this Idempotency-Key was used for another erasure request; use a new key "
                               "for a new request")
        return earlier

    async def get(self, erasure_id: str) -> ErasureRecord:
        who = tenant.require_account()
        require_uuid(erasure_id, "id")
        async with self.uow.read() as work:
            job = await work.erasures.get(erasure_id, who.business_ids)
        if job is None:
            raise not_found("erasure")
        return job

    async def list(self, business_id: str | None, page: Page) -> Paged:
        who = tenant.require_account()
        scope = (tenant.pick_business(who, business_id),) if business_id else who.business_ids
        async with self.uow.read() as work:
            return await work.erasures.page(scope, page)

    # -- running -----------------------------------------------------------------------------------------------------

    async def run_due(self, limit: int = CLAIM_BATCH) -> int:
        """Run the jobs that are due, each claimed under its lease; how many were claimed."""
        async with self.uow.transaction() as work:
            claimed = await work.erasures.claim_due(limit, self.lease)
        for job in claimed:
            await self.run(job, job.lease_token or "")
        return len(claimed)

    async def run(self, job: ErasureRecord, token: str) -> ErasureRecord | None:
        """Run the job's steps from the first not done until it is over or a step fails; the job as it stands after,
        or None when another runner took it over (this one was too slow: its lease ran out)."""
        ctx = tenant.set_current(tenant.acting_for(job.business_id, ACTOR))
        step = domain.next_step(job.reports)
        try:
            saved = await self._save(job, token, status=domain.RUNNING)
            if saved is None:
                return None
            job = saved
            while step is not None:
                assert job.phones is not None and job.emails is not None  # kept until the job is over
                request = domain.step_request(job.id, job.business_id, job.phones, job.emails, job.suppress,
                                              job.found)
                report = await self.personal_data.erase(step, request)
                reports, found = domain.with_step(job.reports, job.found, step, report)
                saved = await self._save(job, token, reports=reports, found=found)
                if saved is None:
                    return None
                job, step = saved, domain.next_step(reports)
            return await self._complete(job, token)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of a step (a refusal, an outage, a deploy) is retried
            return await self._failed(job, token, step, exc)
        finally:
            tenant.reset_current(ctx)

    async def replay_requested(self, limit: int = CLAIM_BATCH) -> int:
        """Queue again the erasures a restore asked to replay (replay.py), each claimed; how many were claimed. One
        whose subject cannot be opened, whose business this database does not have (nothing of it to erase), or whose
        person has another erasure under way, is logged and left."""
        now = utcnow()
        async with self.uow.transaction() as work:
            entries = await work.erasure_replay.claim_requested(limit)
            for entry in entries:
                subject = replay.open_subject(self.keys, entry)
                if subject is None:
                    log.error("erasure %s of business %s cannot be replayed: its subject was sealed under a server "
                              "secret no longer held", entry.erasure_id, entry.business_id)
                elif not await work.erasures.business_exists(entry.business_id):
                    log.info("erasure %s not replayed: business %s is not in this database", entry.erasure_id,
                             entry.business_id)
                elif (active := await work.erasures.active_of(entry.business_id, subject.key)) is not None \
                        and active.id != entry.erasure_id:
                    log.info("erasure %s not replayed: erasure %s of the same person is under way", entry.erasure_id,
                             active.id)
                else:
                    await work.erasures.requeue(replay.requeued(entry, subject, now))
                    log.info("erasure %s of business %s queued again (replay after a restore)", entry.erasure_id,
                             entry.business_id)
                await work.erasure_replay.served(entry.erasure_id)
        return len(entries)

    async def _complete(self, job: ErasureRecord, token: str) -> ErasureRecord | None:
        now = utcnow()
        assert job.phones is not None and job.emails is not None  # kept until the job is over
        subject = replay.seal_subject(self.keys, job.id, job.phones, job.emails)
        async with self.uow.transaction() as work:
            done = await work.erasures.leased_update(job.id, token, {
                "status": domain.COMPLETED, "completed_at": now, "updated_at": now, "error": None,
                **FORGET_SUBJECT, **leases.RELEASED})
            if done is not None:
                await work.erasure_replay.add(erasure_id=done.id, business_id=done.business_id,
                                              suppress=done.suppress, subject=subject, completed_at=now)
                work.emit(accounts_pb2.ErasureCompleted(
                    erasure_id=done.id, business_id=done.business_id,
                    report=[accounts_pb2.ErasureStep(**line) for line in domain.report_lines(done.reports)]),
                    done.business_id)
        if done is not None:
            log.info("erasure %s of business %s completed", done.id, done.business_id)
        return done

    async def _failed(self, job: ErasureRecord, token: str, step: str | None, exc: Exception) -> ErasureRecord | None:
        reason = domain.failure(exc)
        reason = f"{step or 'completion'} step failed: {reason}"[:ERROR_MAX]
        attempts = job.attempts + 1
        now = utcnow()
        if domain.gives_up(attempts, self.max_attempts):
            log.error("erasure %s of business %s failed for good after %d attempts: %s", job.id, job.business_id,
                      attempts, reason)
            return await self._save(job, token, status=domain.FAILED, attempts=attempts, error=reason,
                                    completed_at=now, **FORGET_SUBJECT, **leases.RELEASED)
        log.warning("erasure %s of business %s: attempt %d failed, retried later: %s", job.id, job.business_id,
                    attempts, reason)
        return await self._save(job, token, status=domain.QUEUED, attempts=attempts, error=reason,
                                next_attempt_at=now + domain.retry_delay(attempts, self.retry_seconds),
                                **leases.RELEASED)

    async def _save(self, job: ErasureRecord, token: str, **values: Any) -> ErasureRecord | None:
        """The job after `values`, its lease renewed unless they release it (None: another runner took it over)."""
        now = utcnow()
        async with self.uow.transaction() as work:
            return await work.erasures.leased_update(job.id, token, {
                "updated_at": now, "lease_until": now + self.lease, **values})


class ErasureRunner(Periodic):
    """Every `interval` seconds: the erasures a restore asked to replay queued again, then the erasures that are due,
    claimed under their leases (run several replicas)."""

    task_name = "erasure-runner"

    def __init__(self, erasures: Erasures, interval: float):
        self.erasures = erasures
        self.interval = interval

    async def round(self) -> bool:
        replayed = await self.erasures.replay_requested()
        return await self.erasures.run_due() >= CLAIM_BATCH or replayed >= CLAIM_BATCH

    async def stop(self) -> None:
        await super().stop()
        await self.erasures.started.stop()
