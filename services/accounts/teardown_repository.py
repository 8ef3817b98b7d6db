"""A torn-down business's data deletion's storage (schema.businesses' data_deletion_* columns and what closes its
access: keys, sessions, sign-in links, OAuth grants): the repository services.accounts.privacy.teardown_deletion
reaches it by, on the connection of the caller's transaction. The claim is the erasures' (privacy_repository), on the
deletion's own lease columns (the row's `lease_*` are billing's)."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core.columns import Uuid
from core.records import or_none, record
from services.accounts.privacy_repository import ACTIVE
from services.accounts.records import DataDeletionRecord
from services.accounts.schema import api_keys, businesses, erasures, magic_links, oauth_grants, sessions

b = businesses.c
RECORD_COLUMNS = (b.id, b.account_id, b.data_deletion_due_at, b.data_deletion_steps, b.data_deletion_attempts,
                  b.data_deletion_lease_token)
RELEASED = {"data_deletion_lease_token": None, "data_deletion_lease_until": None}


def _read(row: Any) -> DataDeletionRecord:
    return record(DataDeletionRecord, row._mapping)


class SqlDataDeletions:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def claim_due(self, limit: int, lease: timedelta) -> list[DataDeletionRecord]:
        """Up to `limit` torn-down businesses whose deletion is due (its next attempt passed, not done, its lease
        free: one whose runner died is taken over once the lease runs out), each leased to the caller."""
        due = (sa.select(b.id)
               .where(b.data_deletion_due_at.is_not(None), b.data_deleted_at.is_(None),
                      b.lifecycle_state == "inactive", b.data_deletion_next_at <= sa.func.now(),
                      sa.or_(b.data_deletion_lease_until.is_(None), b.data_deletion_lease_until < sa.func.now()))
               .order_by(b.data_deletion_next_at).limit(limit).with_for_update(skip_locked=True))
        rows = (await self.conn.execute(
            businesses.update().where(b.id.in_(due.scalar_subquery()))
            .values(data_deletion_lease_token=sa.func.gen_random_uuid(),
                    data_deletion_lease_until=sa.func.now() + lease)
            .returning(*RECORD_COLUMNS))).all()
        return [_read(row) for row in rows]

    async def leased_update(self, business_id: str, token: str, values: dict[str, Any]) -> DataDeletionRecord | None:
        """The deletion after `values`, or None when its lease is no longer `token`'s (another runner took it)."""
        return or_none(_read, (await self.conn.execute(
            businesses.update().where(b.id == business_id, b.data_deletion_lease_token == token)
            .values(**values).returning(*RECORD_COLUMNS))).first())

    async def revoke_keys(self, business_id: str, now: datetime) -> int:
        """The keys limited to the business revoked; how many."""
        k = api_keys.c
        return (await self.conn.execute(api_keys.update().where(k.business_id == business_id, k.revoked_at.is_(None))
                                        .values(revoked_at=now))).rowcount

    async def other_live_business(self, account_id: str, business_id: str) -> bool:
        """Whether the account has another business whose data is kept (its access still serves that one)."""
        return await self.conn.scalar(sa.select(sa.exists().where(
            b.account_id == account_id, b.id != business_id, b.data_deleted_at.is_(None)))) is True

    async def close_account(self, account_id: str, now: datetime) -> tuple[int, int]:
        """An account with nothing left to reach: its keys for every business revoked, its sessions ended and its
        unused sign-in links expired; (keys, sessions)."""
        k = api_keys.c
        keys = (await self.conn.execute(api_keys.update().where(k.account_id == account_id, k.revoked_at.is_(None))
                                        .values(revoked_at=now))).rowcount
        ended = (await self.conn.execute(sessions.delete().where(sessions.c.account_id == account_id))).rowcount
        await self.conn.execute(magic_links.update().where(
            magic_links.c.account_id == account_id, magic_links.c.used_at.is_(None), magic_links.c.expires_at > now)
            .values(expires_at=now))
        return keys, ended

    async def drop_from_grants(self, account_id: str, business_id: str, now: datetime) -> tuple[int, int]:
        """The account's live OAuth grants approved for the business lose it, and those left with no business are
        revoked; (narrowed, revoked)."""
        g = oauth_grants.c
        changed = (await self.conn.execute(
            oauth_grants.update()
            .where(g.account_id == account_id, g.revoked_at.is_(None),
                   sa.cast(business_id, Uuid) == sa.any_(g.business_ids))
            .values(business_ids=sa.func.array_remove(g.business_ids, sa.cast(business_id, Uuid)))
            .returning(g.id, g.business_ids))).all()
        emptied = [row.id for row in changed if not row.business_ids]
        if emptied:
            await self.conn.execute(oauth_grants.update().where(g.id.in_(emptied)).values(revoked_at=now))
        return len(changed) - len(emptied), len(emptied)

    async def end_erasures(self, business_id: str, now: datetime, forget: dict[str, Any]) -> int:
        """The business's erasures not over, failed (the whole business was deleted) with their subjects cleared."""
        e = erasures.c
        return (await self.conn.execute(erasures.update().where(
            e.business_id == business_id, e.status.in_(ACTIVE))
            .values(status="failed", error="the business's data was deleted after its teardown", completed_at=now,
                    updated_at=now, lease_token=None, lease_until=None, **forget))).rowcount
