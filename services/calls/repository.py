"""Where the calls use cases (service.py, inbound_service.py) keep calls and idempotency keys: a repository bound
to one unit of work's handle. It only stores and finds; the rules stay in domain.py and the use cases (a
malformed id, a call not found, a key reused with another request).

`SqlCalls` is the production one, over store.py's tables and queries on the unit of work's connection; the fast
test tier has an in-memory one (tests/memory/calls.py), and the same behaviour tests run on both
(tests/storage_contracts.py). Lists are newest first in core.pagination's pages. The use cases reach it through
their unit of work (`CallsUnit`, made by `calls_units`), which also writes the events they raise."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import aggregates, records
from core.pagination import Page, Paged, fetch_page
from core.uow import Connections, Unit, UnitOfWork
from services.calls import store
from services.calls.domain import CallFilter
from services.calls.records import Call, KeyClaim, ToolCallRecord
from services.calls.schema import calls, outbox


class CallsRepository(Protocol):
    async def add(self, **values: Any) -> Call:
        """Record a call (schema.calls' columns)."""

    async def add_once(self, **values: Any) -> Call | None:
        """Record a call unless one with its provider_call_id is recorded already (then None)."""

    async def change(self, call_id: str, values: dict[str, Any]) -> Call | None:
        """The call after `values`, or None when there is no such call."""

    async def owned(self, business_ids: Iterable[str], call_id: str) -> Call | None:
        """The call with this id in one of these businesses, or None."""

    async def by_provider_id(self, provider_call_id: str) -> Call | None: ...

    async def recording_url(self, call_id: str) -> str | None:
        """The provider's URL of the call's recording (None without one, or without such a call)."""

    async def page(self, business_ids: Iterable[str], filters: CallFilter, page: Page) -> Paged:
        """The businesses' calls (`Call`s) that pass the filters, newest first."""

    async def transcripts(self, business_ids: Iterable[str], agent_id: str | None, since: datetime,
                          page: Page) -> Paged:
        """The businesses' calls with a transcript created since `since` (of one agent when given), newest
        first."""

    async def claim_key(self, account_id: str, key: str, request_hash: str, now: datetime,
                        expired_before: datetime, token: str, lease: timedelta) -> KeyClaim | None:
        """Claim an idempotency key for a new request under a lease of `token` for `lease` (core.leases): None; or
        the existing claim when it is taken. A claim made before `expired_before` is forgotten first."""

    async def take_over_key(self, account_id: str, key: str, token: str, lease: timedelta) -> bool:
        """Lease to `token` a claim still placing whose lease lapsed; False while its holder's lease runs, or when
        another request took it over first. The writes below are fenced with their token: they change nothing
        (hold_key: False) once another request holds the claim."""

    async def hold_key(self, account_id: str, key: str, token: str, call_id: str) -> bool:
        """The call recorded for the claim is `call_id`."""

    async def settle_key(self, account_id: str, key: str, token: str, call_id: str) -> None:
        """The claim's call, `call_id`, is placed: its lease is released."""

    async def lapse_key(self, account_id: str, key: str, token: str) -> None:
        """End the claim's lease, keeping the claim and its call: the next retry takes it over at once."""

    async def release_key(self, account_id: str, key: str, token: str) -> None:
        """Forget the claim."""

    async def for_messages(self, our_ids: list[str], provider_ids: list[str]) -> list[dict[str, Any]]:
        """The calls a batch of provider messages is about (by our ids, or by the provider's), each as a dict of
        its columns, held for update (SQL: locked in id order, so concurrent batches do not deadlock)."""

    async def change_many(self, changes: dict[str, dict[str, Any]]) -> None:
        """Write each call's changes (by call id)."""

    async def silent(self, now: datetime, margin_seconds: float, limit: int) -> list[Call]:
        """Calls without an outcome past their max_duration plus the margin, oldest first."""

    async def count_silent(self, now: datetime, margin_seconds: float) -> int:
        """How many calls `silent` would take with no limit."""

    async def recorded_provider_ids(self, provider_ids: list[str]) -> set[str]:
        """Which of the provider's call ids are recorded as a call's."""

    async def claim_round(self, name: str, every: timedelta) -> bool:
        """Take the periodic job's round if it is due, its next one `every` later: whether this caller took it."""

    async def aggregate(self, query: aggregates.Query, agent_id: str | None) -> list[Any]:
        """The calls of the query's businesses in its window, counted per group (core.aggregates): how many, how
        many completed, their total duration; of one agent when named."""

    async def claim_tool_call(self, **values: Any) -> ToolCallRecord | None:
        """Record a tool call (schema.tool_calls' columns) unless its (call_id, tool_call_id) is recorded already
        (then None)."""

    async def tool_call(self, call_id: str, tool_call_id: str) -> ToolCallRecord | None: ...

    async def settle_tool_call(self, call_id: str, tool_call_id: str, values: dict[str, Any]) -> None:
        """Write a tool call's result, outcome and duration."""

    async def with_tool_calls(self, business_ids: Iterable[str],
                              call_id: str) -> tuple[Call, list[ToolCallRecord]] | None:
        """The call with this id in one of these businesses and its tool calls, oldest first (one read), or None."""

    async def tool_calls_of(self, call_ids: list[str]) -> list[ToolCallRecord]:
        """The tool calls of these calls, each call's oldest first (a business's export, services.calls.export_pages)."""

    async def settle_stale_tool_calls(self, before: datetime, result: str, limit: int) -> int:
        """Settle as failed with `result` up to `limit` tool calls still running that were claimed before `before`,
        oldest first, each once however many settle at once; how many."""

    # A person's erasure (services.calls.erasure)
    async def erasable(self, business_id: str, phones: list[str], emails: list[str], call_ids: list[str],
                       lead_ids: list[str]) -> list[Call]:
        """The business's calls not erased yet whose other party has one of the phones (the caller of an inbound
        call, the callee of an outbound one), whose collected email (structured_data.email, in lower case) is one
        of the emails, or whose id or lead is named; oldest first."""

    # The privacy retention (services.calls.data_retention)
    async def past_retention(self, business_id: str, kind: str, before: datetime, limit: int) -> list[Call]:
        """Up to `limit` of the business's ended calls made before `before` still holding `kind` ("recording": a
        recording link; "transcript": a transcript or its summary), oldest first."""
    async def business_erasable(self, business_id: str, limit: int) -> list[Call]:
        """Up to `limit` of the business's calls not erased yet, oldest first."""

    async def redact_tool_calls(self, call_ids: list[str], arguments: dict[str, Any], result: str) -> int:
        """Replace the calls' tool calls' arguments, and their written results (a running one's stays null); how
        many tool calls."""

    async def events_of_calls(self, call_ids: list[str]) -> list[tuple[int, dict[str, Any]]]:
        """The outbox rows (row id, event data) whose event names one of the calls (data.call_id), held for
        update."""

    async def change_event_data(self, changes: dict[int, dict[str, Any]]) -> None:
        """Write outbox rows' new event data (by row id)."""


class SqlCalls:
    """`CallsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add(self, **values: Any) -> Call:
        return _call(await store.insert_call(self.conn, **values))

    async def add_once(self, **values: Any) -> Call | None:
        return records.or_none(_call, await store.insert_call_once(self.conn, **values))

    async def change(self, call_id: str, values: dict[str, Any]) -> Call | None:
        return records.or_none(_call, await store.update_call(self.conn, call_id, values))

    async def owned(self, business_ids: Iterable[str], call_id: str) -> Call | None:
        return records.or_none(_call, await records.owned(self.conn, calls, business_ids, call_id))

    async def by_provider_id(self, provider_call_id: str) -> Call | None:
        return records.or_none(_call, await store.call_by_provider_id(self.conn, provider_call_id))

    async def recording_url(self, call_id: str) -> str | None:
        return await store.recording_of(self.conn, call_id)

    async def page(self, business_ids: Iterable[str], filters: CallFilter, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.calls_of(business_ids, filters), calls.c.created_at, calls.c.id,
                                 page)).map(_call)

    async def transcripts(self, business_ids: Iterable[str], agent_id: str | None, since: datetime,
                          page: Page) -> Paged:
        return (await fetch_page(self.conn, store.transcripts_of(business_ids, agent_id, since),
                                 calls.c.created_at, calls.c.id, page)).map(_call)

    async def claim_key(self, account_id: str, key: str, request_hash: str, now: datetime,
                        expired_before: datetime, token: str, lease: timedelta) -> KeyClaim | None:
        return records.or_none(_claim, await store.claim_key(self.conn, account_id, key, request_hash, now,
                                                             expired_before, token, lease))

    async def take_over_key(self, account_id: str, key: str, token: str, lease: timedelta) -> bool:
        return await store.take_over_key(self.conn, account_id, key, token, lease)

    async def hold_key(self, account_id: str, key: str, token: str, call_id: str) -> bool:
        return await store.hold_key(self.conn, account_id, key, token, call_id)

    async def settle_key(self, account_id: str, key: str, token: str, call_id: str) -> None:
        await store.settle_key(self.conn, account_id, key, token, call_id)

    async def lapse_key(self, account_id: str, key: str, token: str) -> None:
        await store.lapse_key(self.conn, account_id, key, token)

    async def release_key(self, account_id: str, key: str, token: str) -> None:
        await store.release_key(self.conn, account_id, key, token)

    async def for_messages(self, our_ids: list[str], provider_ids: list[str]) -> list[dict[str, Any]]:
        return [row._asdict() for row in await store.calls_for_messages(self.conn, our_ids, provider_ids)]

    async def change_many(self, changes: dict[str, dict[str, Any]]) -> None:
        await store.update_calls(self.conn, changes)

    async def silent(self, now: datetime, margin_seconds: float, limit: int) -> list[Call]:
        return [_call(row) for row in await self.conn.execute(store.silent_calls(now, margin_seconds, limit))]

    async def count_silent(self, now: datetime, margin_seconds: float) -> int:
        return int(await self.conn.scalar(store.count_silent(now, margin_seconds)) or 0)

    async def recorded_provider_ids(self, provider_ids: list[str]) -> set[str]:
        return await store.recorded_provider_ids(self.conn, provider_ids)

    async def claim_round(self, name: str, every: timedelta) -> bool:
        return await store.claim_round(self.conn, name, every)

    async def aggregate(self, query: aggregates.Query, agent_id: str | None) -> list[Any]:
        return await store.aggregate_calls(self.conn, query, agent_id)

    async def claim_tool_call(self, **values: Any) -> ToolCallRecord | None:
        return records.or_none(_tool_call, await store.claim_tool_call(self.conn, **values))

    async def tool_call(self, call_id: str, tool_call_id: str) -> ToolCallRecord | None:
        return records.or_none(_tool_call, await store.tool_call(self.conn, call_id, tool_call_id))

    async def settle_tool_call(self, call_id: str, tool_call_id: str, values: dict[str, Any]) -> None:
        await store.settle_tool_call(self.conn, call_id, tool_call_id, values)

    async def settle_stale_tool_calls(self, before: datetime, result: str, limit: int) -> int:
        return await store.settle_stale_tool_calls(self.conn, before, result, limit)

    async def erasable(self, business_id: str, phones: list[str], emails: list[str], call_ids: list[str],
                       lead_ids: list[str]) -> list[Call]:
        query = store.erasable_calls(business_id, phones, emails, call_ids, lead_ids)
        return [_call(row) for row in await self.conn.execute(query)]

    async def past_retention(self, business_id: str, kind: str, before: datetime, limit: int) -> list[Call]:
        return [_call(row) for row in await self.conn.execute(store.past_retention(business_id, kind, before, limit))]
    async def business_erasable(self, business_id: str, limit: int) -> list[Call]:
        return [_call(row) for row in await self.conn.execute(store.business_calls_to_erase(business_id, limit))]

    async def redact_tool_calls(self, call_ids: list[str], arguments: dict[str, Any], result: str) -> int:
        return await store.redact_tool_calls(self.conn, call_ids, arguments, result)

    async def events_of_calls(self, call_ids: list[str]) -> list[tuple[int, dict[str, Any]]]:
        return [(row.id, row.data) for row in await store.events_of_calls(self.conn, call_ids)]

    async def change_event_data(self, changes: dict[int, dict[str, Any]]) -> None:
        await store.change_event_data(self.conn, changes)

    async def tool_calls_of(self, call_ids: list[str]) -> list[ToolCallRecord]:
        return [_tool_call(row) for row in await store.tool_calls_of(self.conn, call_ids)]

    async def with_tool_calls(self, business_ids: Iterable[str],
                              call_id: str) -> tuple[Call, list[ToolCallRecord]] | None:
        rows = await store.call_with_tool_calls(self.conn, business_ids, call_id)
        if not rows:
            return None
        return _call(rows[0]), [records.record(ToolCallRecord, row._mapping, store.TOOL_CALL_PREFIX) for row in rows
                                if row._mapping[store.TOOL_CALL_PREFIX + "tool_call_id"] is not None]


def _call(row: Any) -> Call:
    return records.record(Call, row._mapping)


def _tool_call(row: Any) -> ToolCallRecord:
    return records.record(ToolCallRecord, row._mapping)


def _claim(row: Any) -> KeyClaim:
    return records.record(KeyClaim, row._mapping)


class CallsUnit(Unit):
    """The calls use cases' unit of work (core.uow.UnitOfWork): their calls and idempotency keys on one
    transaction's or read's handle (`calls_on` builds the repository: the SQL one, or the fast tier's twin)."""

    def __init__(self, handle: Any, calls_on: Callable[[Any], CallsRepository] = SqlCalls):
        super().__init__()
        self.calls = calls_on(handle)


def calls_units(connections: Connections,
                calls_on: Callable[[Any], CallsRepository] = SqlCalls) -> UnitOfWork[CallsUnit]:
    """The calls service's unit of work on `connections`; the events its units raise go to the calls outbox."""
    return UnitOfWork(connections, lambda handle: CallsUnit(handle, calls_on), outbox)
