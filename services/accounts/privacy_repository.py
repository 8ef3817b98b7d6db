"""The erasures' storage (schema.erasures, and their replay entries, schema.erasure_replay) and the retention job's
claims (schema.businesses' retention_* columns): their statements and the repositories the privacy part's use cases
reach them by, on the connection of the caller's transaction or read. Claims follow the provisioning saga's
(store.claim_due_provisionings): due rows, skipped when another runner is claiming them, leased in one statement."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases, retention
from core.pagination import Page, Paged, fetch_page
from core.records import or_none, record
from services.accounts.records import ErasureRecord, ReplayEntryRecord, RetentionClaim
from services.accounts.schema import businesses, erasure_replay, erasures

# The statuses a job is not over in (privacy.domain.QUEUED, RUNNING): the ones claimed, and one per subject.
ACTIVE = ("queued", "running")


def _read(row: Any) -> ErasureRecord:
    return record(ErasureRecord, row._mapping)


class SqlErasures:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> ErasureRecord | None:
        """The new job, or None when the business has an active one of the same subject or a job of the same
        idempotency key (the unique indexes refuse it: read that one)."""
        row = (await self.conn.execute(insert(erasures).values(**values).on_conflict_do_nothing()
                                       .returning(erasures))).first()
        return or_none(_read, row)

    async def by_key(self, business_id: str, idempotency_key: str) -> ErasureRecord | None:
        return or_none(_read, (await self.conn.execute(sa.select(erasures).where(
            erasures.c.business_id == business_id, erasures.c.idempotency_key == idempotency_key))).first())

    async def active_of(self, business_id: str, subject_key: str) -> ErasureRecord | None:
        """The business's erasure of this subject still queued or running."""
        return or_none(_read, (await self.conn.execute(sa.select(erasures).where(
            erasures.c.business_id == business_id, erasures.c.subject_key == subject_key,
            erasures.c.status.in_(ACTIVE)))).first())

    async def get(self, erasure_id: str, business_ids: list[str] | tuple[str, ...]) -> ErasureRecord | None:
        """The erasure if it is of one of these businesses."""
        return or_none(_read, (await self.conn.execute(sa.select(erasures).where(
            erasures.c.id == erasure_id, erasures.c.business_id.in_(business_ids)))).first())

    async def page(self, business_ids: list[str] | tuple[str, ...], page: Page) -> Paged:
        """A page of the businesses' erasures, newest first."""
        paged = await fetch_page(self.conn, sa.select(erasures).where(erasures.c.business_id.in_(business_ids)),
                                 erasures.c.created_at, erasures.c.id, page)
        return paged.map(_read)

    async def business_exists(self, business_id: str) -> bool:
        return await self.conn.scalar(sa.select(sa.exists().where(businesses.c.id == business_id))) or False

    async def requeue(self, values: dict[str, Any]) -> None:
        """The erasure `values["id"]` queued again as `values` say, made anew if this database never had it (a
        restored backup older than its request)."""
        changed = {name: value for name, value in values.items() if name not in ("id", "created_at")}
        await self.conn.execute(insert(erasures).values(**values)
                                .on_conflict_do_update(index_elements=[erasures.c.id], set_=changed))

    async def forward_to(self, business_id: str) -> str | None:
        """The phone the business's calls are forwarded to (its country is the business's, for national numbers)."""
        return await self.conn.scalar(sa.select(businesses.c.phone_forward_to).where(businesses.c.id == business_id))

    async def claim_due(self, limit: int, lease: timedelta) -> list[ErasureRecord]:
        """Up to `limit` jobs due to run (queued or running, next attempt passed, lease free: one whose runner died is
        taken over once its lease runs out), each leased to the caller (its token in `lease_token`)."""
        due = (sa.select(erasures.c.id)
               .where(erasures.c.status.in_(ACTIVE), erasures.c.next_attempt_at <= sa.func.now(),
                      leases.free(erasures))
               .order_by(erasures.c.next_attempt_at).limit(limit).with_for_update(skip_locked=True))
        rows = (await self.conn.execute(
            erasures.update().where(erasures.c.id.in_(due.scalar_subquery()))
            .values(lease_token=sa.func.gen_random_uuid(), lease_until=sa.func.now() + lease)
            .returning(erasures))).all()
        return [_read(row) for row in rows]

    async def leased_update(self, erasure_id: str, token: str, values: dict[str, Any]) -> ErasureRecord | None:
        """The job after `values`, or None when its lease is no longer `token`'s (another runner took it over)."""
        return or_none(_read, (await self.conn.execute(
            erasures.update().where(erasures.c.id == erasure_id, leases.held(erasures, token))
            .values(**values).returning(erasures))).first())


class SqlErasureReplay:
    """The replay entries of completed erasures (privacy.replay)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> None:
        """The entry of an erasure that completed (again: its latest completion, no replay requested)."""
        await self.conn.execute(insert(erasure_replay).values(**values, replay_requested_at=None).on_conflict_do_update(
            index_elements=[erasure_replay.c.erasure_id],
            set_={**{k: v for k, v in values.items() if k != "erasure_id"}, "replay_requested_at": None}))

    async def claim_requested(self, limit: int) -> list[ReplayEntryRecord]:
        """Up to `limit` entries a restore asked to replay, locked until the caller's transaction ends (those another
        runner holds are skipped)."""
        rows = (await self.conn.execute(
            sa.select(erasure_replay).where(erasure_replay.c.replay_requested_at.is_not(None))
            .order_by(erasure_replay.c.replay_requested_at).limit(limit).with_for_update(skip_locked=True))).all()
        return [record(ReplayEntryRecord, row._mapping) for row in rows]

    async def served(self, erasure_id: str) -> None:
        await self.conn.execute(erasure_replay.update().where(erasure_replay.c.erasure_id == erasure_id)
                                .values(replay_requested_at=None))


def replay_retention(keep: timedelta) -> retention.Rule:
    """Replay entries of erasures completed longer ago than `keep` (BACKUP_RETENTION_DAYS: no backup kept is older)
    go; one a restore asked to replay stays until it is queued. The erasure_replay_completed index serves the scan."""
    return retention.Rule("accounts.erasure_replay", keep, retention.older_than(
        erasure_replay, erasure_replay.c.completed_at, erasure_replay.c.replay_requested_at.is_(None)))


class SqlDataRetention:
    """The businesses' retention job (privacy.data_retention) on schema.businesses: its own lease
    (retention_lease_*), apart from the billing's (lease_*), so the two jobs never wait on each other."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def claim_due(self, now: datetime, limit: int, lease: timedelta) -> list[RetentionClaim]:
        """Up to `limit` businesses whose retention is due at `now` (whatever their lifecycle: a paused or torn-down
        business's data is kept no longer), lease free, each leased to the caller; a business another runner is
        claiming is skipped."""
        b = businesses.c
        due = (sa.select(b.id).where(b.retention_next_at <= now, sa.or_(
                   b.retention_lease_until.is_(None), b.retention_lease_until < now))
               .order_by(b.retention_next_at).limit(limit).with_for_update(skip_locked=True))
        rows = (await self.conn.execute(
            businesses.update().where(b.id.in_(due.scalar_subquery()))
            .values(retention_lease_token=sa.func.gen_random_uuid(), retention_lease_until=now + lease)
            .returning(b.id, b.retention, b.retention_lease_token))).all()
        return [RetentionClaim(str(row.id), dict(row.retention), str(row.retention_lease_token)) for row in rows]

    async def renew(self, business_id: str, token: str, until: datetime) -> bool:
        """Extend the lease to `until` if it is still `token`'s (False: another runner took the business over)."""
        return await self._leased(business_id, token, retention_lease_until=until)

    async def finish(self, business_id: str, token: str, next_at: datetime) -> bool:
        """The round is over: due again at `next_at`, lease released (False: not `token`'s any more)."""
        return await self._leased(business_id, token, retention_next_at=next_at, retention_lease_token=None,
                                  retention_lease_until=None)

    async def _leased(self, business_id: str, token: str, **values: Any) -> bool:
        b = businesses.c
        return (await self.conn.execute(businesses.update().where(b.id == business_id, b.retention_lease_token == token)
                                        .values(**values).returning(b.id))).first() is not None
