"""services.accounts.repository's AccountsRepository and WorkspaceLookup in memory, on a MemoryDatabase
(store.businesses, store.api_keys, store.sessions and, for the workspace read, store.provisionings)."""
from __future__ import annotations

from types import SimpleNamespace

from core import standing
from services.accounts.schema import api_keys, businesses, provisionings, sessions
from services.accounts.store import PROVISIONING_COLUMNS, WORKSPACE_COLUMNS
from tests.memory import MemoryConnection, MemoryDatabase, Record, insert, update


class MemoryAccounts:
    def __init__(self, conn: MemoryConnection):
        self.business_rows = conn.rows(businesses)
        self.key_rows = conn.rows(api_keys)
        self.session_rows = conn.rows(sessions)

    async def add_business(self, **values):
        return Record(insert(self.business_rows, businesses, values))

    async def lock_business(self, business_id):
        row = self.business_rows.get((business_id,))
        return Record(row) if row is not None else None

    async def change_business(self, business_id, values):
        row = self.business_rows.get((business_id,))
        return update(businesses, row, values) if row is not None else None

    async def business_of_account(self, account_id, business_id):
        row = self.business_rows.get((business_id,))
        return row is not None and row["account_id"] == account_id

    async def standings(self, account_id, business_id=None):
        return {row["id"]: standing.standing(row["lifecycle_state"], row["subscription_status"])
                for row in self.business_rows.values()
                if row["account_id"] == account_id and business_id in (None, row["id"])}

    async def add_key(self, **values):
        return Record(insert(self.key_rows, api_keys, values))

    async def key_by_hash(self, key_hashes):
        return next((Record(row) for row in self.key_rows.values() if row["key_hash"] in key_hashes), None)

    async def keys_of(self, account_id):
        return [Record(row) for row in sorted(self.key_rows.values(), key=lambda row: row["created_at"], reverse=True)
                if row["account_id"] == account_id]

    async def change_key(self, key_id, account_id, values, *, revoke_at=None):
        row = self.key_rows.get((key_id,))
        if row is None or row["account_id"] != account_id:
            return None
        if revoke_at is not None:
            values = {**values, "revoked_at": row["revoked_at"] or revoke_at}
        return update(api_keys, row, values)

    async def session(self, token_hashes):
        row = next((self.session_rows[(h,)] for h in token_hashes if (h,) in self.session_rows), None)
        return Record({name: row[name] for name in ("token_hash", "account_id", "expires_at", "last_used_at")}) \
            if row else None


class MemoryWorkspaces:
    """The workspace read on the committed tables, outside any unit of work (as the raw pool's statement is)."""

    def __init__(self, database: MemoryDatabase):
        self.database = database

    async def workspace(self, business_id):
        row = self.database.tables.get(businesses.fullname, {}).get((business_id,))
        if row is None:
            return None
        saga = next((p for p in self.database.tables.get(provisionings.fullname, {}).values()
                     if p["business_id"] == business_id), None)
        found = Record({column.name: row[column.name] for column in WORKSPACE_COLUMNS})
        return found, SimpleNamespace(**{name: saga[name] for name in PROVISIONING_COLUMNS}) if saga else None
