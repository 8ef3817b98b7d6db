"""Running a benchmark against a fresh embedded stack: started in a temporary folder, stopped after,
its logs kept when the run aborts."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from deploy.local.servers import free_port
from deploy.local.stack import Stack
from tests.standing import start_trial

# No per-key limit gets in the way of a benchmark; quiet logs.
BENCH_ENV = {"KEY_RATE_LIMIT_PER_MINUTE": "100000000", "LOG_LEVEL": "WARNING"}
# The file (JSON lines) each bench appends its headline records to, when set (bench.all sets it).
RESULTS_ENV = "BENCH_RESULTS"
PASS, BELOW_GOAL, INVALID, NO_GOAL = "PASS", "BELOW GOAL", "INVALID", "NO GOAL"


def judged(met: bool | None, valid: bool = True) -> str:
    """INVALID when the run is not, else whether the goal was met; NO GOAL (`met` None) for a figure without one."""
    if not valid:
        return INVALID
    return NO_GOAL if met is None else PASS if met else BELOW_GOAL


def report(bench: str, path: str, figure: float | None, unit: str, baseline: float | None, ratio: float | None,
           goal: str, verdict: str, *, p50_ms: float | None = None, p99_ms: float | None = None,
           per_round: list[float] | None = None) -> dict[str, Any]:
    """A bench's headline in the shape every bench shares (one call per headline, at the end), appended as one JSON
    line to the file RESULTS_ENV names, if it names one; returns the record. `baseline` is the bare figure in the
    same unit and `ratio` the bench's own ratio to it."""
    record: dict[str, Any] = {"bench": bench, "path": path, "figure": figure, "unit": unit, "baseline": baseline,
                    "ratio": ratio, "goal": goal, "verdict": verdict}
    optional = {"p50_ms": p50_ms, "p99_ms": p99_ms, "per_round": per_round}
    record |= {name: value for name, value in optional.items() if value is not None}
    if results := os.environ.get(RESULTS_ENV):
        with open(results, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    return record


async def branches(database_url: str, business_id: str, count: int) -> list[str]:
    """`count` further workspaces of the business's account, seeded in the database as workspaces billed on its
    subscription (through the API each is billed at the payment provider, within the plan's limit: these
    benchmarks measure reads over many businesses, not that)."""
    import asyncpg

    conn = await asyncpg.connect(database_url)
    try:
        rows = await conn.fetch(
            "INSERT INTO accounts.businesses (id, account_id, name, lifecycle_state, metadata, plan_id, "
            "subscription_status, trial_ends_at, created_at, updated_at, billed_on) "
            "SELECT gen_random_uuid(), b.account_id, 'Branch ' || n, 'active', '{}', b.plan_id, "
            "b.subscription_status, b.trial_ends_at, now() + n * interval '1 millisecond', now(), b.id "
            "FROM accounts.businesses AS b, generate_series(1, $2) AS n WHERE b.id = $1::uuid "
            "ORDER BY n RETURNING id", business_id, count)
    finally:
        await conn.close()
    return [str(r["id"]) for r in rows]


async def signed_up(http: aiohttp.ClientSession, base: str, business_name: str, email: str, database_url: str) -> tuple[dict[str, Any], str]:
    """A new account in its trial (tests.standing): the signup reply and a key with every scope, made in the
    dashboard session that `http` (an aiohttp session whose cookie jar is unsafe=True: the stack is on an IP
    address) keeps after the magic link."""
    async with http.post(f"{base}/api/v1/signup", json={"business_name": business_name, "email": email}) as r:
        signup = await r.json()
    await start_trial(database_url, signup["business_id"])
    await sign_in(http, signup["dashboard_magic_link"])
    async with http.post(f"{base}/api/v1/keys", json={"scopes": ["*"]}) as r:
        return signup, (await r.json())["key"]


async def sign_in(http: aiohttp.ClientSession, magic_link: str) -> None:
    """Press the sign-in link's button (its page's form posts to the link itself): the session cookie is in `http`'s
    jar after."""
    async with http.post(magic_link, allow_redirects=False) as r:
        assert r.status == 303, await r.text()


class CpuMeter:
    """CPU seconds spent by each part of a stack (each process, PostgreSQL with its backends, NATS) and by this
    process, between readings. `merge`: processes whose name starts with a key count as one part, its value."""

    def __init__(self, stack: Stack, merge: dict[str, str] | None = None):
        self.stack, self.merge = stack, merge or {}

    def _part(self, name: str) -> str:
        return next((part for prefix, part in self.merge.items() if name.startswith(prefix)), name)

    def read(self) -> dict[str, float]:
        procs: list[tuple[str, psutil.Process]] = [("bench", psutil.Process())]
        procs += [(self._part(p.name), psutil.Process(p.proc.pid)) for p in self.stack.processes if p.proc]
        if self.stack.postgres and self.stack.postgres.proc:
            postgres = psutil.Process(self.stack.postgres.proc.pid)
            procs += [("postgres", proc) for proc in (postgres, *postgres.children(recursive=True))]
        if self.stack.nats and self.stack.nats.proc:
            procs.append(("nats", psutil.Process(self.stack.nats.proc.pid)))
        spent: dict[str, float] = {}
        for part, proc in procs:
            try:
                times = proc.cpu_times()
            except psutil.NoSuchProcess:  # a backend that ended between listing and reading
                continue
            spent[part] = spent.get(part, 0.0) + times.user + times.system
        return spent

    @staticmethod
    def per_unit(before: dict[str, float], after: dict[str, float], count: int, unit: str) -> str:
        """The parts that spent at least 0.01 ms per `unit`, most first. A backend that ended in between takes
        its time with it, so PostgreSQL's share is a lower bound."""
        spent = sorted(((after[part] - before.get(part, 0.0)) * 1000 / count, part) for part in after)
        return f"    CPU ms per {unit}: " + ", ".join(f"{part} {ms:.2f}" for ms, part in reversed(spent) if ms >= 0.01)


def with_stack(name: str, run: Callable[[Stack], Coroutine[Any, Any, int]], env: dict[str, str] | None = None, *,
               replicas: int = 1) -> int:
    """Start a stack (with `env` on top of BENCH_ENV; `replicas` of each process), run `run(stack)` on a new event
    loop, stop the stack; returns run's exit status."""
    home = Path(tempfile.mkdtemp(prefix=f"switchboard-bench-{name}-"))
    stack = Stack(home=home, http_port=free_port(), durable=False, extra_env={**BENCH_ENV, **(env or {})},
                  replicas=replicas)
    finished = False
    try:
        print(f"starting the embedded stack in {home} ...", flush=True)
        stack.start()
        code = asyncio.run(run(stack))
        finished = code == 0
        return code
    finally:
        stack.stop()
        if finished:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"bench aborted or failed; its stack's home (database, logs) kept in {stack.home}", file=sys.stderr)
