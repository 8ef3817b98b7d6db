"""The payment provider's events beyond the checkout, end to end through the payments simulator: the trial's end
announced to the owner by e-mail (once, through the email queue), a payment waiting for the customer's
authentication sent to the owner with its hosted invoice link, a plan change at the provider followed by the
workspace's plan, and the newer event winning when the provider delivers them out of order."""
import aiohttp

from providers.payments.simulator.cards import NEEDS_ACTION
from services.accounts.billing.payments_service import EVENTS_CONSUMER
from tests.billing import (
    FAILS_LATER_CARD,
    full_key,
    provisioned,
    release_numbers,
    signup,
    subscription,
    workspace,
)
from tests.emails import owner_notices
from tests.provider_webhooks import all_applied
from tests.waiting import wait_until


async def subscribed(api, payments, stack, card: str | None = None):
    """A paid signup: its key, business id, owner's address, subscription (as the provider created it)."""
    status, body, _ = await signup(api)
    bid, key = body["business_id"], await full_key(api, body)
    assert (await payments.check_out(body["checkout_url"], card=card))[0] == 303
    ws = await provisioned(api, key, bid)
    [created] = [e for e in await payments.events(**{"metadata.business_id": bid})
                 if e["type"] == "customer.subscription.created"]
    return key, bid, body["_email"], created["event"]["data"]["object"], ws


async def test_the_owner_hears_by_email_that_the_trial_ends(api, payments, stack):
    key, bid, owner, sub, ws = await subscribed(api, payments, stack)
    await api.confirm_address(stack, owner)
    status, sent = await payments.control("POST", f"/subscriptions/{sub['id']}/trial_will_end")
    assert status == 200, sent

    notices = lambda: owner_notices(api, key, "trial")
    [notice] = await wait_until(notices, "the owner's e-mail about the trial's end", timeout=20)
    assert notice["to"] == owner.lower() and "ends on" in notice["subject"] and "/dashboard" in notice["body"]
    # The provider repeats the event: it is applied once, so the owner hears once.
    status, _ = await payments.control("POST", f"/events/{sent['id']}/resend")
    assert status == 200  # once the gateway took the repeat
    await all_applied(stack, EVENTS_CONSUMER)
    assert len(await notices()) == 1
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_payment_waiting_for_authentication_sends_the_owner_its_link(api, payments, stack):
    key, bid, owner, sub, ws = await subscribed(api, payments, stack, card=NEEDS_ACTION)  # 3-D Secure completed
    await api.confirm_address(stack, owner)
    await payments.advance(sub["id"], until="payment")  # the trial ends; its invoice asks the bank again
    [required] = [e["event"]["data"]["object"] for e in await payments.events(customer=sub["customer"])
                  if e["type"] == "invoice.payment_action_required"]
    assert required["hosted_invoice_url"]

    [notice] = await wait_until(lambda: owner_notices(api, key, "confirmation"),
                                "the owner's e-mail with the invoice link", timeout=20)
    assert required["hosted_invoice_url"] in notice["body"]
    await subscription(api, key, bid, "past_due")
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_plan_change_at_the_provider_changes_the_workspaces_plan(api, payments, stack):
    key, bid, _, sub, ws = await subscribed(api, payments, stack)
    assert (await workspace(api, key, bid))["plan_id"] == "starter"

    async def stripe(path: str, data: dict) -> dict:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{payments.url}{path}", data=data, headers={
                    "Authorization": f"Bearer {stack.env()['PAYMENTS_API_KEY']}"}) as r:
                assert r.status == 200, await r.text()
                return await r.json()

    async def change(price: str) -> None:
        await stripe(f"/v1/subscriptions/{sub['id']}", {"items[0][id]": sub["items"]["data"][0]["id"],
                                                        "items[0][price]": price})

    await change("price_growth_monthly")

    async def plan() -> str:
        return (await workspace(api, key, bid))["plan_id"]
    await wait_until(plan, "the upgrade to reach the workspace", lambda p: p == "growth", timeout=20)

    async def updates_applied() -> int:
        return len([e for e in await payments.events(**{"metadata.business_id": bid})
                    if e["type"] == "customer.subscription.updated" and e["status"] == "succeeded"])
    applied = await updates_applied()
    not_offered = await stripe("/v1/prices", {"currency": "usd", "unit_amount": "9900", "recurring[interval]": "month",
                                              "product_data[name]": "A plan we do not offer"})
    await change(not_offered["id"])
    await wait_until(updates_applied, "the provider's event for a price we do not offer", lambda n: n > applied,
                     timeout=20)
    await all_applied(stack, EVENTS_CONSUMER)
    assert await plan() == "growth"  # a price we do not offer changes nothing
    await change("price_scale_monthly")
    await wait_until(plan, "the second change to reach the workspace", lambda p: p == "scale", timeout=20)
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_the_newer_event_wins_when_the_provider_delivers_them_out_of_order(api, payments, stack):
    """Stripe does not guarantee the order of its events. The trial's end (the subscription `active`) and, an hour
    later, its invoice's failed charge (`past_due`), delivered newest first, leave the workspace past due: the
    events' `created` says which is newer, whatever order they come in."""
    key, bid, _, sub, ws = await subscribed(api, payments, stack, card=FAILS_LATER_CARD)
    assert (await payments.control("POST", "/events/hold"))[0] == 200
    try:
        assert await payments.advance(sub["id"], until="payment") == ["trial_end", "payment"]
    finally:
        status, released = await payments.control("POST", "/events/release", {"order": "reversed"})
    assert status == 200, released
    records = {e["id"]: e for e in await payments.events()}
    ours = [records[i]["event"] for i in released["released"]
            if records[i]["event"]["data"]["object"].get("id") == sub["id"]]
    assert [(e["type"], e["data"]["object"]["status"]) for e in ours] == [
        ("customer.subscription.updated", "past_due"), ("customer.subscription.updated", "active")]
    assert ours[0]["created"] > ours[1]["created"]  # the newer came first

    async def delivered() -> bool:
        views = {e["id"]: e["status"] for e in await payments.events()}
        return all(views[i] == "succeeded" for i in released["released"])
    await wait_until(delivered, "the held events to be delivered", timeout=20)
    await all_applied(stack, EVENTS_CONSUMER)
    ws = await subscription(api, key, bid, "past_due", "paused")
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])
