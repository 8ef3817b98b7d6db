"""services.accounts.repository's AccountsUnit and HotPath in memory, on a MemoryDatabase (schema.businesses,
schema.api_keys, schema.sessions, schema.usage_log, schema.oauth_* and schema.provisionings). The accounts
repository has the methods the fast tier reaches (keys, sessions, workspaces, usage, and signup's through
tests/memory/billing.py's MemorySignups), the OAuth, provisioning and billing (tests/memory/billing.py) ones all of
their own; sign-in links run on the stack-backed tier."""
from __future__ import annotations

import copy

from core import standing
from core.ids import utcnow
from core.records import record as _record
from core.uow import Unit
from services.accounts import store
from services.accounts.records import (
    ApiKeyRecord,
    Business,
    BusinessName,
    OAuthClient,
    OAuthCode,
    OAuthConnection,
    OAuthGrant,
    OAuthRefreshToken,
    SagaBusiness,
    SagaRecord,
    SessionRecord,
    Subscription,
    UsageRecord,
    Workspace,
    WorkspaceProvisioning,
)
from services.accounts.schema import (
    SCHEMA,
    api_keys,
    businesses,
    oauth_clients,
    oauth_codes,
    oauth_grants,
    oauth_refresh_tokens,
    provisionings,
    sessions,
    usage_log,
)
from tests.memory import MemoryConnection, MemoryDatabase, insert, key_of, page_of, take_lease, update
from tests.memory.billing import MemoryBilling, MemorySignups


def record(cls, row):
    """A copy of the stored row as the repository's record (changing it changes nothing stored)."""
    return _record(cls, copy.deepcopy(row))


class MemoryAccounts(MemorySignups):
    def __init__(self, conn: MemoryConnection):
        super().__init__(conn)
        self.business_rows = conn.rows(businesses)
        self.key_rows = conn.rows(api_keys)
        self.session_rows = conn.rows(sessions)
        self.usage_rows = conn.rows(usage_log)

    async def add_business(self, **values):
        return record(Business, insert(self.business_rows, businesses, values))

    async def lock_business(self, business_id):
        row = self.business_rows.get((business_id,))
        return record(Business, row) if row is not None else None

    async def change_business(self, business_id, values):
        row = self.business_rows.get((business_id,))
        return record(Business, update(businesses, row, values)._mapping) if row is not None else None

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

    async def usage_page(self, account_id, business_id, start, end, page):
        mine = [row for row in self.usage_rows.values() if row["account_id"] == account_id
                and business_id in (None, "", row["business_id"]) and (start is None or row["created_at"] >= start)
                and (end is None or row["created_at"] < end)]
        return page_of(mine, usage_log.c.created_at, usage_log.c.id, page).map(
            lambda row: record(UsageRecord, row._mapping))

    def _businesses(self, business_ids):
        return [row for row in self.business_rows.values() if row["id"] in business_ids]

    async def subscriptions_of(self, business_ids):
        return [record(Subscription, row)
                for row in sorted(self._businesses(business_ids), key=lambda row: row["created_at"])]

    async def minutes_used(self, business_ids):
        used: dict[str, int] = {}
        for row in self.usage_rows.values():
            if row["business_id"] in business_ids and row["call_id"] is not None:
                used[row["business_id"]] = used.get(row["business_id"], 0) + row["minutes"]
        return used

    async def accounts_of(self, business_ids):
        return {row["id"]: row["account_id"] for row in self._businesses(business_ids)}

    async def append_call_usage(self, entries):
        """store.append_call_usage: an entry of a call already billed adds nothing (the usage_log_call_once
        index)."""
        billed = {row["call_id"] for row in self.usage_rows.values() if row["method"] == store.CALL_METHOD}
        added = 0
        for entry in entries:
            if entry["call_id"] not in billed:
                billed.add(entry["call_id"])
                insert(self.usage_rows, usage_log, {**entry, "api_key_id": None, "endpoint": store.CALL_ENDPOINT,
                                                    "method": store.CALL_METHOD, "status_code": 200})
                added += 1
        return added


class MemoryOAuth:
    """services.accounts.oauth_repository's; codes and refresh tokens come with their grant's columns (a
    transaction holds them all here: transactions run one at a time)."""

    def __init__(self, conn: MemoryConnection):
        self.business_rows = conn.rows(businesses)
        self.client_rows = conn.rows(oauth_clients)
        self.grant_rows = conn.rows(oauth_grants)
        self.code_rows = conn.rows(oauth_codes)
        self.refresh_rows = conn.rows(oauth_refresh_tokens)

    async def client(self, client_id):
        row = self.client_rows.get((client_id,))
        return record(OAuthClient, row) if row is not None else None

    async def add_client(self, **values):
        return record(OAuthClient, insert(self.client_rows, oauth_clients, values))

    async def save_client_document(self, **values):
        row = self.client_rows.get((values["client_id"],))
        if row is None:
            return await self.add_client(**values)
        fetched = ("client_name", "client_uri", "redirect_uris", "grant_types", "fetched_at")
        return record(OAuthClient, update(oauth_clients, row, {k: values.get(k) for k in fetched})._mapping)

    async def has_grant(self, account_id, client_id):
        return any(row["account_id"] == account_id and row["client_id"] == client_id and row["revoked_at"] is None
                   for row in self.grant_rows.values())

    async def add_grant(self, **values):
        insert(self.grant_rows, oauth_grants, values)

    async def grant(self, grant_id):
        row = self.grant_rows.get((grant_id,))
        return record(OAuthGrant, row) if row is not None else None

    async def touch_grant(self, grant_id, now):
        row = self.grant_rows.get((grant_id,))
        if row is not None:
            row["last_used_at"] = now

    async def revoke_grant(self, grant_id, now, account_id=None):
        row = self.grant_rows.get((grant_id,))
        if row is None or account_id not in (None, row["account_id"]):
            return None
        row["revoked_at"] = row["revoked_at"] or now
        return row["account_id"]

    async def connections_of(self, account_id):
        mine = [row for row in self.grant_rows.values()
                if row["account_id"] == account_id and row["revoked_at"] is None]
        return [record(OAuthConnection, {**row, "client_name": self.client_rows[(row["client_id"],)]["client_name"]})
                for row in sorted(mine, key=lambda row: row["created_at"], reverse=True)]

    def _businesses_of(self, account_id):
        return sorted((row for row in self.business_rows.values() if row["account_id"] == account_id),
                      key=lambda row: row["created_at"])

    async def businesses_named(self, account_id):
        return [record(BusinessName, row) for row in self._businesses_of(account_id)]

    async def business_ids_of(self, account_id):
        return [row["id"] for row in self._businesses_of(account_id)]

    def _with_grant(self, cls, rows, hashes):
        row = next((rows[(h,)] for h in hashes if (h,) in rows), None)
        return record(cls, {**self.grant_rows[(row["grant_id"],)], **row}) if row is not None else None

    async def add_code(self, **values):
        insert(self.code_rows, oauth_codes, values)

    async def take_code(self, code_hashes):
        return self._with_grant(OAuthCode, self.code_rows, code_hashes)

    async def use_code(self, code_hash, now):
        update(oauth_codes, self.code_rows[(code_hash,)], {"used_at": now})

    async def add_refresh_token(self, **values):
        insert(self.refresh_rows, oauth_refresh_tokens, values)

    async def take_refresh_token(self, token_hashes):
        return self._with_grant(OAuthRefreshToken, self.refresh_rows, token_hashes)

    async def use_refresh_token(self, token_hash, now):
        update(oauth_refresh_tokens, self.refresh_rows[(token_hash,)], {"used_at": now})


class MemoryProvisioning:
    """services.accounts.provisioning_repository's SqlProvisioning: the signups' sagas and the businesses they
    read."""

    def __init__(self, conn: MemoryConnection):
        self.saga_rows = conn.rows(provisionings)
        self.business_rows = conn.rows(businesses)

    async def add(self, **values):
        insert(self.saga_rows, provisionings, values)

    async def claim_due(self, limit, lease):
        """store.claim_due_provisionings: pending or retrying, next attempt passed, lease free; oldest due first."""
        now = utcnow()
        due = sorted((row for row in self.saga_rows.values() if row["status"] in ("pending", "retrying")
                      and row["next_attempt_at"] <= now and (row["lease_until"] is None or row["lease_until"] < now)),
                     key=lambda row: row["next_attempt_at"])[:limit]
        for row in due:
            take_lease(provisionings, row, lease)
        return [record(SagaRecord, row) for row in due]

    def _of(self, business_id):
        return next((row for row in self.saga_rows.values() if row["business_id"] == business_id), None)

    async def of_business(self, business_id):
        row = self._of(business_id)
        return record(SagaRecord, row) if row is not None else None

    async def business(self, business_id):
        row = self.business_rows.get((business_id,))
        return record(SagaBusiness, row) if row is not None else None

    async def leased_update(self, saga_id, token, values):
        row = self.saga_rows.get((saga_id,))
        if row is None or row["lease_token"] != token:  # core.leases.held: still the token's, run out or not
            return None
        return record(SagaRecord, update(provisionings, row, values)._mapping)

    async def update_waiting(self, business_id, values):
        row = self._of(business_id)
        if row is not None and row["status"] == "waiting_payment":
            update(provisionings, row, values)


class MemoryAccountsUnit(Unit):
    def __init__(self, handle: MemoryConnection):
        super().__init__()
        self.accounts = MemoryAccounts(handle)
        self.billing = MemoryBilling(handle)
        self.oauth = MemoryOAuth(handle)
        self.provisioning = MemoryProvisioning(handle)


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
        """store.append_usage: the rows appended but those whose id is there already, and each key's last use moved
        on, never back (one statement: a row refused refuses all); how many rows were new."""
        usage = copy.deepcopy(self.database.tables.get(usage_log.fullname, {}))
        added = 0
        for values in records:
            row = dict(zip(store.USAGE_COLUMNS, values, strict=True))
            if key_of(usage_log, row) not in usage:
                insert(usage, usage_log, row)
                added += 1
        self.database.tables[usage_log.fullname] = usage
        keys = self.database.tables.get(api_keys.fullname, {}).values()
        for row in keys:
            if row["id"] in last_used:
                at = last_used[row["id"]]
                row["last_used_at"] = max(row["last_used_at"] or at, at)
        return added
