"""bench-runs: communication runs end to end on the embedded stack, next to a bare loop calling the voice simulator
directly in the same run.

1. A run of 10,000 call touches a day ahead, over the opted-in callees of the rounds below: the time to validate
   it, preview it (every touch through the compliance decision, the run's own calls counting towards the
   frequency cap) and create it (the run and its jobs in one transaction). Goal: create < 5 s.
2. A burst: 2,000 call touches all due now. Touches placed per second (first planned time to the last call the
   simulator took) and the lateness of each touch (its planned time to the call's `createdAt` at the simulator),
   p50/p99; the bare loop places the same number of calls 50 at a time.
3. Steady: 2,000 call touches planned 100 per second. Lateness p50/p99 (goal p99 < 1 s); the bare loop sleeps
   until each planned time and places the call.

Callees are numbers whose calling window is open now (US area codes, or abroad when the US sleeps), each opted in
through the API. The simulator's calls ring without playing (no status updates or reports come back: the same
work at the simulator for both sides) and the per-business limit on calls in flight is lifted
(RUNS_CALLS_IN_FLIGHT), so nothing but the way to the provider is measured: the scheduler, the calls service, the
compliance decision and the services they ask. CPU ms per touch per process are printed for each scheduler round.
The simulator saves its state once a minute (VOICE_SIM_SAVE_SECONDS): its whole-state saves grow with the calls it
holds and would otherwise take more of the two cores in each later round.

    make bench-runs [ARGS="--touches 2000 --rate 100 --create 10000"]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import asyncpg

from bench.calls import setup
from bench.harness import CpuMeter, judged, report, with_stack
from core.compliance import decision as compliance
from core.compliance.rules import CALL
from deploy.local.stack import Stack
from providers.voice.vapi.client import VapiClient

# Patterns of ten thousand numbers each: {} is the last four digits.
PATTERNS = ("+1212555{}", "+1303555{}", "+1206555{}", "+1808555{}", "+1907555{}", "+1312555{}", "+1512555{}",
            "+1617555{}", "+44207946{}", "+4930123{}", "+2721123{}", "+8131234{}", "+6129374{}", "+6495123{}")
SIMULATOR_OUTCOMES = {"0001", "0002", "0003", "0004"}  # suffixes the voice simulator answers otherwise
CREATE_GOAL_S, LATENESS_GOAL_MS = 5, 1000  # create the run; the steady round's lateness p99


def open_numbers(count: int, within: timedelta, first: int = 0) -> list[str]:
    """`count` distinct numbers whose calling window is open from now until `within` from now, their last four
    digits from `first` up (a caller keeps its callees apart from others' by its own range)."""
    now = datetime.now(UTC)
    found: list[str] = []
    for pattern in PATTERNS:
        if not all(compliance.open_to(CALL, pattern.format("5000"), now + step)
                   for step in (timedelta(0), within)):
            continue
        found += [pattern.format(f"{n:04d}") for n in range(first, 10_000) if f"{n:04d}" not in SIMULATOR_OUTCOMES]
        if len(found) >= count:
            return found[:count]
    raise SystemExit(f"only {len(found)} numbers have an open calling window now; try fewer touches")


def stamp(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def percentiles(seconds: list[float]) -> tuple[float, float]:
    ordered = sorted(seconds)
    return statistics.median(ordered) * 1000, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000


class Bench:
    def __init__(self, http: aiohttp.ClientSession, stack: Stack, key: str, agent_id: str, db: asyncpg.Connection):
        self.http, self.stack, self.key, self.agent_id, self.db = http, stack, key, agent_id, db
        self.auth = {"Authorization": f"Bearer {key}"}
        self.simulator = f"http://127.0.0.1:{stack.process('voice-simulator').port}"
        self.voice = VapiClient(self.simulator, stack.home_secret("voice_api_key"))

    async def api(self, method: str, path: str, expected: int, **kwargs: Any) -> dict[str, Any]:
        async with self.http.request(method, self.stack.base_url + path, headers={**self.auth, **kwargs.pop(
                "headers", {})}, **kwargs) as r:
            body: dict[str, Any] = await r.json()
            assert r.status == expected, (path, r.status, str(body)[:500])
            return body

    async def opt_in(self, phones: list[str]) -> None:
        gate = asyncio.Semaphore(20)

        async def one(phone: str) -> None:
            async with gate:
                await self.api("POST", "/api/v1/sms/consent", 201, json={"phone": phone, "state": "opted_in",
                                                                         "note": "bench"})

        await asyncio.gather(*(one(p) for p in phones))

    def run_body(self, phones: list[str], times: list[datetime]) -> dict[str, Any]:
        pairs = zip(phones, times, strict=False)  # fewer open numbers than asked for: the shorter list
        return {"external_ref": f"bench-{uuid.uuid4().hex[:8]}", "agent_id": self.agent_id,
                "touches": [{"touch_id": f"t{i}", "channel": "call", "target": {"phone": phone},
                             "scheduled_at": stamp(at)} for i, (phone, at) in enumerate(pairs)]}

    async def timed(self, method: str, path: str, expected: int, **kwargs: Any) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        body = await self.api(method, path, expected, **kwargs)
        return time.perf_counter() - started, body

    async def creation(self, count: int, phones: list[str]) -> float:
        """Validate, preview and create a run of `count` touches over these opted-in callees, a second apart from
        this time tomorrow (a callee may have two or three: the run's own calls count towards the cap); the seconds
        the creation took."""
        tomorrow = datetime.now(UTC) + timedelta(days=1)
        body = self.run_body([phones[n % len(phones)] for n in range(count)],
                             [tomorrow + timedelta(seconds=n) for n in range(count)])
        print(f"a run of {count} call touches a day ahead ({len(str(body)) / 1e6:.1f} MB of JSON):")
        seconds, report = await self.timed("POST", "/api/v1/communication-runs/validate", 200, json=body)
        print(f"  validate {seconds:6.2f} s  (valid: {report['valid']})")
        seconds, plan = await self.timed("POST", "/api/v1/communication-runs/preview", 200, json=body)
        print(f"  preview  {seconds:6.2f} s  (outcomes: {plan['by_outcome']})")
        seconds, run = await self.timed("POST", "/api/v1/communication-runs", 201, json=body,
                                        headers={"Idempotency-Key": str(uuid.uuid4())})
        print(f"  create   {seconds:6.2f} s  (goal < {CREATE_GOAL_S} s; {run['jobs']['pending']} jobs pending)")
        await self.api("PATCH", "/api/v1/communication-runs", 200, json={"id": run["id"], "action": "cancel"})
        return seconds

    async def placed_at(self, run_id: str, count: int, timeout: float) -> dict[str, datetime]:
        """Each touch's call as the simulator took it (its createdAt), by touch id, once all are placed."""
        deadline = time.monotonic() + timeout
        rows = []
        while time.monotonic() < deadline:
            rows = await self.db.fetch(
                "SELECT j.touch_id, c.provider_call_id FROM sdr.communication_jobs j JOIN calls.calls c "
                "ON c.id = j.call_id WHERE j.run_id = $1 AND c.provider_call_id IS NOT NULL", uuid.UUID(run_id))
            if len(rows) >= count:
                break
            await asyncio.sleep(0.5)
        gate = asyncio.Semaphore(20)

        async def created(provider_id: str) -> datetime:
            async with gate:
                return parse((await self.voice.get_call(provider_id))["createdAt"])

        stamps = await asyncio.gather(*(created(r["provider_call_id"]) for r in rows))
        return {r["touch_id"]: at for r, at in zip(rows, stamps, strict=True)}

    async def scheduled(self, name: str, phones: list[str], times: list[datetime]) -> tuple[float, list[float]]:
        """Create a run of these touches and wait for every call: (touches/s, lateness of each in seconds)."""
        await self.silence(len(phones))
        cpu = CpuMeter(self.stack)
        before = cpu.read()
        run = await self.api("POST", "/api/v1/communication-runs", 201, json=self.run_body(phones, times),
                             headers={"Idempotency-Key": str(uuid.uuid4())})
        placed = await self.placed_at(run["id"], len(phones), timeout=120 + len(phones) / 20)
        self.cpu = cpu.per_unit(before, cpu.read(), len(phones), "touch")
        if len(placed) < len(phones):
            raise SystemExit(f"{name}: only {len(placed)} of {len(phones)} touches were placed")
        planned = {f"t{i}": max(at, parse(run["created_at"])) for i, at in enumerate(times)}
        late = [(placed[t] - planned[t]).total_seconds() for t in planned]
        span = (max(placed.values()) - min(planned.values())).total_seconds()
        return len(phones) / span, late

    async def silence(self, calls: int) -> None:
        """The simulator's next calls ring on without playing (no status updates, no report): the rounds measure
        the way to the provider, and the same work at the simulator for the scheduler and the bare loop."""
        async with self.http.post(f"{self.simulator}/_simulator/playback", json={"silent": True, "times": calls}) as r:
            assert r.status == 201, await r.text()

    async def bare(self, phones: list[str], times: list[datetime], concurrency: int | None) -> tuple[float, list[Any]]:
        """The same calls placed straight at the simulator by a loop: (calls/s, lateness of each in seconds)."""
        profile = await self.db.fetchrow(
            "SELECT a.provider_assistant_id, n.provider_phone_number_id FROM agents.agents a JOIN "
            "agents.phone_numbers n ON n.agent_id = a.id WHERE a.id = $1", uuid.UUID(self.agent_id))
        gate = asyncio.Semaphore(concurrency or len(phones))

        async def place(phone: str, at: datetime) -> float:
            await asyncio.sleep(max(0.0, (at - datetime.now(UTC)).total_seconds()))
            async with gate:
                call = await self.voice.create_call({"assistantId": profile["provider_assistant_id"],
                                                     "phoneNumberId": profile["provider_phone_number_id"],
                                                     "customer": {"number": phone}})
            return (parse(call["createdAt"]) - at).total_seconds()

        await self.silence(len(phones))
        late = await asyncio.gather(*(place(p, at) for p, at in zip(phones, times, strict=False)))
        return len(phones) / (max(late) + (times[-1] - times[0]).total_seconds()), list(late)


def line(name: str, rate: float, late: list[float]) -> None:
    p50, p99 = percentiles(late)
    print(f"  {name:<26} {rate:>9.1f} {p50:>9.0f} {p99:>9.0f} {len(late):>7}")


async def run(args: argparse.Namespace, stack: Stack) -> int:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        key, agent_id = await setup(http, stack.base_url, stack.database_url)
        db = await asyncpg.connect(stack.database_url)
        bench = Bench(http, stack, key, agent_id, db)
        try:
            phones = open_numbers(4 * args.touches, timedelta(minutes=30))
            print(f"opting in {len(phones)} callees ...", flush=True)
            await bench.opt_in(phones)
            create_seconds = await bench.creation(args.create, phones)
            burst, steady = phones[:args.touches], phones[args.touches:2 * args.touches]
            bare_burst, bare_steady = phones[2 * args.touches:3 * args.touches], phones[3 * args.touches:]
            print("call touches placed at the simulator: touches/s, lateness planned -> createdAt in ms")
            print(f"  {'round':<26} {'touches/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'touches':>7}")
            now = datetime.now(UTC) + timedelta(seconds=1)
            bare_rate, late = await bench.bare(bare_burst, [now] * args.touches, 50)
            line("bare loop, burst", bare_rate, late)
            burst_rate, late = await bench.scheduled("burst", burst, [datetime.now(UTC)] * args.touches)
            line("scheduler, burst", burst_rate, late)
            print(bench.cpu)
            burst_p50, burst_p99 = percentiles(late)
            step = timedelta(seconds=1 / args.rate)
            start = datetime.now(UTC) + timedelta(seconds=2)
            bare_steady_rate, late = await bench.bare(bare_steady, [start + i * step for i in range(args.touches)],
                                                      None)
            line(f"bare loop, {args.rate}/s", bare_steady_rate, late)
            start = datetime.now(UTC) + timedelta(seconds=3)
            steady_rate, late = await bench.scheduled("steady", steady,
                                                      [start + i * step for i in range(args.touches)])
            line(f"scheduler, {args.rate}/s", steady_rate, late)
            print(bench.cpu)
            steady_p50, steady_p99 = percentiles(late)
        finally:
            await db.close()
            await bench.voice.close()
    created_in_time = create_seconds < CREATE_GOAL_S
    print(f"ratio to the bare loop (burst touches/s): {burst_rate / bare_rate:.2f}; steady p99 {steady_p99:.0f} ms "
          f"(goal < {LATENESS_GOAL_MS}); create {'within' if created_in_time else 'OVER'} {CREATE_GOAL_S} s")
    placed = f"{args.touches} call touches of a run placed (p50/p99: lateness)"
    report("bench.runs", f"{placed}, all due now", burst_rate, "touches/s", bare_rate,
           burst_rate / bare_rate, "none stated", judged(None), p50_ms=burst_p50, p99_ms=burst_p99)
    report("bench.runs", f"{placed}, planned {args.rate}/s", steady_rate, "touches/s",
           bare_steady_rate, steady_rate / bare_steady_rate, f"lateness p99 < {LATENESS_GOAL_MS} ms",
           judged(steady_p99 < LATENESS_GOAL_MS), p50_ms=steady_p50, p99_ms=steady_p99)
    report("bench.runs", f"POST /api/v1/communication-runs, {args.create:,} call touches", create_seconds, "s",
           None, None, f"< {CREATE_GOAL_S} s", judged(created_in_time))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runs", description=__doc__.splitlines()[0])
    parser.add_argument("--touches", type=int, default=2000, help="touches per execution round (default 2000)")
    parser.add_argument("--rate", type=int, default=100, help="touches per second in the steady round (default 100)")
    parser.add_argument("--create", type=int, default=10_000, help="touches of the run created (default 10000)")
    args = parser.parse_args()
    return with_stack("runs", lambda stack: run(args, stack),
                      env={"RUNS_CALLS_IN_FLIGHT": "100000", "VOICE_SIM_SAVE_SECONDS": "60"})


if __name__ == "__main__":
    sys.exit(main())
