"""Subscription plans and the checkout prices that stand for them.

Signup takes `plan_id` as a plan name or as one of the checkout price ids the deployment
offers (CHECKOUT_PRICES, "plan=price_id" pairs), so a pricing page can pass the price it shows.
"""
from __future__ import annotations

PLANS = ("starter", "growth", "scale")
DEFAULT_PLAN = "starter"
# The local stack's stand-in price ids; a deployment sets its payment provider's own.
LOCAL_CHECKOUT_PRICES = "starter=price_starter_monthly,growth=price_growth_monthly,scale=price_scale_monthly"


def parse_checkout_prices(text: str) -> dict[str, str]:
    """`plan=price_id,...` as {price_id: plan}; a pair naming an unknown plan stops the process at start."""
    prices: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        plan, _, price = (s.strip() for s in pair.partition("="))
        if plan not in PLANS or not price:
            raise SystemExit(f"CHECKOUT_PRICES: {pair!r} must be <plan>=<price id> with a plan of {', '.join(PLANS)}")
        prices[price] = plan
    return prices


def plan_for(plan_id: str, prices: dict[str, str]) -> str | None:
    """The plan a plan name or an offered price id stands for (the default plan when empty), or None."""
    value = plan_id.strip() or DEFAULT_PLAN
    return value if value in PLANS else prices.get(value)

# Monthly price of each plan in US cents, per workspace: what an x402 payment pays for a workspace's period (in
# USDC, 6 decimals), and the card subscription's price for each unit (one unit per workspace).
MONTHLY_PRICE_CENTS = {"starter": 4900, "growth": 14900, "scale": 39900}
# How many workspaces (not torn down) an account may have on each plan, its signup's included: creating one more is
# 403 forbidden. Each is billed on the account's subscription (services.accounts.workspace_billing).
WORKSPACE_LIMITS = {"starter": 3, "growth": 10, "scale": 25}
