"""services.calls.repository.CallsRepository in memory, on a MemoryDatabase's handle (the tables of
services/calls/store.py)."""
from __future__ import annotations

from datetime import timedelta

from contracts.calls import PROGRESS
from core import leases
from core.ids import utcnow
from core.records import record
from services.calls.records import Call, KeyClaim, ToolCallRecord
from services.calls.schema import calls, idempotency_keys, rounds, tool_calls
from services.calls.store import DURATION_MS_MAX
from tests.memory import MemoryConnection, Record, insert, key_of, page_of, update


class MemoryCalls:
    def __init__(self, conn: MemoryConnection):
        self.calls = conn.rows(calls)
        self.keys = conn.rows(idempotency_keys)
        self.tools = conn.rows(tool_calls)
        self.rounds = conn.rows(rounds)

    async def add(self, **values):
        return _call(insert(self.calls, calls, values))

    async def add_once(self, **values):
        if values.get("provider_call_id") is not None and \
                await self.by_provider_id(values["provider_call_id"]) is not None:
            return None
        return await self.add(**values)

    async def change(self, call_id, values):
        row = self.calls.get((call_id,))
        return _call(update(calls, row, values)._mapping) if row is not None else None

    async def owned(self, business_ids, call_id):
        row = self.calls.get((call_id,))
        return _call(row) if row is not None and row["business_id"] in business_ids else None

    async def by_provider_id(self, provider_call_id):
        return next((_call(row) for row in self.calls.values() if row["provider_call_id"] == provider_call_id), None)

    async def recording_url(self, call_id):
        row = self.calls.get((call_id,))
        return row["recording_url"] if row is not None else None

    async def page(self, business_ids, filters, page):
        return page_of([row for row in self.calls.values() if row["business_id"] in business_ids
                        and _passes(row, filters)], calls.c.created_at, calls.c.id, page).map(_paged_call)

    async def transcripts(self, business_ids, agent_id, since, page):
        return page_of([row for row in self.calls.values() if row["business_id"] in business_ids
                        and agent_id in (None, row["agent_id"]) and row["transcript"] is not None
                        and row["created_at"] >= since], calls.c.created_at, calls.c.id, page).map(_paged_call)

    async def claim_key(self, account_id, key, request_hash, now, expired_before, token, lease):
        claim = {"account_id": account_id, "key": key, "request_hash": request_hash, "lease_token": token,
                 "lease_until": utcnow() + lease, "created_at": now}
        taken = self.keys.get(key_of(idempotency_keys, claim))
        if taken is not None and taken["created_at"] < expired_before:
            del self.keys[key_of(idempotency_keys, taken)]
            taken = None
        if taken is None:
            insert(self.keys, idempotency_keys, claim)
            return None
        return KeyClaim(taken["request_hash"], taken["call_id"], taken["lease_token"] is not None)

    def _held(self, account_id, key, token) -> dict | None:
        claim = self.keys.get((account_id, key))
        return claim if claim is not None and claim["lease_token"] == token else None

    async def take_over_key(self, account_id, key, token, lease) -> bool:
        claim = self.keys.get((account_id, key))
        if claim is None or claim["lease_token"] is None or claim["lease_until"] >= utcnow():
            return False
        update(idempotency_keys, claim, {"lease_token": token, "lease_until": utcnow() + lease})
        return True

    async def hold_key(self, account_id, key, token, call_id) -> bool:
        claim = self._held(account_id, key, token)
        if claim is not None:
            update(idempotency_keys, claim, {"call_id": call_id})
        return claim is not None

    async def settle_key(self, account_id, key, token, call_id) -> None:
        if await self.hold_key(account_id, key, token, call_id):
            update(idempotency_keys, self.keys[(account_id, key)], leases.RELEASED)

    async def lapse_key(self, account_id, key, token) -> None:
        claim = self._held(account_id, key, token)
        if claim is not None:
            update(idempotency_keys, claim, {"lease_until": utcnow() - timedelta(microseconds=1)})

    async def release_key(self, account_id, key, token) -> None:
        if self._held(account_id, key, token) is not None:
            del self.keys[(account_id, key)]

    async def for_messages(self, our_ids, provider_ids):
        return [dict(row) for _, row in sorted(self.calls.items())
                if row["id"] in our_ids or row["provider_call_id"] in provider_ids]

    async def change_many(self, changes) -> None:
        for call_id, values in changes.items():
            await self.change(call_id, values)

    async def silent(self, now, margin_seconds, limit):
        overdue = sorted(self._silent(now, margin_seconds), key=lambda row: row["created_at"])
        return [_call(row) for row in overdue[:limit]]

    async def count_silent(self, now, margin_seconds):
        return len(self._silent(now, margin_seconds))

    def _silent(self, now, margin_seconds):
        return [row for row in self.calls.values() if row["status"] in PROGRESS
                and row["created_at"] + timedelta(seconds=row["max_duration"] + margin_seconds) < now]

    async def recorded_provider_ids(self, provider_ids):
        return {row["provider_call_id"] for row in self.calls.values() if row["provider_call_id"] in provider_ids}

    async def claim_round(self, name, every) -> bool:
        now = utcnow()
        due = self.rounds.get(name)
        if due is not None and due["due_at"] > now:
            return False
        self.rounds[name] = {"name": name, "due_at": now + every}
        return True

    async def claim_tool_call(self, **values):
        if key_of(tool_calls, values) in self.tools:
            return None
        return _tool_call(insert(self.tools, tool_calls, values))

    async def tool_call(self, call_id, tool_call_id):
        row = self.tools.get((call_id, tool_call_id))
        return _tool_call(row) if row is not None else None

    async def settle_tool_call(self, call_id, tool_call_id, values) -> None:
        row = self.tools.get((call_id, tool_call_id))
        if row is not None:
            update(tool_calls, row, values)

    async def settle_stale_tool_calls(self, before, result, limit):
        stale = sorted((r for r in self.tools.values() if r["outcome"] == "running" and r["created_at"] < before),
                       key=lambda r: r["created_at"])[:limit]
        for row in stale:
            elapsed = round((utcnow() - row["created_at"]).total_seconds() * 1000)
            update(tool_calls, row, {"outcome": "failed", "result": result,
                                     "duration_ms": min(elapsed, DURATION_MS_MAX)})
        return len(stale)

    async def erasable(self, business_id, phones, emails, call_ids, lead_ids):
        def found(row) -> bool:
            other = row["from_number"] if row["direction"] == "inbound" else row["to_number"]
            email = (row["structured_data"] or {}).get("email")
            return (other in phones or (isinstance(email, str) and email.lower() in emails)
                    or row["id"] in call_ids or row["lead_id"] in lead_ids)

        rows = [row for row in self.calls.values() if row["business_id"] == business_id and row["erased_at"] is None
                and found(row)]
        return [_call(row) for row in sorted(rows, key=lambda r: (r["created_at"], r["id"]))]

    async def past_retention(self, business_id, kind, before, limit):
        holds = {"recording": ("recording_url",), "transcript": ("transcript", "summary")}[kind]
        rows = [row for row in self.calls.values() if row["business_id"] == business_id and row["created_at"] < before
                and row["status"] not in PROGRESS and any(row[column] is not None for column in holds)]
        return [_call(row) for row in sorted(rows, key=lambda r: (r["created_at"], r["id"]))[:limit]]

    async def redact_tool_calls(self, call_ids, arguments, result):
        rows = [row for row in self.tools.values() if row["call_id"] in call_ids]
        for row in rows:
            update(tool_calls, row, {"arguments": arguments, "result": None if row["result"] is None else result})
        return len(rows)

    async def events_of_calls(self, call_ids):
        # The committed events are MemoryDatabase.events, out of a transaction's reach: the outbox's redaction runs
        # on PostgreSQL only (tests/service/test_calls_erasure.py).
        return []

    async def change_event_data(self, changes) -> None:
        assert not changes

    async def with_tool_calls(self, business_ids, call_id):
        call = await self.owned(business_ids, call_id)
        if call is None:
            return None
        return call, [_tool_call(row) for row in sorted((r for r in self.tools.values() if r["call_id"] == call_id),
                                                        key=lambda r: (r["created_at"], r["tool_call_id"]))]


def _call(row) -> Call:
    """The stored row as the SQL repository returns it (a copy: changing it changes nothing stored)."""
    return record(Call, Record(row)._mapping)


def _tool_call(row) -> ToolCallRecord:
    return record(ToolCallRecord, Record(row)._mapping)


def _paged_call(row: Record) -> Call:
    return _call(row._mapping)


def _passes(row, filters) -> bool:
    """Whether a call passes a list's filters (repository.CallFilter)."""
    at = row["created_at"]
    return (all(getattr(filters, f) in (None, row[f]) for f in ("agent_id", "status", "direction"))
            and (filters.created_from is None or at >= filters.created_from)
            and (filters.created_before is None or at < filters.created_before))
