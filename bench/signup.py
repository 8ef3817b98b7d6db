"""Signups through the whole path, paid by card checkout and by x402, against a bare checkout-session POST to the
payment provider, in the same run.

- bare: POST /v1/checkout/sessions straight to the payments simulator (what a checkout signup must at least do);
- checkout signup: POST /api/v1/signup: rate-limit count, email check, the checkout session at the provider,
  then the account, business, key, magic link and waiting provisioning saga in one transaction;
- x402 signup: the 402 answer, a payment signed by the client (not timed), then the paid signup: verify and
  settle at the local facilitator, the account, and provisioning inline (an intake agent at the voice provider,
  a number from the pool imported there). Bounded by the pool (--x402, default 30).
Each runs --concurrency at a time; the report gives signups per second, p50/p99 in ms, and the checkout
signup's ratio to the bare POST. Every request must succeed, or the run is invalid.

Run: `make bench-signup` (`--signups`, `--x402`, `--concurrency`).
"""
from __future__ import annotations

import argparse
import sys
import uuid
from typing import Any

import aiohttp

from bench.harness import judged, report, with_stack
from bench.messaging import measure
from deploy.local.stack import Stack
from providers.x402 import payer

# Signups come from many addresses (the stack trusts X-Forwarded-For from 127.0.0.1), none limited.
SIGNUP_ENV = {"TRUSTED_PROXIES": "127.0.0.1", "SIGNUP_LIMIT_PER_HOUR": "100000000"}


async def run(args: argparse.Namespace, stack: Stack) -> int:
    env = stack.env()
    sim, sim_key = env["PAYMENTS_API_URL"], env["PAYMENTS_API_KEY"]
    signup_url = f"{stack.base_url}/api/v1/signup"
    async with aiohttp.ClientSession() as http:
        def who(n: int, kind: str) -> dict[str, Any]:
            return {"business_name": f"Bench {kind} {n}", "email": f"{kind}-{n}-{uuid.uuid4().hex[:6]}@example.com"}

        def address(n: int) -> dict[str, Any]:
            return {"X-Forwarded-For": f"198.18.{n // 250}.{n % 250 + 1}"}

        async def bare(n: int) -> bool:
            async with http.post(f"{sim}/v1/checkout/sessions", headers={"Authorization": f"Bearer {sim_key}"},
                                 data={"mode": "subscription", "line_items[0][price]": "price_starter_monthly",
                                       "line_items[0][quantity]": "1", "customer_email": f"b{n}@example.com",
                                       "success_url": "https://example.com/ok",
                                       "subscription_data[trial_period_days]": "7"}) as r:
                await r.read()
                return r.status == 200

        async def checkout(n: int) -> bool:
            async with http.post(signup_url, json=who(n, "card"), headers=address(n)) as r:
                body = await r.json()
                return r.status == 200 and bool(body.get("checkout_url"))

        payments: dict[int, tuple[dict[str, Any], str]] = {}
        for n in range(args.x402):  # the client's part, not timed: ask, then sign
            fields = who(n, "x402")
            async with http.post(signup_url, json={**fields, "payment_capture": "x402"},
                                 headers=address(100_000 + n)) as r:
                assert r.status == 402, await r.text()
                payments[n] = fields, payer.pay(payer.new_private_key(), r.headers["PAYMENT-REQUIRED"])

        async def x402(n: int) -> bool:
            fields, paid = payments[n]
            async with http.post(signup_url, json=fields,
                                 headers={**address(200_000 + n), "PAYMENT-SIGNATURE": paid}) as r:
                body = await r.json()
                return r.status == 200 and body.get("provisioning_deferred") is False

        print(f"{args.signups} checkout signups and {args.x402} x402 signups, {args.concurrency} at a time; "
              "signups/s, latency in ms")
        print(f"  {'path':<22} {'per s':>9} {'p50 ms':>9} {'p99 ms':>9} {'ok':>7}")
        baseline = (await measure("bare checkout POST", args.signups, args.concurrency, bare))[0]
        rate, p50, p99 = await measure("checkout signup", args.signups, args.concurrency, checkout)
        provisioned = (await measure("x402 signup, inline", args.x402, args.concurrency, x402))[0]
    valid = bool(baseline and rate and provisioned)
    report("bench.signup", f"POST /api/v1/signup by card checkout, {args.concurrency} at a time",
           rate if valid else None, "signups/s", baseline or None, rate / baseline if valid else None, "none stated",
           judged(None, valid), p50_ms=p50, p99_ms=p99)
    if not valid:
        return 1
    print(f"ratio of the checkout signup to the bare checkout POST: {rate / baseline:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.signup", description=__doc__.splitlines()[0])
    parser.add_argument("--signups", type=int, default=300, help="checkout signups (and bare POSTs; default 300)")
    parser.add_argument("--x402", type=int, default=30, help="x402 signups, each takes a pool number (default 30)")
    parser.add_argument("--concurrency", type=int, default=10, help="requests in flight at once (default 10)")
    args = parser.parse_args()
    return with_stack("signup", lambda stack: run(args, stack), env=SIGNUP_ENV)


if __name__ == "__main__":
    sys.exit(main())
