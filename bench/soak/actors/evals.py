"""The soak's eval runs: at `profile.evals_per_minute` a tenant's scenario (created once per tenant, mirrored to
the voice provider) is run without waiting (POST /api/v1/evals/run, wait false) and polled until it ends, or the
load does. history.evals names each run; the ledger checks every one ended."""
from __future__ import annotations

import asyncio
from typing import Any

from bench.soak.actors.answers import expected
from bench.soak.actors.pacing import paced
from bench.soak.actors.tenants import pick_tenant
from bench.soak.history import Tenant
from bench.soak.load import LoadContext

EVALS = "/api/v1/evals"
# Any answer passes: the soak checks that runs end, not what the agent says.
SCENARIO = [{"role": "user", "content": "Hi, are you open on Saturdays?"},
            {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?s).*"}}]
POLL_SECONDS = 5.0


async def eval_runs(ctx: LoadContext) -> None:
    scenarios: dict[str, asyncio.Task[str | None]] = {}  # business_id → its scenario's creation (its id)

    async def one() -> None:
        tenant = pick_tenant(ctx)
        if tenant is None:
            return
        made = scenarios.get(tenant.business_id)
        if made is None or (made.done() and made.result() is None):  # none yet, or its creation failed
            made = scenarios[tenant.business_id] = asyncio.create_task(_scenario(ctx, tenant))
        if (scenario := await made) is not None:
            await _run(ctx, tenant, scenario)

    await paced(ctx, ctx.profile.evals_per_minute, "eval run", one)


async def _scenario(ctx: LoadContext, tenant: Tenant) -> str | None:
    status, made = await ctx.client.request("POST", EVALS, tenant=tenant, json={
        "agent_id": tenant.agent_id, "business_id": tenant.business_id, "name": "soak.saturday",
        "description": "the soak's scenario", "messages": SCENARIO})
    return str(made["id"]) if expected(ctx, f"eval scenario of {tenant.business_id}", status, made, (201,)) else None


async def _run(ctx: LoadContext, tenant: Tenant, scenario: str) -> None:
    """Run the scenario, then poll the run (a poll refreshes an unfinished one from the provider) until it ends
    or the load does."""
    status, run = await ctx.client.request("POST", f"{EVALS}/run", tenant=tenant,
                                           json={"eval_id": scenario, "wait": False})
    if not expected(ctx, f"eval run of {scenario}", status, run, (200,)):
        return
    ctx.history.evals[run["run_id"]] = tenant.business_id
    found: dict[str, Any] = run
    while found.get("status") != "ended" and ctx.running():
        await asyncio.sleep(POLL_SECONDS)
        status, found = await ctx.client.request("GET", f"{EVALS}/run", tenant=tenant,
                                                 params={"run_id": run["run_id"]})
        if not expected(ctx, f"eval run {run['run_id']}", status, found, (200,)):
            return
