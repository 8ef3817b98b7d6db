"""Subscription plans and the checkout prices that stand for them.

Signup takes `plan_id` as a plan name or as one of the checkout price ids the deployment
offers (CHECKOUT_PRICES, "plan=price_id" pairs), so a pricing page can pass the price it shows.
"""
from __future__ import annotations

from dataclasses import dataclass

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
# 403 forbidden. Each is billed on the account's subscription (services.accounts.billing.workspace_billing).
WORKSPACE_LIMITS = {"starter": 3, "growth": 10, "scale": 25}


@dataclass(frozen=True)
class DailyLimits:
    """What a workspace on a plan may spend in one UTC day (00:00 to 00:00 UTC), across all its keys, sessions,
    runs and the pipeline (services.messaging.spend counts it in the database). Inbound calls are answered whatever
    the count (the business's own callers), but their minutes count."""

    calls: int  # outbound calls placed
    call_minutes: int  # minutes of calls ended today, inbound and outbound (a call's minutes count once it ends)
    texts: int  # texts sent
    emails: int  # emails queued by the API (counted over any 24 hours by the email queue; EMAIL_DAILY_QUOTA caps it)


DAILY_LIMITS = {
    "starter": DailyLimits(calls=200, call_minutes=600, texts=500, emails=200),
    "growth": DailyLimits(calls=1000, call_minutes=3000, texts=2500, emails=1000),
    "scale": DailyLimits(calls=5000, call_minutes=15000, texts=10000, emails=5000),
}
# What each limit is called in a refusal and on the balance route.
LIMIT_NAMES = {"calls": "calls_per_day", "call_minutes": "call_minutes_per_day", "texts": "texts_per_day",
               "emails": "emails_per_day"}


def daily_limits(plan_id: str) -> DailyLimits:
    """The plan's daily limits; a plan not known (not told, or the accounts service did not answer) has the default
    plan's, the smallest."""
    return DAILY_LIMITS.get(plan_id, DAILY_LIMITS[DEFAULT_PLAN])
