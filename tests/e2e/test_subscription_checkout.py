"""POST /api/v1/subscription/checkout end to end through the payments simulator: a signup whose checkout was never
paid opens a new one (the old link stops working, checkout.session.expired is acknowledged, paying the new one
starts the trial and provisions), a canceled subscription is replaced (no trial, the same Stripe customer, the
workspace resumed), a past-due one gets its open invoice's page (paid with another card, it is active again and
the workspace resumes), and one in force and paid is 409."""
import aiohttp

from tests.billing import FAILS_LATER_CARD, full_key, provisioned, release_numbers, signup, subscription
from tests.waiting import wait_until

CHECKOUT = "/api/v1/subscription/checkout"


async def reopen(api, key, business_id: str | None = None):
    return await api.request("POST", CHECKOUT, key=key, json={"business_id": business_id} if business_id else {})


async def page(url: str) -> tuple[int, str]:
    """The checkout page as a browser gets it: its status and text."""
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as r:
            return r.status, await r.text()


async def test_a_signup_never_paid_opens_a_new_checkout_and_the_old_link_stops(api, payments, stack):
    status, body, _ = await signup(api)
    bid, key = body["business_id"], await full_key(api, body)
    status, link, _ = await reopen(api, key)
    assert status == 201, link
    assert link["business_id"] == bid and link["checkout_url"] != body["checkout_url"] and link["expires_at"]
    assert (await page(body["checkout_url"]))[0] == 410  # the first link can no longer be paid

    async def acknowledged():
        return [e for e in await payments.events(client_reference_id=bid)
                if e["type"] == "checkout.session.expired" and e["status"] == "succeeded"]
    await wait_until(acknowledged, "our webhook to acknowledge checkout.session.expired", timeout=20)
    assert (await payments.check_out(link["checkout_url"]))[0] == 303
    ws = await provisioned(api, key, bid)
    assert (ws["subscription_status"], ws["standing"]) == ("trialing", "trialing")
    status, again, _ = await reopen(api, key, bid)
    assert status == 409 and again["error"]["code"] == "conflict" and "already trialing" in again["error"]["message"]
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_past_due_subscription_gets_its_open_invoice_and_paying_it_resumes_the_workspace(
        api, payments, stack):
    status, body, _ = await signup(api)
    bid, key = body["business_id"], await full_key(api, body)
    assert (await payments.check_out(body["checkout_url"], card=FAILS_LATER_CARD))[0] == 303
    ws = await provisioned(api, key, bid)
    sub_id = (await payments.events(client_reference_id=bid))[0]["event"]["data"]["object"]["subscription"]
    await payments.advance(sub_id, until="payment")  # the trial ends; its invoice's charge fails
    await subscription(api, key, bid, "past_due", "paused")

    status, link, _ = await reopen(api, key, bid)
    assert status == 201, link
    assert link["invoice_id"] and link["checkout_session_id"] is None and link["expires_at"] is None
    assert link["checkout_url"].endswith(f"/i/{link['invoice_id']}")
    status, text = await payments.check_out(link["checkout_url"])  # another card, that works
    assert status == 200 and "paid" in text, text
    ws = await subscription(api, key, bid, "active", "active")
    assert ws["standing"] == "active"
    assert (await page(link["checkout_url"]))[0] == 200  # now it says: already paid
    status, again, _ = await reopen(api, key, bid)
    assert status == 409 and "already active" in again["error"]["message"], again
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_canceled_subscription_is_replaced_by_a_new_one(api, payments, stack):
    status, body, _ = await signup(api)
    bid, key = body["business_id"], await full_key(api, body)
    assert (await payments.check_out(body["checkout_url"]))[0] == 303
    ws = await provisioned(api, key, bid)
    [completed] = [e for e in await payments.events(client_reference_id=bid)
                   if e["type"] == "checkout.session.completed"]
    first = completed["event"]["data"]["object"]
    async with aiohttp.ClientSession() as session:
        async with session.delete(f"{payments.url}/v1/subscriptions/{first['subscription']}",
                                  headers={"Authorization": f"Bearer {stack.env()['PAYMENTS_API_KEY']}"}) as r:
            assert r.status == 200
    await subscription(api, key, bid, "canceled", "canceled")
    status, link, _ = await reopen(api, key, bid)
    assert status == 201, link
    assert "free trial" not in (await page(link["checkout_url"]))[1]  # a resubscription starts paid
    assert (await payments.check_out(link["checkout_url"]))[0] == 303
    ws = await subscription(api, key, bid, "active", "active")
    assert ws["standing"] == "active"
    resubscribed = [e["event"]["data"]["object"] for e in await payments.events(client_reference_id=bid)
                    if e["type"] == "checkout.session.completed" and e["event"]["data"]["object"]["id"] == link[
                        "checkout_session_id"]]
    assert resubscribed and resubscribed[0]["customer"] == first["customer"]  # the same Stripe customer
    assert resubscribed[0]["subscription"] != first["subscription"]
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_another_accounts_business_is_forbidden(api, account, other_key):
    status, body, _ = await reopen(api, other_key, account["business_id"])
    assert status == 403 and body["error"]["code"] == "forbidden", body
