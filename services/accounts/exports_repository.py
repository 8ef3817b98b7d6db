"""The exports' storage (schema.exports, schema.export_parts) and the accounts service's own records an export
writes (the workspace, the usage log): statements on the connection of the caller's transaction or read. Claims
follow the erasures' (privacy_repository): due rows, skipped when another runner is claiming them, leased in one
statement."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.pagination import Page, Paged, fetch_page
from core.records import or_none, record
from services.accounts.records import ExportRecord, UsageRecord, Workspace
from services.accounts.schema import businesses, export_parts, exports, usage_log
from services.accounts.store import USAGE_COLUMNS, WORKSPACE_COLUMNS

ACTIVE = ("queued", "running")  # privacy.export_domain.ACTIVE: the statuses a job is claimed in


def _read(row: Any) -> ExportRecord:
    return record(ExportRecord, row._mapping)


class SqlExports:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> ExportRecord | None:
        """The new job, or None when the business has one of the same idempotency key or one under way (read
        that one)."""
        row = (await self.conn.execute(insert(exports).values(**values).on_conflict_do_nothing()
                                       .returning(exports))).first()
        return or_none(_read, row)

    async def by_key(self, business_id: str, idempotency_key: str) -> ExportRecord | None:
        return or_none(_read, (await self.conn.execute(sa.select(exports).where(
            exports.c.business_id == business_id, exports.c.idempotency_key == idempotency_key))).first())

    async def under_way(self, business_id: str) -> ExportRecord | None:
        """The business's export under way (queued or running), if any (schema.exports_one_under_way: one at
        most)."""
        return or_none(_read, (await self.conn.execute(sa.select(exports).where(
            exports.c.business_id == business_id, exports.c.status.in_(ACTIVE)))).first())

    async def get(self, export_id: str, business_ids: list[str] | tuple[str, ...] | None = None
                  ) -> ExportRecord | None:
        """The export, if it is of one of these businesses (None: of any)."""
        query = sa.select(exports).where(exports.c.id == export_id)
        if business_ids is not None:
            query = query.where(exports.c.business_id.in_(business_ids))
        return or_none(_read, (await self.conn.execute(query)).first())

    async def page(self, business_ids: list[str] | tuple[str, ...], page: Page) -> Paged:
        """A page of the businesses' exports, newest first."""
        paged = await fetch_page(self.conn, sa.select(exports).where(exports.c.business_id.in_(business_ids)),
                                 exports.c.created_at, exports.c.id, page)
        return paged.map(_read)

    async def claim_due(self, limit: int, lease: timedelta) -> list[ExportRecord]:
        """Up to `limit` jobs due to run (queued or running, next attempt passed, lease free), each leased to the
        caller (its token in `lease_token`)."""
        due = (sa.select(exports.c.id)
               .where(exports.c.status.in_(ACTIVE), exports.c.next_attempt_at <= sa.func.now(), leases.free(exports))
               .order_by(exports.c.next_attempt_at).limit(limit).with_for_update(skip_locked=True))
        rows = (await self.conn.execute(
            exports.update().where(exports.c.id.in_(due.scalar_subquery()))
            .values(lease_token=sa.func.gen_random_uuid(), lease_until=sa.func.now() + lease)
            .returning(exports))).all()
        return [_read(row) for row in rows]

    async def expire_due(self, limit: int, values: dict[str, Any]) -> list[str]:
        """Up to `limit` completed exports past their expiry, locked (another runner skips them), their parts
        deleted and `values` set; their ids."""
        due = (sa.select(exports.c.id)
               .where(exports.c.status == "completed", exports.c.expires_at <= sa.func.now())
               .order_by(exports.c.expires_at).limit(limit).with_for_update(skip_locked=True))
        ids = [str(i) for i in (await self.conn.scalars(due)).all()]
        if ids:
            await self.conn.execute(export_parts.delete().where(export_parts.c.export_id.in_(ids)))
            await self.conn.execute(exports.update().where(exports.c.id.in_(ids)).values(**values))
        return ids

    async def leased_update(self, export_id: str, token: str, values: dict[str, Any]) -> ExportRecord | None:
        """The job after `values`, or None when its lease is no longer `token`'s (another runner took it over)."""
        return or_none(_read, (await self.conn.execute(
            exports.update().where(exports.c.id == export_id, leases.held(exports, token))
            .values(**values).returning(exports))).first())

    async def add_part(self, export_id: str, seq: int, data: bytes) -> None:
        await self.conn.execute(export_parts.insert().values(export_id=export_id, seq=seq, data=data))

    async def delete_parts(self, export_id: str) -> None:
        await self.conn.execute(export_parts.delete().where(export_parts.c.export_id == export_id))

    async def part(self, export_id: str, seq: int) -> bytes | None:
        return await self.conn.scalar(sa.select(export_parts.c.data).where(
            export_parts.c.export_id == export_id, export_parts.c.seq == seq))

    # -- the accounts service's own kinds ---------------------------------------------------------------------------

    async def workspace(self, business_id: str) -> Workspace | None:
        row = (await self.conn.execute(sa.select(*WORKSPACE_COLUMNS).where(
            businesses.c.id == business_id))).first()
        return or_none(lambda r: record(Workspace, r._mapping), row)

    async def usage_after(self, business_id: str, after: tuple[datetime, str] | None,
                          limit: int) -> list[UsageRecord]:
        """The business's usage log entries after (created_at, id), oldest first."""
        query = sa.select(*(usage_log.c[name] for name in USAGE_COLUMNS)).where(usage_log.c.business_id == business_id)
        if after is not None:
            query = query.where(sa.tuple_(usage_log.c.created_at, usage_log.c.id) > sa.tuple_(
                sa.literal(after[0], usage_log.c.created_at.type), sa.literal(after[1], usage_log.c.id.type)))
        rows = await self.conn.execute(query.order_by(usage_log.c.created_at, usage_log.c.id).limit(limit))
        return [record(UsageRecord, row._mapping) for row in rows]
