"""The soak's tenants: businesses signed up through the public API as their owners would, half paying at the
payment simulator's hosted checkout (its page, as a browser) and half by x402 (a payment signed by a fresh
wallet), each signed in with its magic link to make a key with every scope, then given time to be provisioned
(an intake agent on a pool number: inline for x402, after the checkout's events for a card).

`setup` makes `profile.tenants` before the load; the `signups` actor makes more during it. A signup the platform
accepted counts in `history.signups` (the business exists); it joins `history.tenants` once it has its key,
agent and number. Signup is limited per client address, so each request comes from an address of its own in
X-Forwarded-For: the soak's stack must trust it from 127.0.0.1 (TRUSTED_PROXIES, as bench.signup's SIGNUP_ENV).
"""
from __future__ import annotations

import asyncio
import base64
import itertools
import json
from typing import Any

import aiohttp
import asyncpg
from yarl import URL

from bench.soak.actors.pacing import noted, paced
from bench.soak.client import SoakClient
from bench.soak.history import Tenant
from bench.soak.load import LoadContext
from providers.x402 import payer
from tests.api import next_client_ip
from tests.billing import Payments
from tests.waiting import wait_until

CHECKOUT, X402 = "checkout", "x402"
PROVISIONING_SECONDS = 180.0  # past the client's own retries and the provisioning saga's after a fault


def live_tenants(ctx: LoadContext) -> list[Tenant]:
    """The tenants set up with an agent and a number and not torn down, in a stable order (for the seeded rng)."""
    return [t for bid, t in sorted(ctx.history.tenants.items())
            if t.agent_id and t.number and bid not in ctx.history.torn_down]


def pick_tenant(ctx: LoadContext) -> Tenant | None:
    tenants = live_tenants(ctx)
    return ctx.rng.choice(tenants) if tenants else None


def refused_by_standing(status: int, body: Any) -> bool:
    """A 403 for a workspace held (paused, torn down) by another actor: expected while it lasts (core.standing)."""
    return status == 403 and isinstance(body, dict) and "not allowed while" in str(body.get("error", {}))


async def setup(ctx: LoadContext) -> None:
    """`profile.tenants` businesses, half by the checkout and half by x402, signed up at once."""
    payments = [CHECKOUT if n % 2 == 0 else X402 for n in range(ctx.profile.tenants)]
    await asyncio.gather(*(noted(ctx, f"setup: a {payment} signup", sign_up(ctx, payment)) for payment in payments))
    if len(live_tenants(ctx)) < ctx.profile.tenants:
        ctx.history.notes.append(f"setup: {len(live_tenants(ctx))} of {ctx.profile.tenants} tenants set up")


async def signups(ctx: LoadContext) -> None:
    """More businesses during the load at `profile.signups_per_minute`, paying by checkout and x402 in turn; each
    is set up in a task of its own so a slow provisioning does not hold back the next."""
    payments = itertools.cycle((CHECKOUT, X402))
    await paced(ctx, ctx.profile.signups_per_minute, "signups", lambda: sign_up(ctx, next(payments)))


async def sign_up(ctx: LoadContext, payment: str) -> None:
    """One business from signup to a key, an agent and a number; recorded in the history as it goes."""
    n = ctx.rng.getrandbits(48)
    fields = {"business_name": f"Soak {payment} {n:x}", "email": f"soak-{payment}-{n:x}@example.com"}
    signup = await (_by_checkout(ctx, fields) if payment == CHECKOUT else _by_x402(ctx, fields))
    if signup is None:
        return
    ctx.history.signups[payment] += 1
    if payment == CHECKOUT and not await _checked_out(ctx, signup):
        return
    business_id = signup["business_id"]
    tenant = Tenant(business_id, await _account_of(ctx, business_id), await _full_key(ctx, signup),
                    signup.get("agent_id"), signup.get("phone_number"))
    if not (tenant.agent_id and tenant.number):
        provisioning = await _provisioned(ctx, tenant)
        tenant.agent_id, tenant.number = provisioning["agent_id"], provisioning["phone_number"]
    ctx.history.tenants[business_id] = tenant


async def _signup(ctx: LoadContext, fields: dict[str, str], headers: dict[str, str] | None = None
                  ) -> tuple[int, Any]:
    return await ctx.client.request("POST", "/api/v1/signup", json=fields,
                                    headers={"X-Forwarded-For": next_client_ip(), **(headers or {})})


async def _by_checkout(ctx: LoadContext, fields: dict[str, str]) -> dict[str, Any] | None:
    """A card signup (its checkout follows, `_checked_out`)."""
    status, signup = await _signup(ctx, fields)
    if status != 200:
        ctx.history.notes.append(f"signups: the checkout signup of {fields['email']} answered {status}: {signup}")
        return None
    return dict(signup)


async def _checked_out(ctx: LoadContext, signup: dict[str, Any]) -> bool:
    """The signup's checkout page filled in with the simulator's good test card, as its owner would."""
    async with aiohttp.ClientSession() as browser:
        status, back_to = await Payments(browser, ctx.stack.env()["PAYMENTS_API_URL"]).check_out(
            signup["checkout_url"])
    if status != 303:
        ctx.history.notes.append(f"signups: the checkout of {signup['business_id']} answered {status}: {back_to}")
    return status == 303


async def _by_x402(ctx: LoadContext, fields: dict[str, str]) -> dict[str, Any] | None:
    """Ask for the terms (402, which the error body carries as the PAYMENT-REQUIRED header does), sign a payment
    from a fresh wallet, and sign up again with it."""
    status, asked = await _signup(ctx, {**fields, "payment_capture": "x402"})
    if status != 402:
        ctx.history.notes.append(f"signups: the x402 signup of {fields['email']} without a payment answered "
                                 f"{status}: {asked}")
        return None
    required = base64.b64encode(json.dumps(asked["error"]["payment_required"]).encode()).decode()
    paid = payer.pay(payer.new_private_key(), required)
    status, signup = await _signup(ctx, fields, {"PAYMENT-SIGNATURE": paid})
    if status != 200:  # a 402 here after a retry: the first attempt may have been taken (the note says so)
        ctx.history.notes.append(f"signups: the paid x402 signup of {fields['email']} answered {status}: {signup}")
        return None
    return dict(signup)


async def _full_key(ctx: LoadContext, signup: dict[str, Any]) -> str:
    """A key with every scope, made in the dashboard session the magic link opens (a cookie jar of its own; its
    requests go through the soak's balancer and are recorded like the rest, under no key)."""
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
        dashboard = SoakClient(browser, ctx.client.balancer, ctx.history)
        status, answer = await dashboard.request("POST", URL(signup["dashboard_magic_link"]).path_qs)
        if status != 303:
            raise RuntimeError(f"the magic link of {signup['business_id']} answered {status}: {answer}")
        status, created = await dashboard.request("POST", "/api/v1/keys", json={"scopes": ["*"]})
        if status != 201:
            raise RuntimeError(f"the key of {signup['business_id']} answered {status}: {created}")
        return str(created["key"])


async def _account_of(ctx: LoadContext, business_id: str) -> str:
    """The business's account (the API names accounts only to a key's own GET /capabilities, which would count as
    usage before the tenant is known), read from the store, again while PostgreSQL restarts."""
    async def read() -> str | None:
        try:
            conn = await asyncpg.connect(ctx.stack.database_url)
            try:
                return str(await conn.fetchval("SELECT account_id FROM accounts.businesses WHERE id = $1::uuid",
                                               business_id))
            finally:
                await conn.close()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            return None
    return str(await wait_until(read, f"the account of {business_id}", timeout=60, interval=1))


async def _provisioned(ctx: LoadContext, tenant: Tenant) -> dict[str, Any]:
    """The workspace's provisioning once done (the intake agent and its number)."""
    async def provisioning() -> Any:
        status, page = await ctx.client.request("GET", "/api/v1/workspaces", tenant=tenant,
                                                params={"id": tenant.business_id})
        return page["workspaces"][0]["provisioning"] if status == 200 else None
    return dict(await wait_until(provisioning, f"the provisioning of {tenant.business_id}",
                                 lambda p: bool(p) and p["status"] == "done", timeout=PROVISIONING_SECONDS,
                                 interval=1))

