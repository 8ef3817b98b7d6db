"""One soak on a started stack: the tenants set up, then the load and the fault plan together for the profile's
seconds, a quiet period for retries and deliveries to finish, and the ledger."""
from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import aiohttp

from bench.signup import SIGNUP_ENV
from bench.soak import faults, ledger
from bench.soak.actors import tenants
from bench.soak.client import SoakClient
from bench.soak.history import History
from bench.soak.load import LoadContext, run_load
from bench.soak.partner import Partner
from bench.soak.profile import SoakProfile
from deploy.local.ingress import Balancer
from deploy.local.stack import SMS_SIMULATOR, VOICE_SIMULATOR

if TYPE_CHECKING:
    from deploy.local.stack import Stack

# The soak's stack settings beyond the benches': signups from many addresses (the load says which in
# X-Forwarded-For), webhook retries a hundred times sooner (a partner outage's retries end within the quiet period),
# simulated calls five times faster.
SOAK_ENV = {**SIGNUP_ENV, "WEBHOOK_RETRY_SCALE": "0.01", "VOICE_SIM_TIME_SCALE": "0.2"}


async def soaked(stack: Stack, profile: SoakProfile) -> tuple[History, list[ledger.Line]]:
    """What the load did and the ledger read after the quiet period."""
    history = History()
    partner = await Partner(profile.seed).start()
    plan = faults.schedule(profile, [p.name for p in stack.processes])
    print(faults.describe(plan, profile.seed), flush=True)
    stop_polling = asyncio.Event()
    try:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            balancer = Balancer(stack.gateway_urls)
            polling = asyncio.create_task(balancer.poll(http, stop_polling))
            try:
                ctx = LoadContext(SoakClient(http, balancer, history), stack, history, profile, partner,
                                  random.Random(profile.seed), ends_at=float("inf"))
                await tenants.setup(ctx)
                started = time.monotonic()
                ctx.ends_at = started + profile.seconds
                print(f"load: {len(history.tenants)} tenants set up; {profile.seconds:g} s of load and faults",
                      flush=True)
                await asyncio.gather(run_load(ctx), faults.run_faults(
                    plan, stack, partner, history, simulator_url(stack, VOICE_SIMULATOR),
                    simulator_url(stack, SMS_SIMULATOR), started, until=ctx.ends_at))
                print(f"quiet: {profile.quiet_seconds:g} s for retries and deliveries to finish", flush=True)
                await asyncio.sleep(profile.quiet_seconds)
                lines = await ledger.ledger(stack, history, partner)
                await unsubscribed(ctx)
                return history, lines
            finally:
                stop_polling.set()
                await polling
    finally:
        await partner.stop()


async def soak(stack: Stack, profile: SoakProfile, results: Path | None) -> int:
    """`make soak`: the soak, its load and ledger printed, and written as JSON to `results`; 0 when every ledger
    line is exact."""
    history, lines = await soaked(stack, profile)
    print(offered(history))
    print(ledger.render(lines))
    if results is not None:
        results.write_text(json.dumps({"seed": profile.seed, "seconds": profile.seconds, "offered": counts(history),
                                       "faults": Counter(w.kind for w in history.windows),
                                       "windows": [{"kind": w.kind, "target": w.target,
                                                    "from": round(w.start - history.started, 1),
                                                    "to": round(w.end - history.started, 1)}
                                                   for w in history.windows],
                                       "notes": history.notes, "ledger": ledger.as_json(lines)},
                                      indent=2, default=str))
        print(f"written to {results}")
    return 0 if all(line.exact for line in lines) else 1


async def unsubscribed(ctx: LoadContext) -> None:
    """Remove the load's webhook subscriptions: the partner stops with the soak, and deliveries retried to it would
    go on loading a stack the soak shares (make test's scaled one)."""
    for hook, business in ctx.history.webhooks.items():
        tenant = ctx.history.tenants.get(business)
        if tenant is not None and business not in ctx.history.torn_down:
            await ctx.client.request("DELETE", "/api/v1/webhooks", tenant=tenant,
                                     params={"business_id": business, "id": hook})


def simulator_url(stack: Stack, name: str) -> str:
    return f"http://127.0.0.1:{stack.process(name).port}"


def counts(history: History) -> dict[str, int]:
    """The load offered, by what it was."""
    return {"requests": len(history.attempts), "answered": history.answered(), "retried": len(history.retried),
            "tenants": len(history.tenants), **{f"signups_{k}": v for k, v in history.signups.items()},
            "calls": len(history.calls), "inbound_calls": len(history.inbound), "texts": len(history.texts),
            "stops": len(history.stops), "runs": len(history.runs), "evals": len(history.evals),
            "webhook_subscriptions": len(history.webhooks), "teardowns": len(history.torn_down)}


def offered(history: History) -> str:
    lines = ["load offered: " + ", ".join(f"{k} {v}" for k, v in counts(history).items()),
             "faults injected: " + ", ".join(f"{k} {v}" for k, v in Counter(w.kind for w in history.windows).items())]
    lines += [f"  note: {note}" for note in history.notes[:30]]
    return "\n".join(lines)
