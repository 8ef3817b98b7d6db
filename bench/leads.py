"""Lead lists and the pipeline audit through the whole API, against plain indexed SQL for the same
page, measured in the same run.

Seeds 200,000 leads over 20 businesses of one account straight into the sdr schema (COPY), then,
for each case, times --requests sequential requests of:
- the full path: GET /api/v1/leads (or /leads/audit) with a key bound to one business: aiohttp
  gateway -> gRPC -> sdr service -> PostgreSQL -> JSON;
- the baseline: the same page as one hand-written SQL statement over asyncpg (for the audit, its
  count and sample statements), nothing else.
Each case first checks that both return the same leads, then reports p50/p99 of each and the
ratio of p50s. Whether each baseline statement uses an index is read from EXPLAIN. The result is a
set of ratios, never an assertion on timings.

Run: `PYTHONPATH=.:protos .venv/bin/python -m bench.leads` (`--requests`, `--leads`).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from bench import harness
from bench.harness import branches, signed_up, with_stack
from deploy.local.stack import Stack

BUSINESSES = 20
STATUSES = ("new", "contacted", "qualified", "converted", "lost", "unqualified", "spam", "do_not_contact")
STATUS_WEIGHTS = (30, 25, 15, 8, 12, 5, 3, 2)
SOURCES = ("api", "inbound_call", "web", "referral", "sms", "form")
COLUMNS = ("id", "business_id", "name", "email", "phone", "status", "source", "score", "score_confidence",
           "score_explanation", "score_factors", "interaction_count", "last_activity_at", "created_at", "updated_at")
LEAD_COLUMNS = ", ".join(("id", "business_id", "name", "first_name", "last_name", "email", "phone", "zip", "address",
                          "city", "state", "status", "source", "source_url", "source_page", "agent_id",
                          "agent_name", "notes", "message", "event_date", "event_type", "score", "created_at",
                          "updated_at"))


def seed_rows(business_ids: list[str], total: int, now: datetime) -> Iterator[tuple[Any, ...]]:
    rng = random.Random(7)
    for i in range(total):
        created = now - timedelta(seconds=rng.randrange(180 * 86400))
        updated = min(now, created + timedelta(seconds=rng.randrange(20 * 86400)))
        yield (uuid.uuid4(), uuid.UUID(business_ids[i % len(business_ids)]), f"Lead {i}", f"lead{i}@example.com",
               f"+1415{2000000 + i:07d}", rng.choices(STATUSES, STATUS_WEIGHTS)[0], rng.choice(SOURCES),
               rng.randrange(101), "low", "seeded", ["seeded"], rng.randrange(5), updated, created, updated)


def cases(business_id: str, now: datetime, sample_phone: str) -> list[tuple[str, dict[str, Any], str, list[Any]]]:
    """(name, API query, SQL WHERE after the business, its arguments after the business id)."""
    week_ago = now - timedelta(days=7)
    return [
        ("newest page", {}, "", []),
        ("status in 2", {"status": "qualified,contacted"}, "AND status = ANY($2)", [["qualified", "contacted"]]),
        ("source", {"source": "referral"}, "AND source = $2", ["referral"]),
        ("score >= 90", {"score_gte": "90"}, "AND score >= $2", [90]),
        ("phone exact", {"phone": sample_phone}, "AND phone = $2", [sample_phone]),
        ("created window", {"created_after": (now - timedelta(days=30)).isoformat(),
                            "created_before": week_ago.isoformat()},
         "AND created_at > $2 AND created_at < $3", [now - timedelta(days=30), week_ago]),
        ("updated since", {"updated_after": week_ago.isoformat()}, "AND updated_at > $2", [week_ago]),
    ]


def page_sql(where: str) -> str:
    return (f"SELECT {LEAD_COLUMNS} FROM sdr.leads WHERE business_id = $1 {where} "
            "ORDER BY created_at DESC, id DESC LIMIT 51")


OPEN = ["new", "contacted", "qualified"]
HOT = "business_id = $1 AND status = ANY($2) AND score >= 80 AND created_at <= $3"
STALLED = ("business_id = $1 AND status = ANY($2) AND updated_at < $3::timestamptz - interval '3 days' "
           "AND last_activity_at < $3::timestamptz - interval '3 days'")
WINDOW = "business_id = $1 AND created_at > $2::timestamptz - interval '24 hours' AND created_at <= $2"
UNHANDLED = """vm.business_id = $1 AND vm.received_at <= $2 AND NOT EXISTS (
    SELECT 1 FROM sdr.interactions i WHERE i.business_id = vm.business_id AND i.direction = 'outbound'
    AND i.occurred_at > vm.received_at AND i.lead_id IN (SELECT l.id FROM sdr.leads l
    WHERE l.business_id = vm.business_id AND (l.id = vm.lead_id OR l.phone = vm.from_number)))"""
# The audit's statements (count and first 50 of each group), with whether they take the open statuses.
AUDIT_SQL = [
    (f"SELECT count(*) FROM sdr.leads WHERE {HOT}", True),
    (f"SELECT {LEAD_COLUMNS} FROM sdr.leads WHERE {HOT} ORDER BY score DESC, created_at DESC LIMIT 50", True),
    (f"SELECT count(*) FROM sdr.leads WHERE {STALLED}", True),
    (f"SELECT {LEAD_COLUMNS} FROM sdr.leads WHERE {STALLED} ORDER BY updated_at LIMIT 50", True),
    (f"SELECT count(*) FROM sdr.leads WHERE {WINDOW}", False),
    (f"SELECT {LEAD_COLUMNS} FROM sdr.leads WHERE {WINDOW} ORDER BY created_at DESC LIMIT 50", False),
    (f"SELECT count(*) FROM sdr.voicemails vm WHERE {UNHANDLED}", False),
    (f"SELECT vm.* FROM sdr.voicemails vm WHERE {UNHANDLED} ORDER BY vm.received_at DESC LIMIT 50", False),
]


def audit_args(business_id: str, with_statuses: bool, as_of: datetime) -> list[Any]:
    return [business_id, OPEN, as_of] if with_statuses else [business_id, as_of]


def quantiles(samples: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


async def timed(n: int, step: Callable[[], Awaitable[object]]) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        await step()
        out.append(time.perf_counter() - started)
    return out


async def uses_index(conn: Any, sql: str, args: list[Any]) -> bool:
    plan = await conn.fetchval(f"EXPLAIN (FORMAT JSON) {sql}", *args)
    return "Index" in str(plan)


async def run(args: argparse.Namespace, stack: Stack) -> int:
    import aiohttp
    import asyncpg

    base = stack.base_url
    path = f"GET /api/v1/leads (7 filters) and /leads/audit, {args.leads:,} leads: median"
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        signup, _ = await signed_up(http, base, "Bench Co", "bench@example.com", stack.database_url)
        business_ids = [signup["business_id"], *await branches(stack.database_url, signup["business_id"],
                                                               BUSINESSES - 1)]
        business_id = business_ids[0]
        async with http.post(f"{base}/api/v1/keys", json={"scopes": ["leads:read"],
                                                          "business_id": business_id}) as r:
            key = (await r.json())["key"]
    now = datetime.now(UTC)
    conn = await asyncpg.connect(stack.database_url)
    try:
        started = time.perf_counter()
        await conn.copy_records_to_table("leads", schema_name="sdr", columns=COLUMNS,
                                         records=seed_rows(business_ids, args.leads, now))
        await conn.execute("ANALYZE sdr.leads")
        print(f"seeded {args.leads:,} leads over {BUSINESSES} businesses in {time.perf_counter() - started:.1f}s")
        sample_phone = await conn.fetchval("SELECT phone FROM sdr.leads WHERE business_id = $1 LIMIT 1", business_id)
        headers = {"Authorization": f"Bearer {key}"}
        print(f"{args.requests} sequential requests per case; one business ({args.leads // BUSINESSES:,} leads); "
              "p50/p99 in ms")
        print(f"  {'case':<16} {'API p50':>8} {'API p99':>8} {'SQL p50':>8} {'SQL p99':>8} {'ratio':>6}  index")
        p50s: list[tuple[float, float]] = []  # (API, SQL) of each case
        async with aiohttp.ClientSession() as http:
            for name, query, where, extra in cases(business_id, now, sample_phone):
                sql, sql_args = page_sql(where), [business_id, *extra]

                # the loop's values bound now (B023), though each page is awaited within this round
                async def api_page(query: dict[str, str] = query, name: str = name) -> Any:
                    async with http.get(f"{base}/api/v1/leads", params=query, headers=headers) as r:
                        body = await r.json()
                        if r.status != 200:
                            raise RuntimeError(f"{name}: {r.status} {body}")
                        return body

                async def sql_page(sql: str = sql, sql_args: list[Any] = sql_args) -> Any:
                    return await conn.fetch(sql, *sql_args)

                api_ids = [lead["id"] for lead in (await api_page())["leads"]]
                sql_ids = [str(r["id"]) for r in (await sql_page())[:50]]
                if api_ids != sql_ids:
                    print(f"  {name}: the API and the SQL disagree; no verdict")
                    harness.report("bench.leads", path, None, "ms p50", None, None, "none stated", harness.INVALID)
                    return 1
                api_t, sql_t = await timed(args.requests, api_page), await timed(args.requests, sql_page)
                p50s.append(report(name, api_t, sql_t, await uses_index(conn, sql, sql_args)))

            async def api_audit() -> None:
                async with http.get(f"{base}/api/v1/leads/audit", headers=headers) as r:
                    if r.status != 200:
                        raise RuntimeError(f"audit: {r.status} {await r.text()}")
                    await r.read()

            async def sql_audit() -> None:
                as_of = datetime.now(UTC)
                for sql, with_statuses in AUDIT_SQL:
                    await conn.fetch(sql, *audit_args(business_id, with_statuses, as_of))

            indexed = all([await uses_index(conn, sql, audit_args(business_id, st, now)) for sql, st in AUDIT_SQL
                           if "sdr.leads WHERE" in sql])
            p50s.append(report("audit", await timed(args.requests, api_audit),
                               await timed(args.requests, sql_audit), indexed))
    finally:
        await conn.close()
    ratio = statistics.median(api / sql for api, sql in p50s)
    print(f"median ratio of p50s (API / plain SQL): {ratio:.2f}")
    harness.report("bench.leads", path, statistics.median(api for api, _ in p50s), "ms p50",
                   statistics.median(sql for _, sql in p50s), ratio, "none stated", harness.judged(None))
    return 0


def report(name: str, api_t: list[float], sql_t: list[float], indexed: bool) -> tuple[float, float]:
    """Print a case's line; its p50s in ms (API, SQL)."""
    (a50, a99), (s50, s99) = quantiles(api_t), quantiles(sql_t)
    print(f"  {name:<16} {a50:>8.2f} {a99:>8.2f} {s50:>8.2f} {s99:>8.2f} {a50 / s50:>6.1f}  "
          f"{'yes' if indexed else 'NO'}", flush=True)
    return a50, s50


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.leads", description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="sequential requests per case (default 200)")
    parser.add_argument("--leads", type=int, default=200_000, help="leads to seed (default 200000)")
    args = parser.parse_args()
    return with_stack("leads", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
