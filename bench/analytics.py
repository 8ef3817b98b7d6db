"""The six analytics reports through the whole API, against the plain SQL aggregate of the same figures,
measured in the same run, as the data grows.

Seeds calls and leads over 50 businesses and 500 agents of one account straight into the calls and sdr schemas
(COPY, spread over the last 180 days), in steps (default 100k, 250k, 500k, 1M calls, a fifth as many leads).
At each step, for each report, it times --requests sequential requests:
- the full path with a key bound to one business, and with a key spanning all 50: aiohttp gateway -> gRPC sdr
  (the report's composer) -> gRPC accounts, agents, calls (in parallel where one needs no other's answer) and
  PostgreSQL -> JSON;
- the baseline: one hand-written SQL aggregate over asyncpg for the report's main figures over the same
  businesses and 30 days (UTC days), nothing else.
It prints p50/p99 of each and the ratio of the p50s. The result is a set of numbers, never an assertion.

Run: `make bench-analytics` or `PYTHONPATH=.:protos .venv/bin/python -m bench.analytics` (`--steps`,
`--requests`).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

import argparse
import json
import random
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.harness import branches, judged, report, signed_up, with_stack
from bench.leads import quantiles, timed
from deploy.local.stack import Stack

BUSINESSES, AGENTS = 50, 500
CALL_STATUSES = ("completed", "no-answer", "busy", "voicemail", "failed", "canceled")
CALL_WEIGHTS = (60, 12, 5, 13, 7, 3)
LEAD_STATUSES = ("new", "contacted", "qualified", "converted", "lost", "unqualified", "spam", "do_not_contact")
LEAD_WEIGHTS = (30, 25, 15, 8, 12, 5, 3, 2)
CALL_COLUMNS = ("id", "business_id", "agent_id", "agent_name", "direction", "status", "to_number", "max_duration",
                "compliance", "variables", "duration", "created_at", "updated_at")
LEAD_COLUMNS = ("id", "business_id", "agent_id", "name", "status", "source", "score", "score_confidence",
                "score_explanation", "score_factors", "last_activity_at", "created_at", "updated_at")
AGENT_COLUMNS = ("id", "business_id", "name", "status", "provider_assistant_id", "config", "metadata", "version",
                 "inbound_prompt_source", "created_at", "updated_at")
DAYS = 180
REPORTS = [("dashboard", {"days": 30}), ("calls", {"days": 30, "group_by": "day"}), ("funnel", {"days": 30}),
           ("agents", {"days": 30}), ("weekly", {}), ("businesses", {"days": 30})]
# The baseline: the main aggregate of each report as one statement ($1 the businesses).
SQL = {
    "dashboard": "SELECT count(*), count(*) FILTER (WHERE status = 'completed'), sum(duration) FROM calls.calls "
                 "WHERE business_id = ANY($1) AND created_at >= now() - interval '30 days'",
    "calls": "SELECT date_trunc('day', created_at), status, count(*), sum(duration) FROM calls.calls "
             "WHERE business_id = ANY($1) AND created_at >= now() - interval '30 days' GROUP BY 1, 2",
    "funnel": "SELECT status, count(*) FROM sdr.leads WHERE business_id = ANY($1) "
              "AND created_at >= now() - interval '30 days' GROUP BY 1",
    "agents": "SELECT agent_id, count(*), count(*) FILTER (WHERE status = 'completed'), sum(duration) FROM calls.calls "
              "WHERE business_id = ANY($1) AND created_at >= now() - interval '30 days' GROUP BY 1",
    "weekly": "SELECT date_trunc('week', created_at), agent_id, count(*), sum(duration) FROM calls.calls "
              "WHERE business_id = ANY($1) AND created_at >= date_trunc('week', now()) - interval '1 week' GROUP BY 1, 2",
    "businesses": "SELECT business_id, count(*), count(*) FILTER (WHERE status = 'completed'), sum(duration) "
                  "FROM calls.calls WHERE business_id = ANY($1) AND created_at >= now() - interval '30 days' "
                  "GROUP BY 1",
}


def calls(rng: random.Random, agents: list[tuple[Any, ...]], count: int, now: datetime) -> Iterator[tuple[Any, ...]]:
    for _ in range(count):
        agent_id, business_id, name = rng.choice(agents)
        at = now - timedelta(seconds=rng.randrange(DAYS * 86400))
        yield (uuid.uuid4(), business_id, agent_id, name, "inbound", rng.choices(CALL_STATUSES, CALL_WEIGHTS)[0],
               "+14155550100", 600, "skip", "{}", rng.randrange(600), at, at)


def leads(rng: random.Random, agents: list[tuple[Any, ...]], count: int, now: datetime) -> Iterator[tuple[Any, ...]]:
    for i in range(count):
        agent_id, business_id, _ = rng.choice(agents)
        at = now - timedelta(seconds=rng.randrange(DAYS * 86400))
        yield (uuid.uuid4(), business_id, agent_id, f"Lead {i}", rng.choices(LEAD_STATUSES, LEAD_WEIGHTS)[0], "web", 50,
               "low", "seeded", ["seeded"], at, at, at)


async def accounts(http: aiohttp.ClientSession, base: str, database_url: str) -> tuple[list[str], str, str]:
    """The businesses, a key spanning them all and a key bound to the first."""
    signup, everything = await signed_up(http, base, "Bench Co", "analytics@example.com", database_url)
    business_ids = [signup["business_id"], *await branches(database_url, signup["business_id"], BUSINESSES - 1)]
    async with http.post(f"{base}/api/v1/keys", json={"scopes": ["*"], "business_id": business_ids[0]}) as r:
        one = (await r.json())["key"]
    return business_ids, everything, one


async def run(args: argparse.Namespace, stack: Stack) -> int:
    import aiohttp
    import asyncpg

    base, rng, now = stack.base_url, random.Random(11), datetime.now(UTC)
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        business_ids, everything, one = await accounts(http, base, stack.database_url)
    conn = await asyncpg.connect(stack.database_url)
    try:
        agents = [(uuid.uuid4(), uuid.UUID(business_ids[i % BUSINESSES]), f"Agent {i}") for i in range(AGENTS)]
        await conn.copy_records_to_table("agents", schema_name="agents", columns=AGENT_COLUMNS, records=[
            (a, b, name, "active", f"bench-{a}", "{}", "{}", 1, "create", now, now) for a, b, name in agents])
        seeded = 0
        async with aiohttp.ClientSession() as http:
            for step in args.steps:
                started = time.perf_counter()
                await conn.copy_records_to_table("calls", schema_name="calls", columns=CALL_COLUMNS,
                                                 records=calls(rng, agents, step - seeded, now))
                await conn.copy_records_to_table("leads", schema_name="sdr", columns=LEAD_COLUMNS,
                                                 records=leads(rng, agents, (step - seeded) // 5, now))
                await conn.execute("VACUUM ANALYZE calls.calls")
                await conn.execute("VACUUM ANALYZE sdr.leads")
                seeded = step
                print(f"\n{step:,} calls and {step // 5:,} leads over {BUSINESSES} businesses and {AGENTS} agents "
                      f"(seeded in {time.perf_counter() - started:.1f}s); {args.requests} sequential requests per "
                      "case; p50/p99 in ms", flush=True)
                print(f"  {'report':<11} {'scope':<6} {'API p50':>8} {'API p99':>8} {'SQL p50':>8} {'SQL p99':>8} "
                      f"{'ratio':>6}")
                spanning: list[tuple[float, float]] = []  # this step's (API, SQL) p50 of each report, all 50
                for name, params in REPORTS:
                    for scope, key, ids in (("one", one, business_ids[:1]), ("all 50", everything, business_ids)):
                        headers = {"Authorization": f"Bearer {key}"}

                        async def api(name: str = name, params: Any = params,
                                      headers: dict[str, str] = headers) -> Any:
                            async with http.get(f"{base}/api/v1/analytics/{name}", params=params,
                                                headers=headers) as r:
                                body = await r.read()
                                if r.status != 200:
                                    raise RuntimeError(f"{name}: {r.status} {body[:300]!r}")
                                return json.loads(body)

                        async def sql(name: str = name, ids: list[str] = ids) -> Any:
                            return await conn.fetch(SQL[name], [uuid.UUID(i) for i in ids])

                        await api()
                        (a50, a99), (s50, s99) = (quantiles(await timed(args.requests, api)),
                                                  quantiles(await timed(args.requests, sql)))
                        print(f"  {name:<11} {scope:<6} {a50:>8.1f} {a99:>8.1f} {s50:>8.1f} {s99:>8.1f} "
                              f"{a50 / s50:>6.1f}", flush=True)
                        if len(ids) == BUSINESSES:
                            spanning.append((a50, s50))
    finally:
        await conn.close()
    # The headline: the largest step, the key spanning every business (the costlier scope).
    report("bench.analytics", f"the {len(REPORTS)} GET /api/v1/analytics/* reports, {BUSINESSES} businesses, "
           f"{seeded:,} calls: median", statistics.median(a for a, _ in spanning),
           "ms p50", statistics.median(s for _, s in spanning), statistics.median(a / s for a, s in spanning),
           "none stated", judged(None))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.analytics", description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30, help="sequential requests per case (default 30)")
    parser.add_argument("--steps", type=lambda s: [int(n) for n in s.split(",")],
                        default=[100_000, 250_000, 500_000, 1_000_000],
                        help="calls after each step, comma-separated (default 100000,250000,500000,1000000)")
    args = parser.parse_args()
    return with_stack("analytics", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
