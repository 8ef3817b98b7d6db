"""Export of a business's data: the job (export_domain.py has the rules and the archive's bytes).

`create` stores a job leased to this process and starts it at once in the background; `ExportRunner` claims the
jobs that are due (a retry's time has come, or a runner died and its lease ran out) so that any number of replicas
run each once, and deletes the archives past their expiry (claimed too: locked rows are skipped). A job runs under
its row's lease (core.leases, renewed with each page): a page is asked of the service holding its kind (the port,
export_sources.py; the accounts service's own kinds are read here) with no transaction or connection held, then
stored as one part in the short transaction, guarded by the lease, that advances the kind's cursor: a crash between
the two asks the same page again, and a job taken over resumes at the page after the last one stored. Once every
kind is written, the parts are read back in order for the archive's SHA-256 and the manifest's part completes it.
A page that fails leaves the job queued with its error and next attempt (privacy.domain.retry_delay); after the
settings' attempts it is failed and its parts deleted.

The archive is served through a signed link (export_domain): the link is the credential, and a caller who comes
with a key or session of another business finds nothing.
"""
from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from contracts.exports import ACCOUNTS, BY_NAME, KINDS, Kind
from core import leases, tenant
from core.background import Detached, Periodic
from core.errors import ServiceError, invalid, not_found
from core.export_page import line
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.text import check_idempotency_key
from core.uow import UnitOfWork
from services.accounts import secret_keys
from services.accounts.ports import PublicRecords
from services.accounts.privacy import domain
from services.accounts.privacy import export_domain as rules
from services.accounts.privacy.export_sources import ExportSources, PageRequest, RecordsPage
from services.accounts.records import ExportRecord
from services.accounts.repository import AccountsUnit
from services.accounts.secret_keys import SecretKeys

log = logging.getLogger(__name__)

ACTOR = "privacy-export"
# A job's lease, renewed with each page stored: longer than any one page's deadline with room, so a live runner
# keeps its job and a dead one's is taken over within this.
LEASE = timedelta(seconds=90)
CLAIM_BATCH = 5
EXPIRE_BATCH = 20
RENEW_EVERY_PARTS = 200  # while the parts are read back for the digest
ERROR_MAX = 500
GONE = ("this export's archive was deleted when it expired (EXPORT_RETENTION_HOURS after it completed); start a new "
        "export with POST /api/v1/exports")


@dataclass(frozen=True)
class Link:
    """A completed export's signed download link: its query and when it stops working."""

    query: str
    expires_at: datetime


class Exports:
    def __init__(self, uow: UnitOfWork[AccountsUnit], sources: ExportSources, public: PublicRecords, keys: SecretKeys, *,
                 retry_seconds: float, max_attempts: int, retention: timedelta, link_seconds: int,
                 kinds: tuple[Kind, ...] = KINDS, lease: timedelta = LEASE):
        self.uow = uow
        self.sources = sources
        self.public = public
        self.keys = keys
        self.retry_seconds = retry_seconds
        self.max_attempts = max_attempts
        self.retention = retention
        self.link_seconds = link_seconds
        self.kinds = kinds
        self.lease = lease
        self.started = Detached()  # the jobs `create` started

    # -- the public API (the caller: a key or a session, core.tenant) -----------------------------------------------

    async def create(self, business_id: str | None, idempotency_key: str | None) -> ExportRecord:
        """The export queued and started; or the one this idempotency key of the business made; or, while one of
        the business is under way, that one (an export is of everything: a second at once would be the same)."""
        who = tenant.require_account()
        business = tenant.pick_business(who, business_id)
        key = check_idempotency_key(idempotency_key) if idempotency_key else None
        now, token = utcnow(), new_id()
        async with self.uow.transaction() as work:
            if key is not None and (earlier := await work.exports.by_key(business, key)) is not None:
                return earlier
            if (under_way := await work.exports.under_way(business)) is not None:
                return under_way
            job = await work.exports.add(
                id=new_id(), business_id=business, status=rules.QUEUED, kinds=rules.initial_progress(self.kinds),
                idempotency_key=key, next_attempt_at=now, lease_token=token, lease_until=now + self.lease,
                created_at=now, updated_at=now)
        if job is None:  # a request racing this one stored the key, or an export, first
            async with self.uow.read() as work:
                earlier = await work.exports.by_key(business, key) if key is not None else None
                earlier = earlier or await work.exports.under_way(business)
            if earlier is None:
                raise ServiceError("conflict", "another export of this business was being created; retry")
            return earlier
        log.info("export %s of business %s queued", job.id, business)
        self.started.start(self.run(job, token), f"export-{job.id}")
        return job

    async def get(self, export_id: str) -> ExportRecord:
        who = tenant.require_account()
        require_uuid(export_id, "id")
        async with self.uow.read() as work:
            job = await work.exports.get(export_id, who.business_ids)
        if job is None:
            raise not_found("export")
        return job

    async def list(self, business_id: str | None, page: Page) -> Paged:
        who = tenant.require_account()
        scope = (tenant.pick_business(who, business_id),) if business_id else who.business_ids
        async with self.uow.read() as work:
            return await work.exports.page(scope, page)

    def link(self, job: ExportRecord) -> Link | None:
        """A freshly signed download link of a completed export (None otherwise)."""
        if job.status != rules.COMPLETED or job.expires_at is None:
            return None
        expires = rules.link_expires(time.time(), self.link_seconds, job.expires_at)
        kid, key = self.keys.signing_key(secret_keys.EXPORT_LINK)
        query = urlencode({"expires": expires, "signature": rules.link_signature(kid, key, job.id, expires)})
        return Link(query, datetime.fromtimestamp(expires, UTC))

    async def read_part(self, export_id: str, expires: int, signature: str, part: int) -> tuple[bytes, ExportRecord]:
        """Part `part` of a completed export's archive, for a link we signed that has not expired. The link is the
        credential; a caller with a key or session finds only its businesses' exports."""
        require_uuid(export_id, "id")
        signed = rules.signed_kid(signature)
        key = self.keys.verifying_key(secret_keys.EXPORT_LINK, signed[0]) if signed is not None else None
        if signed is None or not rules.link_valid(key, export_id, expires, signed[1]):
            raise ServiceError("not_found", "export not found, or this download link was changed: use the "
                               "download_url GET /api/v1/exports/{id} answers, as it is")
        if expires < time.time():
            raise ServiceError("forbidden", "this download link has expired; get a new one from GET "
                               "/api/v1/exports/{id} (download_url)")
        who = tenant.current()
        async with self.uow.read() as work:
            job = await work.exports.get(export_id, who.business_ids if who.account_id else None)
            data = await work.exports.part(export_id, part) if job is not None and job.status == rules.COMPLETED \
                else None
        if job is None:
            raise not_found("export")
        if job.status == rules.EXPIRED:
            raise ServiceError("not_found", GONE)
        if job.status != rules.COMPLETED:
            raise not_found("export")
        if data is None:
            raise invalid(f"part must be from 0 to {job.parts - 1}")
        return data, job

    # -- running -----------------------------------------------------------------------------------------------------

    async def run_due(self, limit: int = CLAIM_BATCH) -> int:
        """Run the jobs that are due, each claimed under its lease; how many were claimed."""
        async with self.uow.transaction() as work:
            claimed = await work.exports.claim_due(limit, self.lease)
        for job in claimed:
            await self.run(job, job.lease_token or "")
        return len(claimed)

    async def expire_due(self, limit: int = EXPIRE_BATCH) -> int:
        """Delete the archives of up to `limit` exports past their expiry (each marked expired); how many."""
        async with self.uow.transaction() as work:
            expired = await work.exports.expire_due(limit, {"status": rules.EXPIRED, "updated_at": utcnow()})
        for export_id in expired:
            log.info("export %s expired: its archive was deleted", export_id)
        return len(expired)

    async def run(self, job: ExportRecord, token: str) -> ExportRecord | None:
        """Write the job's pages from the first not stored until it is over or a page fails; the job as it stands
        after, or None when another runner took it over (this one was too slow: its lease ran out)."""
        ctx = tenant.set_current(tenant.acting_for(job.business_id, ACTOR))
        kind: str | None = None
        try:
            saved = await self._save(job, token, status=rules.RUNNING)
            if saved is None:
                return None
            job = saved
            while (index := rules.next_kind(job.kinds)) is not None:
                entry = job.kinds[index]
                kind = entry["kind"]
                page = await self._page(job, BY_NAME[kind], entry["after"])
                saved = await self._store_page(job, token, index, page)
                if saved is None:
                    return None
                job = saved
            kind = None
            return await self._complete(job, token)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of a page (a refusal, an outage, a deploy) is retried
            return await self._failed(job, token, kind, exc)
        finally:
            tenant.reset_current(ctx)

    async def _page(self, job: ExportRecord, kind: Kind, after: str) -> RecordsPage:
        if kind.service == ACCOUNTS:
            return await self._own_page(job.business_id, kind, after)
        return await self.sources.page(kind.service, PageRequest(job.business_id, job.id, kind.name, after,
                                                                  kind.limit))

    async def _own_page(self, business_id: str, kind: Kind, after: str) -> RecordsPage:
        """A page of the accounts service's own kinds: the workspace (one record) and its usage log, oldest first."""
        async with self.uow.read() as work:
            if kind.name == "workspace":
                found = await work.exports.workspace(business_id) if not after else None
                return RecordsPage([line(self.public.workspace(found))] if found else [], "")
            cursor = _usage_cursor(after)
            rows = await work.exports.usage_after(business_id, cursor, kind.limit)
        more = len(rows) == kind.limit
        next_after = f"{rows[-1].created_at.isoformat()}|{rows[-1].id}" if more else ""
        return RecordsPage([line(self.public.usage(r)) for r in rows], next_after)

    async def _store_page(self, job: ExportRecord, token: str, index: int, page: RecordsPage) -> ExportRecord | None:
        """The page stored as the archive's next part with its kind's cursor moved on, in one transaction (None:
        another runner took the job over)."""
        entry, now = job.kinds[index], utcnow()
        data, stream = rules.page_part(entry["kind"], entry["pages"] + 1, page.lines, job.created_at.timestamp(),
                                       _stream(job), first=job.parts == 0) if page.lines else (b"", _stream(job))
        async with self.uow.transaction() as work:
            saved = await work.exports.leased_update(job.id, token, {
                "kinds": rules.with_page(job.kinds, index, len(page.lines), page.next_after),
                "records": job.records + len(page.lines), "bytes": job.bytes + len(data),
                "crc32": stream.crc32, "raw_bytes": stream.size,
                "parts": job.parts + (1 if data else 0), "updated_at": now, "lease_until": now + self.lease})
            if saved is not None and data:
                await work.exports.add_part(job.id, job.parts, data)
        return saved

    async def _complete(self, job: ExportRecord, token: str) -> ExportRecord | None:
        """The manifest's part stored and the job completed with the archive's digest (the parts read back in
        order, one at a time)."""
        digest = hashlib.sha256()
        for seq in range(job.parts):
            async with self.uow.read() as work:
                data = await work.exports.part(job.id, seq)
            if data is None:
                raise LookupError(f"part {seq} of the archive is missing")
            digest.update(data)
            if seq % RENEW_EVERY_PARTS == RENEW_EVERY_PARTS - 1 and await self._save(job, token) is None:
                return None
        final = rules.final_part(rules.manifest(job.id, job.business_id, job.created_at, job.kinds),
                                 job.created_at.timestamp(), _stream(job), first=job.parts == 0)
        digest.update(final)
        now = utcnow()
        async with self.uow.transaction() as work:
            done = await work.exports.leased_update(job.id, token, {
                "status": rules.COMPLETED, "parts": job.parts + 1, "bytes": job.bytes + len(final),
                "sha256": digest.hexdigest(), "completed_at": now, "expires_at": now + self.retention,
                "updated_at": now, "error": None, **leases.RELEASED})
            if done is not None:
                await work.exports.add_part(job.id, job.parts, final)
        if done is not None:
            log.info("export %s of business %s completed: %d records, %d bytes", done.id, done.business_id,
                     done.records, done.bytes)
        return done

    async def _failed(self, job: ExportRecord, token: str, kind: str | None, exc: Exception) -> ExportRecord | None:
        reason = domain.failure(exc)
        reason = (f"a page of {kind} failed: {reason}" if kind else f"completing the archive failed: {reason}")
        reason = reason[:ERROR_MAX]
        attempts = job.attempts + 1
        now = utcnow()
        if domain.gives_up(attempts, self.max_attempts):
            log.error("export %s of business %s failed for good after %d attempts: %s", job.id, job.business_id,
                      attempts, reason)
            async with self.uow.transaction() as work:  # no archive will be served: its parts go at once
                failed = await work.exports.leased_update(job.id, token, {
                    "status": rules.FAILED, "attempts": attempts, "error": reason, "completed_at": now,
                    "updated_at": now, **leases.RELEASED})
                if failed is not None:
                    await work.exports.delete_parts(job.id)
            return failed
        log.warning("export %s of business %s: attempt %d failed, retried later: %s", job.id, job.business_id,
                    attempts, reason)
        return await self._save(job, token, status=rules.QUEUED, attempts=attempts, error=reason,
                                next_attempt_at=now + domain.retry_delay(attempts, self.retry_seconds),
                                **leases.RELEASED)

    async def _save(self, job: ExportRecord, token: str, **values: Any) -> ExportRecord | None:
        """The job after `values`, its lease renewed unless they release it (None: another runner took it over)."""
        now = utcnow()
        async with self.uow.transaction() as work:
            return await work.exports.leased_update(job.id, token, {
                "updated_at": now, "lease_until": now + self.lease, **values})


def _stream(job: ExportRecord) -> rules.Stream:
    return rules.Stream(job.crc32, job.raw_bytes)



def _usage_cursor(after: str) -> tuple[datetime, str] | None:
    if not after:
        return None
    at, _, row_id = after.partition("|")
    return datetime.fromisoformat(at), row_id


class ExportRunner(Periodic):
    """Every `interval` seconds: the exports that are due, claimed under their leases, and the archives past their
    expiry deleted (run several replicas)."""

    task_name = "export-runner"

    def __init__(self, exports: Exports, interval: float):
        self.exports = exports
        self.interval = interval

    async def round(self) -> bool:
        ran = await self.exports.run_due()
        expired = await self.exports.expire_due()
        return ran >= CLAIM_BATCH or expired >= EXPIRE_BATCH

    async def stop(self) -> None:
        await super().stop()
        await self.exports.started.stop()
