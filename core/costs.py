"""What one request costs, counted in each process it reaches: SQL statements and transactions, RPCs made, NATS
publishes and provider calls.

Hot routes carry a budget (`Budget`, written next to the route in gateway.routes) and a test sends each one and
compares what it cost (tests/guard/test_cost_budgets.py), so a change that adds a round trip to a hot path fails
the suite with the new count; timings cannot gate CI on a shared machine, counts can.

Counting is off unless the process runs with SWITCHBOARD_COUNT_COSTS=1 (settings.count_costs; the test stack sets it)
and calls `enable()` at start (core.grpc_server.serve, the gateway). Then a request
that carries a cost tag (the gateway's `X-Cost-Tag` header, passed on to every RPC it causes as gRPC metadata) has
its costs counted under that tag, and `take(tag)` answers and forgets them: other requests and background work
count nothing, so the figures do not depend on what else the stack is doing.

Work a request leaves to consumers is counted apart, under `after(tag)`: its events (core.outbox) and the
provider messages it stores (core.bus) carry that tag in their headers, a consumer counts its work on them under
it, and the events that work adds carry it on. So a provider's message and everything it sets off downstream (the
owner applying it, the events, the webhook deliveries) has a cost that a test can compare with its budget, while
the request's own stays apart. The outbox relay's publishing is counted by nobody (it works on batches of rows).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from typing import Any, TypeVar

HEADER = "X-Cost-Tag"
METADATA_KEY = "x-cost-tag"
AFTER = ":after"

# The kinds counted, each with its details (which statement, which RPC) under "kind:detail".
SQL, TRANSACTION, RPC, PUBLISH, PROVIDER = "sql", "transaction", "rpc", "publish", "provider"
KINDS = (SQL, TRANSACTION, RPC, PUBLISH, PROVIDER)

T = TypeVar("T")
enabled = False
_tag: ContextVar[str | None] = ContextVar("cost_tag", default=None)
_counts: dict[str, Counter[str]] = {}
# Tags nobody takes (a request sent by hand with the header) are forgotten past this many.
_MAX_TAGS = 1000


@dataclass(frozen=True)
class Budget:
    """What one request of a route may cost, summed over every process: SQL statements (each a round trip to
    PostgreSQL), transactions (each adds BEGIN and COMMIT/ROLLBACK round trips), RPCs between processes, NATS
    publishes and provider calls."""

    sql: int = 0
    transaction: int = 0
    rpc: int = 0
    publish: int = 0
    provider: int = 0

    def over(self, spent: dict[str, int]) -> dict[str, tuple[int, int]]:
        """{kind: (spent, budget)} for each kind spent beyond its budget."""
        return {f.name: (spent.get(f.name, 0), getattr(self, f.name)) for f in fields(self)
                if spent.get(f.name, 0) > getattr(self, f.name)}

    def plus(self, other: Budget) -> Budget:
        return Budget(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


def enable() -> None:
    global enabled
    enabled = True


@contextmanager
def tagged(tag: str | None) -> Iterator[None]:
    """Count what runs inside under `tag` (nothing when counting is off or there is no tag)."""
    if not enabled or not tag:
        yield
        return
    token = _tag.set(tag)
    try:
        yield
    finally:
        _tag.reset(token)


def count(kind: str, detail: str = "") -> None:
    if not enabled:
        return
    tag = _tag.get()
    if tag is None:
        return
    counts = _counts.get(tag)
    if counts is None:
        if len(_counts) >= _MAX_TAGS:
            _counts.pop(next(iter(_counts)))
        counts = _counts[tag] = Counter()
    counts[kind] += 1
    if detail:
        counts[f"{kind}:{detail[:120]}"] += 1


def take(tag: str) -> dict[str, int]:
    """The counts of `tag` in this process (kinds and "kind:detail"), forgotten once taken."""
    return dict(_counts.pop(tag, {}))


def metadata() -> tuple[tuple[str, str], ...]:
    """The current tag as gRPC metadata, for an outgoing call (empty when there is none)."""
    tag = _tag.get() if enabled else None
    return ((METADATA_KEY, tag),) if tag else ()


def after(tag: str) -> str:
    """The tag of the work that what is counted under `tag` leaves to consumers (the same, for that work's own)."""
    return tag if tag.endswith(AFTER) else tag + AFTER


def carried() -> dict[str, str]:
    """Headers for an event or a stored message, so that its consumers count under `after(tag)` (empty when there
    is no tag)."""
    tag = _tag.get() if enabled else None
    return {METADATA_KEY: after(tag)} if tag else {}


def tag_of(headers: dict[str, str] | None) -> str | None:
    """The tag a message's headers carry (None when counting is off)."""
    return headers.get(METADATA_KEY) if enabled and headers else None


def by_tag(items: list[T], headers_of: Callable[[T], dict[str, str] | None]) -> list[list[T]]:
    """`items` cut into runs of consecutive items carrying one tag, so that a consumer applying a batch at once
    counts each run under its own tag; one run, unchanged, when counting is off."""
    if not enabled:
        return [items]
    runs: list[list[T]] = []
    for item in items:
        if runs and tag_of(headers_of(runs[-1][0])) == tag_of(headers_of(item)):
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def count_statement(sql: str) -> None:
    """A statement as the database sees it: BEGIN opens a transaction, COMMIT/ROLLBACK belong to it."""
    if _tag.get() is None:  # background work: not worth normalizing its text
        return
    word = sql.lstrip()[:8].upper()
    if word.startswith("BEGIN"):
        count(TRANSACTION)
    elif not word.startswith(("COMMIT", "ROLLBACK")):
        count(SQL, " ".join(sql.split()))


def instrument_engine(engine: Any) -> None:
    """Count a SQLAlchemy engine's statements and transactions."""
    from sqlalchemy import event

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def _statement(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        count_statement(statement)  # SQLAlchemy sends BEGIN itself: it never passes here

    @event.listens_for(engine.sync_engine, "begin")
    def _begin(conn: Any) -> None:
        if not conn.connection.dbapi_connection.autocommit:  # an autocommit connection sends no BEGIN
            count(TRANSACTION)


def _logged(record: Any) -> None:
    count_statement(record.query)


def instrument_connection(conn: Any) -> None:
    """Count an asyncpg connection's statements (its query logger runs in the context of the caller)."""
    conn.add_query_logger(_logged)
