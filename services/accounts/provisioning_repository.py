"""The provisioning saga's storage (schema.provisionings, through store.py): typed records of the saga rows and of
the business a saga reads, on the connection of the caller's transaction or read."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from core.records import record
from services.accounts import store
from services.accounts.records import SagaBusiness, SagaRecord


class SqlProvisioning:
    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> None:
        await store.add_provisioning(self.conn, **values)

    async def claim_due(self, limit: int, lease: timedelta) -> list[SagaRecord]:
        """Up to `limit` due sagas, each leased to the caller (its token in `lease_token`)."""
        rows = (await self.conn.execute(store.claim_due_provisionings(limit, lease))).all()
        return [record(SagaRecord, row._mapping) for row in rows]

    async def of_business(self, business_id: str) -> SagaRecord | None:
        row = await store.provisioning_of(self.conn, business_id)
        return record(SagaRecord, row._mapping) if row is not None else None

    async def business(self, business_id: str) -> SagaBusiness | None:
        row = await store.business_row(self.conn, business_id)
        return record(SagaBusiness, row._mapping) if row is not None else None

    async def leased_update(self, saga_id: str, token: str, values: dict[str, Any]) -> SagaRecord | None:
        """The saga after `values`, or None when its lease is no longer `token`'s (another runner took it over)."""
        row = await store.leased_provisioning_update(self.conn, saga_id, token, values)
        return record(SagaRecord, row._mapping) if row is not None else None

    async def update_waiting(self, business_id: str, values: dict[str, Any]) -> None:
        """Move the business's saga on if it is still waiting for its payment."""
        await store.update_waiting_provisioning(self.conn, business_id, values)
