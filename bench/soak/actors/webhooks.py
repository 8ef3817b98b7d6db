"""The soak's webhook subscriptions: every tenant, those the signup actor adds during the load too, subscribes the
partner's receiver (a path of its own, whose signing secret the partner is given) to every event type offered (POST /api/v1/webhooks is keyed by the URL: a retry updates the
same subscription), so the ledger can check that every event the outbox committed arrived; now and then a
`webhook.test` event is sent (delivered at once, without retries: the ledger leaves it out)."""
from __future__ import annotations

import asyncio
import time

from bench.soak.actors.answers import expected
from bench.soak.actors.pacing import paced
from bench.soak.actors.tenants import live_tenants
from bench.soak.history import Tenant
from bench.soak.load import LoadContext

WEBHOOKS = "/api/v1/webhooks"
POLL_SECONDS = 2.0  # for tenants set up since
TESTS_PER_MINUTE = 1.0


async def subscriptions(ctx: LoadContext) -> None:
    await asyncio.gather(_subscribe_every_tenant(ctx), _test_events(ctx))


async def _subscribe_every_tenant(ctx: LoadContext) -> None:
    subscribed: set[str] = set()
    while ctx.running():
        for tenant in live_tenants(ctx):
            if tenant.business_id not in subscribed and await _subscribe(ctx, tenant):
                subscribed.add(tenant.business_id)
        await asyncio.sleep(min(POLL_SECONDS, max(0.0, ctx.ends_at - time.monotonic())))


async def _subscribe(ctx: LoadContext, tenant: Tenant) -> bool:
    business = tenant.business_id
    status, listing = await ctx.client.request("GET", WEBHOOKS, tenant=tenant, params={"business_id": business})
    if not expected(ctx, f"webhooks of {business}", status, listing, (200,)):
        return False
    status, made = await ctx.client.request("POST", WEBHOOKS, tenant=tenant, json={
        "business_id": business, "webhook_url": ctx.partner.url_for(business), "events": listing["events"],
        "description": "soak partner"})
    if not expected(ctx, f"webhook subscription of {business}", status, made):
        return False
    ctx.partner.secret(business, made["webhook_secret"])
    ctx.history.webhooks[made["webhook"]["id"]] = business
    return True


async def _test_events(ctx: LoadContext) -> None:
    await paced(ctx, TESTS_PER_MINUTE, "webhook.test", lambda: _test_event(ctx))


async def _test_event(ctx: LoadContext) -> None:
    subscribed = set(ctx.history.webhooks.values())
    tenants = [t for t in live_tenants(ctx) if t.business_id in subscribed]
    if tenants:
        tenant = ctx.rng.choice(tenants)
        status, sent = await ctx.client.request("POST", f"{WEBHOOKS}/test", tenant=tenant,
                                                json={"business_id": tenant.business_id})
        expected(ctx, f"webhook.test of {tenant.business_id}", status, sent, (200,))
