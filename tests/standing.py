"""A signup in good standing for tests and benchmarks that spend (calls, texts, numbers, email).

A card-checkout signup is `unpaid` until its checkout completes, and may not spend (core.standing). Completing a
checkout for real (tests/e2e/test_signup_payments.py does) also runs the provisioning saga, which gives the
business an intake agent and a pool number that most tests do not expect, so these set the subscription to
`trialing`, what the completed checkout sets, directly in the accounts schema. Given the payment provider
(`PaymentsAccess`: the simulator's URL and key), the trial is also real there: a customer and a subscription made
through the provider's API (Stripe's `POST /v1/customers` and `POST /v1/subscriptions`, no checkout, so nothing is
provisioned), on which the account's further workspaces are billed. Its trial is a year long, so no trial notice or
renewal of it happens while tests run.
"""
from dataclasses import dataclass

import aiohttp
import asyncpg

from core.plans import LOCAL_CHECKOUT_PRICES, parse_checkout_prices

FIXTURE_TRIAL_DAYS = 365


@dataclass(frozen=True)
class PaymentsAccess:
    url: str
    key: str

    @classmethod
    def of(cls, env: dict[str, str]) -> "PaymentsAccess | None":
        """From the stack's payments_env (None when it runs against another provider)."""
        return cls(env["PAYMENTS_API_URL"], env["PAYMENTS_API_KEY"]) if env.get("PAYMENTS_API_URL") else None


async def start_trial(database_url: str, *business_ids: str, payments: PaymentsAccess | None = None,
                      plan: str | None = None) -> None:
    """The businesses in their trial (on `plan`, else the plan each signed up for; at the provider too when
    `payments` is given)."""
    if payments is None:
        await set_subscription(database_url, "trialing", *business_ids)
        return
    conn = await asyncpg.connect(database_url)
    try:
        for business_id in business_ids:
            chosen = plan or await conn.fetchval("SELECT plan_id FROM accounts.businesses WHERE id = $1::uuid",
                                                 business_id)
            customer, subscription = await _subscribe(payments, business_id, chosen)
            await conn.execute("UPDATE accounts.businesses SET subscription_status = 'trialing', customer_id = $2, "
                               "subscription_id = $3, plan_id = $4 WHERE id = $1::uuid", business_id, customer,
                               subscription, chosen)
    finally:
        await conn.close()


async def _subscribe(payments: PaymentsAccess, business_id: str, plan: str) -> tuple[str, str]:
    """A customer and a trialing subscription of one unit of the plan's price, for the business."""
    price = next(p for p, offered in parse_checkout_prices(LOCAL_CHECKOUT_PRICES).items() if offered == plan)
    headers = {"Authorization": f"Bearer {payments.key}"}
    async with aiohttp.ClientSession(headers=headers) as http:
        async with http.post(f"{payments.url}/v1/customers", data={"payment_method": "pm_card_visa"}) as r:
            customer = await r.json()
            assert r.status == 200, customer
        async with http.post(f"{payments.url}/v1/subscriptions", data={
                "customer": customer["id"], "items[0][price]": price, "items[0][quantity]": "1",
                "trial_period_days": str(FIXTURE_TRIAL_DAYS), "metadata[business_id]": business_id}) as r:
            subscription = await r.json()
            assert r.status == 200, subscription
    return customer["id"], subscription["id"]


async def set_subscription(database_url: str, status: str, *business_ids: str) -> None:
    """Set the subscription status (`incomplete`: a signup never paid) of businesses, as the provider's events would."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("UPDATE accounts.businesses SET subscription_status = $1 WHERE id = ANY($2::uuid[])",
                           status, list(business_ids))
    finally:
        await conn.close()
