"""The soak's workspace lifecycle: at `profile.pauses_per_minute` a tenant's workspace is paused and resumed
`PAUSE_SECONDS` later (the resume is sent even after the load's end: no tenant is left paused); while it is paused
the other actors' spending requests for it are refused (403, expected: core.standing) and its run's touches wait.
At 80% of the load `profile.teardowns` tenants are torn down (cancel, then teardown): named in history.torn_down
first, so the other actors stop picking them, then after `DRAIN_SECONDS` for their requests in flight. A tenant
that owns the communication run is never torn down (its touches would wait for ever), nor one that is paused."""
from __future__ import annotations

import asyncio
import time

from bench.soak.actors.answers import expected
from bench.soak.actors.tenants import live_tenants
from bench.soak.history import Tenant
from bench.soak.load import LoadContext

WORKSPACES = "/api/v1/workspaces"
PAUSE_SECONDS = 20.0
TEARDOWN_AT = 0.8  # of the load
DRAIN_SECONDS = 5.0


async def workspaces(ctx: LoadContext) -> None:
    paused: set[str] = set()  # business ids paused now: never torn down meanwhile
    await asyncio.gather(_pauses(ctx, paused), _teardowns(ctx, paused))


async def _pauses(ctx: LoadContext, paused: set[str]) -> None:
    while await ctx.every(ctx.profile.pauses_per_minute):
        tenants = live_tenants(ctx)
        if not tenants:
            continue
        tenant = ctx.rng.choice(tenants)
        paused.add(tenant.business_id)
        start, resumed = time.monotonic(), False
        try:
            if await _act(ctx, tenant, "pause", "paused"):
                await asyncio.sleep(PAUSE_SECONDS)
                resumed = await _act(ctx, tenant, "resume", "active")
        finally:
            paused.discard(tenant.business_id)
            ctx.history.held[tenant.business_id].append((start, time.monotonic() if resumed else float("inf")))


async def _teardowns(ctx: LoadContext, paused: set[str]) -> None:
    await asyncio.sleep(max(0.0, ctx.ends_at - ctx.profile.seconds * (1 - TEARDOWN_AT) - time.monotonic()))
    if not ctx.running():
        return
    owners = set(ctx.history.runs.values())
    candidates = [t for t in live_tenants(ctx) if t.business_id not in owners | paused]
    chosen = ctx.rng.sample(candidates, min(ctx.profile.teardowns, len(candidates)))
    if len(chosen) < ctx.profile.teardowns:
        ctx.history.notes.append(f"teardowns: {len(chosen)} of {ctx.profile.teardowns}: only {len(candidates)} "
                                 f"tenants neither own the run nor are paused")
    ctx.history.torn_down.update(t.business_id for t in chosen)
    await asyncio.sleep(DRAIN_SECONDS)
    for tenant in chosen:
        ctx.history.held[tenant.business_id].append((time.monotonic(), float("inf")))
        if await _act(ctx, tenant, "cancel", "canceled"):
            await _act(ctx, tenant, "teardown", "inactive")


async def _act(ctx: LoadContext, tenant: Tenant, action: str, state: str) -> bool:
    """PATCH the tenant's workspace with `action`; whether it is in `state` after (a repeat is a no-op)."""
    status, workspace = await ctx.client.request("PATCH", WORKSPACES, tenant=tenant,
                                                 json={"id": tenant.business_id, "action": action})
    if not expected(ctx, f"workspace {tenant.business_id}: {action}", status, workspace, (200,)):
        return False
    if workspace.get("lifecycle_state") != state:
        ctx.history.notes.append(f"workspace {tenant.business_id}: {action} left it {workspace}")
        return False
    return True
