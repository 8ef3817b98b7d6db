"""The soak's communication run: one run, created near the start with an Idempotency-Key, of
`profile.run_touches` calls and texts to fresh opted-in callees, planned at random instants over the rest of the
load (the last at 90% of it, so the quiet period sees every one through); paused for a while halfway and resumed,
its touches due meanwhile waiting for the resume. history.runs names it; the ledger counts its touches."""
from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.soak.actors.answers import expected
from bench.soak.actors.callees import open_callees, opt_in
from bench.soak.actors.pacing import fresh_key
from bench.soak.actors.tenants import live_tenants, refused_by_standing
from bench.soak.history import Tenant
from bench.soak.load import LoadContext

RUNS = "/api/v1/communication-runs"
FIRST_SUFFIX = 5000  # the run's callees' last four digits: 5000 up
TEXT_SHARE = 0.3  # of the touches; the others are calls
FIRST_TOUCH_SECONDS = 5.0  # after the run is created
LAST_TOUCH_SHARE = 0.9  # of the load left when the run is created
OPT_INS_AT_ONCE = 4
PAUSE_SECONDS = 15.0
WAIT_FOR_SENDER_SECONDS = 60.0
HELD_RETRY_SECONDS = 5.0


async def communication_run(ctx: LoadContext) -> None:
    tenant = await _sender(ctx)
    if tenant is None:
        ctx.history.notes.append("communication run: no tenant with an agent and a number to run it")
        return
    phones = open_callees(ctx, ctx.profile.run_touches, FIRST_SUFFIX)
    gate = asyncio.Semaphore(OPT_INS_AT_ONCE)

    async def opted_in(phone: str) -> bool:
        async with gate:
            return await opt_in(ctx, tenant, phone)

    consented = [p for p, ok in zip(phones, await asyncio.gather(*(opted_in(p) for p in phones)), strict=True) if ok]
    run_id = await _create(ctx, tenant, _body(ctx, tenant, consented))
    if run_id is None:
        return
    ctx.history.runs[run_id] = tenant.business_id
    halfway = (ctx.ends_at - time.monotonic()) / 2
    await asyncio.sleep(max(0.0, halfway))
    if await _move(ctx, tenant, run_id, "pause", ("paused",)):
        await asyncio.sleep(PAUSE_SECONDS)
        await _move(ctx, tenant, run_id, "resume", ("scheduled", "running"))


async def _sender(ctx: LoadContext) -> Tenant | None:
    deadline = time.monotonic() + WAIT_FOR_SENDER_SECONDS
    while not (found := live_tenants(ctx)) and time.monotonic() < deadline and ctx.running():
        await asyncio.sleep(1.0)
    return ctx.rng.choice(found) if found else None


def _body(ctx: LoadContext, tenant: Tenant, phones: list[str]) -> dict[str, Any]:
    now, span = datetime.now(UTC), max(0.0, ctx.ends_at - time.monotonic()) * LAST_TOUCH_SHARE
    offsets = sorted(ctx.rng.uniform(FIRST_TOUCH_SECONDS, max(FIRST_TOUCH_SECONDS, span)) for _ in phones)
    touches = []
    for n, (phone, offset) in enumerate(zip(phones, offsets, strict=True)):
        at = (now + timedelta(seconds=offset)).isoformat().replace("+00:00", "Z")
        touch: dict[str, Any] = {"touch_id": f"touch-{n}", "target": {"phone": phone}, "scheduled_at": at}
        if ctx.rng.random() < TEXT_SHARE:
            touch |= {"channel": "sms", "context": {"body": f"Soak text {n}: your quote is ready."}}
        else:
            touch["channel"] = "call"
        touches.append(touch)
    return {"business_id": tenant.business_id, "agent_id": tenant.agent_id,
            "external_ref": f"soak-run-{ctx.profile.seed}-{fresh_key(ctx)[:13]}",
            "touches": touches}


async def _create(ctx: LoadContext, tenant: Tenant, body: dict[str, Any]) -> str | None:
    """The run's id; sent again with the same key while the tenant's workspace is held (paused for a while)."""
    key = fresh_key(ctx)
    while True:
        status, run = await ctx.client.request("POST", RUNS, tenant=tenant, json=body, idempotency_key=key)
        if status == 201:
            return str(run["id"])
        expected(ctx, f"communication run of {len(body['touches'])} touches", status, run, (201,))
        if not (refused_by_standing(status, run) and ctx.running()):
            return None
        await asyncio.sleep(HELD_RETRY_SECONDS)


async def _move(ctx: LoadContext, tenant: Tenant, run_id: str, action: str, after: tuple[str, ...]) -> bool:
    """PATCH the run with `action`. A 409 saying the run already is in a state `after` it is the answer to a retry
    of a move that was made."""
    status, reply = await ctx.client.request("PATCH", RUNS, tenant=tenant, json={"id": run_id, "action": action})
    if status == 409 and any(f"the run is {state};" in str(reply) for state in after):
        return True
    return expected(ctx, f"communication run {run_id}: {action}", status, reply, (200,))
