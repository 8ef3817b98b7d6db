"""The soak's reads: at `profile.reads_per_minute` a list of one service, with a live tenant's key (every read is
a usage row the ledger counts against what the gateways answered)."""
from __future__ import annotations

from bench.soak.actors.answers import expected
from bench.soak.actors.pacing import paced
from bench.soak.actors.tenants import pick_tenant
from bench.soak.load import LoadContext

# (path, query): {business} is the tenant's business id.
READS: tuple[tuple[str, dict[str, str]], ...] = (
    ("/api/v1/agents", {}),
    ("/api/v1/phone-numbers", {}),
    ("/api/v1/calls", {"limit": "20"}),
    ("/api/v1/transcripts", {}),
    ("/api/v1/leads", {"limit": "20"}),
    ("/api/v1/sms/messages", {"limit": "20"}),
    ("/api/v1/sms/conversations", {"limit": "20"}),
    ("/api/v1/workspaces", {}),
    ("/api/v1/balance", {}),
    ("/api/v1/usage", {"limit": "50"}),
    ("/api/v1/evals", {}),
    ("/api/v1/webhooks", {"business_id": "{business}"}),
    ("/api/v1/webhooks/deliveries", {}),
    ("/api/v1/events", {}),
    ("/api/v1/communication-runs", {}),
    ("/api/v1/communication-jobs", {"limit": "50"}),
    ("/api/v1/analytics/dashboard", {}),
    ("/api/sdr/pipeline", {"businessId": "{business}", "limit": "20"}),
)


async def reads(ctx: LoadContext) -> None:
    async def one() -> None:
        tenant = pick_tenant(ctx)
        if tenant is None:
            return
        path, query = ctx.rng.choice(READS)
        params = {name: value.format(business=tenant.business_id) for name, value in query.items()}
        status, body = await ctx.client.request("GET", path, tenant=tenant, params=params)
        expected(ctx, f"GET {path} of {tenant.business_id}", status, body, (200,))

    await paced(ctx, ctx.profile.reads_per_minute, "read", one)
