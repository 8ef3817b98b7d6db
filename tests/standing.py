"""A signup in good standing for tests and benchmarks that spend (calls, texts, numbers, email).

A card-checkout signup is `unpaid` until its checkout completes, and may not spend (core.standing). Completing a
checkout for real (tests/e2e/test_signup_payments.py does) also runs the provisioning saga, which gives the
business an intake agent and a pool number that most tests do not expect, so these set the subscription to
`trialing`, what the completed checkout sets, directly in the accounts schema.
"""
import asyncpg


async def start_trial(database_url: str, *business_ids: str) -> None:
    await set_subscription(database_url, "trialing", *business_ids)


async def set_subscription(database_url: str, status: str, *business_ids: str) -> None:
    """Set the subscription status (`incomplete`: a signup never paid) of businesses, as the provider's events would."""
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute("UPDATE accounts.businesses SET subscription_status = $1 WHERE id = ANY($2::uuid[])",
                           status, list(business_ids))
    finally:
        await conn.close()
