"""Texts through the whole send path, against a bare send to the messaging provider, in the same run.

The stack's path is POST /api/v1/sms/send with every check on (do-not-call lists, consent history, content
rules, quiet hours), the thread written before the provider call, and the provider's answer recorded with
sms.sent. The baseline posts the same texts straight to the provider simulator's Messages.json, Basic-auth
signed, nothing else. Both run --concurrency sends at a time over --texts texts to --recipients recipients
(each opted in first, in a time zone whose quiet hours are over now); the report gives sends per second and
p50/p99 per send, and the ratio of the stack's rate to the bare one. Every send must succeed, or the run is
invalid.

Run: `make bench-messaging` (`--texts`, `--concurrency`, `--recipients`).
"""
from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import aiohttp

from bench.harness import CpuMeter, judged, report, signed_up, with_stack
from core.compliance import decision as compliance
from core.compliance.rules import SMS
from deploy.local.stack import Stack

RATE_GOAL, P99_GOAL_MS = 500, 150  # sends/s and p99 through the stack (issue 38)
SETTLE_SECONDS = 3.0

# One zone each: at any hour some are between 08:00 and 21:00.
ZONED = ("+1415555{:04d}", "+1212555{:04d}", "+44207946{:04d}", "+4930123{:04d}", "+8131234{:04d}",
         "+6129374{:04d}")


def open_recipients(count: int) -> list[str]:
    now = datetime.now(UTC)
    pattern = next(p for p in ZONED if compliance.open_to(SMS, p.format(2000), now))
    return [pattern.format(2000 + n) for n in range(count)]


async def timed(gate: asyncio.Semaphore, send: Callable[[], Awaitable[bool]]) -> tuple[float, bool]:
    async with gate:
        started = time.perf_counter()
        ok = await send()
        return time.perf_counter() - started, ok


async def measure(name: str, texts: int, concurrency: int, send: Callable[[int], Awaitable[bool]]) -> tuple[float, float, float]:
    """Run `send(n)` for n below `texts`, `concurrency` at a time, and print the line: the rate (0 if a send
    failed), p50 and p99 in ms."""
    gate = asyncio.Semaphore(concurrency)
    started = time.perf_counter()
    results = await asyncio.gather(*(timed(gate, functools.partial(send, n)) for n in range(texts)))
    seconds = time.perf_counter() - started
    failed = sum(1 for _, ok in results if not ok)
    ms = sorted(t * 1000 for t, _ in results)
    rate, p50, p99 = texts / seconds, statistics.median(ms), ms[int(len(ms) * 0.99) - 1]
    print(f"  {name:<22} {rate:>9.1f} {p50:>9.1f} {p99:>9.1f} {texts - failed:>7}")
    if failed:
        print(f"  INVALID: {failed} sends failed")
    return rate if not failed else 0.0, p50, p99


async def setup(http: aiohttp.ClientSession, base: str, recipients: list[str], database_url: str) -> tuple[str, dict[str, Any]]:
    signup, key = await signed_up(http, base, "Bench Texts", "texts-bench@example.com", database_url)
    auth = {"Authorization": f"Bearer {key}"}
    async with http.post(f"{base}/api/v1/agents", headers=auth, json={
            "business_id": signup["business_id"], "name": "Bench", "system_prompt": "Answer."}) as r:
        agent = await r.json()
    async with http.get(f"{base}/api/v1/phone-numbers/available", headers=auth, params={"country": "US"}) as r:
        number = (await r.json())["numbers"][0]["phone_number"]
    async with http.post(f"{base}/api/v1/phone-numbers", headers=auth, json={
            "phone_number": number, "agent_id": agent["id"]}) as r:
        assert r.status == 201, await r.text()
    for phone in recipients:
        async with http.post(f"{base}/api/v1/sms/consent", headers=auth,
                             json={"phone": phone, "state": "opted_in"}) as r:
            assert r.status == 201, await r.text()
    return agent["id"], auth | {"from": number}


async def run(args: argparse.Namespace, stack: Stack) -> int:
    env = stack.env()
    sim, sid, token = env["SMS_API_URL"], env["SMS_ACCOUNT_SID"], env["SMS_AUTH_TOKEN"]
    recipients = open_recipients(args.recipients)
    body = "Your quote is ready: https://acme.example.com/quotes/42. Reply STOP to opt out."
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        agent_id, auth = await setup(http, stack.base_url, recipients, stack.database_url)
        sender = auth.pop("from")
        basic = {"Authorization": aiohttp.encode_basic_auth(sid, token)}

        async def bare(n: int) -> bool:
            async with http.post(f"{sim}/2010-04-01/Accounts/{sid}/Messages.json", headers=basic, data={"To": recipients[n % len(recipients)], "From": sender, "Body": body}) as r:
                await r.read()
                return r.status == 201

        async def stack_send(n: int) -> bool:
            async with http.post(f"{stack.base_url}/api/v1/sms/send", headers=auth, json={
                    "to": recipients[n % len(recipients)], "from_agent_id": agent_id, "message": body}) as r:
                await r.read()
                return r.status == 200

        print(f"{args.texts} texts to {len(recipients)} recipients, {args.concurrency} at a time; sends/s, "
              "latency per send in ms")
        print(f"  {'path':<22} {'sends/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'sent':>7}")
        baseline = (await measure("bare provider POST", args.texts, args.concurrency, bare))[0]
        cpu = CpuMeter(stack)
        cpu_before = cpu.read()
        rate, p50, p99 = await measure("stack (all checks)", args.texts, args.concurrency, stack_send)
        await asyncio.sleep(SETTLE_SECONDS)  # the status callbacks and the consumers of the texts' events
        print(cpu.per_unit(cpu_before, cpu.read(), args.texts, "send")
              + f" (the sends, then {SETTLE_SECONDS:g} s for their callbacks and consumers)")
    path = f"POST /api/v1/sms/send, every check on, {args.concurrency} at a time"
    goal = f">= {RATE_GOAL} sends/s, p99 < {P99_GOAL_MS} ms"
    valid = bool(baseline and rate)
    report("bench.messaging", path, rate if valid else None, "sends/s", baseline or None,
           rate / baseline if valid else None, goal, judged(rate >= RATE_GOAL and p99 < P99_GOAL_MS, valid),
           p50_ms=p50, p99_ms=p99)
    if not valid:
        return 1
    print(f"ratio to the bare provider POST: {rate / baseline:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.messaging", description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=500, help="texts per path (default 500)")
    parser.add_argument("--concurrency", type=int, default=20, help="sends in flight at once (default 20)")
    parser.add_argument("--recipients", type=int, default=50, help="distinct recipients (default 50)")
    args = parser.parse_args()
    return with_stack("messaging", lambda stack: run(args, stack))


if __name__ == "__main__":
    sys.exit(main())
