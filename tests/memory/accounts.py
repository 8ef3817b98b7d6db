"""services.accounts.repository's AccountsUnit and HotPath in memory, on a MemoryDatabase (schema.businesses,
schema.api_keys, schema.sessions and, for the workspace read, schema.provisionings). The repository has the
methods the fast tier reaches (keys, sessions, workspaces); signup, sign-in links, usage and
billing run on the stack-backed tier."""
from __future__ import annotations

import copy

from core import standing
from core.records import record as _record
from core.uow import Unit
from services.accounts.records import ApiKeyRecord, SessionRecord, Workspace, WorkspaceProvisioning
from services.accounts.schema import SCHEMA, api_keys, businesses, provisionings, sessions
from tests.memory import MemoryConnection, MemoryDatabase, Record, insert, update


def record(cls, row):
    """A copy of the stored row as the repository's record (changing it changes nothing stored)."""
    return _record(cls, copy.deepcopy(row))


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
        return record(ApiKeyRecord, insert(self.key_rows, api_keys, values))

    async def key_by_hash(self, key_hashes):
        return next((record(ApiKeyRecord, row) for row in self.key_rows.values() if row["key_hash"] in key_hashes),
                    None)

    async def keys_of(self, account_id):
        return [record(ApiKeyRecord, row) for row in sorted(self.key_rows.values(), key=lambda row: row["created_at"],
                                                             reverse=True)
                if row["account_id"] == account_id]

    async def change_key(self, key_id, account_id, values, *, revoke_at=None):
        row = self.key_rows.get((key_id,))
        if row is None or row["account_id"] != account_id:
            return None
        if revoke_at is not None:
            values = {**values, "revoked_at": row["revoked_at"] or revoke_at}
        return record(ApiKeyRecord, update(api_keys, row, values)._mapping)

    async def add_session(self, **values):
        insert(self.session_rows, sessions, values)

    async def end_session(self, token_hashes):
        return sum(self.session_rows.pop((h,), None) is not None for h in token_hashes)

    async def end_sessions_of(self, account_id):
        mine = [key for key, row in self.session_rows.items() if row["account_id"] == account_id]
        for key in mine:
            del self.session_rows[key]
        return len(mine)

    async def session(self, token_hashes):
        row = next((self.session_rows[(h,)] for h in token_hashes if (h,) in self.session_rows), None)
        return record(SessionRecord, row) if row else None


class MemoryAccountsUnit(Unit):
    def __init__(self, handle: MemoryConnection):
        super().__init__()
        self.accounts = MemoryAccounts(handle)


class MemoryHotPath:
    """The hot path's statements on the committed tables, outside any unit of work (as the raw pool's are)."""

    def __init__(self, database: MemoryDatabase):
        self.database = database

    async def workspace(self, business_id):
        row = self.database.tables.get(businesses.fullname, {}).get((business_id,))
        if row is None:
            return None
        saga = next((p for p in self.database.tables.get(provisionings.fullname, {}).values()
                     if p["business_id"] == business_id), None)
        return record(Workspace, row), record(WorkspaceProvisioning, saga) if saga else None

    async def touch_session(self, token_hash, now):
        row = self.database.tables.get(sessions.fullname, {}).get((token_hash,))
        if row is not None:
            row["last_used_at"] = now

    async def rehash(self, table, old_hash, new_hash):
        rows = self.database.tables[f"{SCHEMA}.{table}"]
        if table == "sessions":
            rows[(new_hash,)] = {**rows.pop((old_hash,)), "token_hash": new_hash}
        else:
            next(row for row in rows.values() if row["key_hash"] == old_hash)["key_hash"] = new_hash

    async def append_usage(self, records, last_used):
        raise NotImplementedError("usage runs on the stack-backed tier (tests/service, tests/e2e)")
