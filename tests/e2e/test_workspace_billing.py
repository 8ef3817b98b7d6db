"""Workspaces belong to the account's subscription (issue 51): the hundred-workspace attack ends at the plan's
limit with every workspace it made on the subscription and its invoice; one trial per account; an x402 account
pays for each further workspace; a failed payment holds every workspace billed on the subscription, and the
owner cannot lift a billing hold by resuming."""
from core import plans
from providers.x402 import payer
from tests.billing import (
    full_key,
    provider,
    provisioned,
    release_numbers,
    signup,
    subscription,
    subscription_of,
    workspace,
)
from tests.waiting import wait_until

STARTER = plans.WORKSPACE_LIMITS["starter"]


async def quantity(api, sub_id: str) -> int:
    """The quantity of the subscription's one item at the provider: the workspaces it bills."""
    [item] = (await provider(api, "GET", f"/v1/subscriptions/{sub_id}"))["items"]["data"]
    return item["quantity"]


async def create(api, key: str, name: str, headers: dict | None = None):
    return await api.request("POST", "/api/v1/workspaces", key=key, json={"name": name}, headers=headers)


async def test_the_hundred_workspace_attack_ends_at_the_plans_limit_and_each_is_on_the_invoice(api, payments):
    # One paid starter account (a real card checkout) and a key with workspaces:write.
    status, body, _ = await signup(api)
    assert (await payments.check_out(body["checkout_url"]))[0] == 303
    first = await provisioned(api, body["api_key"], body["business_id"])
    key = await full_key(api, body)
    await release_numbers(api, key, [first["provisioning"]["phone_number"]])  # the pool's, for the other tests
    made, refused = [], None
    for n in range(100):
        status, reply, _ = await create(api, key, f"Branch {n}")
        if status != 201:
            refused = (status, reply)
            break
        made.append(reply)
    assert len(made) == STARTER - 1, made
    status, reply = refused
    assert status == 403 and reply["error"]["code"] == "forbidden", reply
    assert f"the starter plan allows {STARTER} workspaces" in reply["error"]["message"]

    # No trial of their own: each is in the account's trial, and in its standing.
    for ws in made:
        assert (ws["subscription_status"], ws["standing"], ws["plan_id"]) == ("trialing", "trialing", "starter")
        assert ws["trial_ends_at"] == first["trial_ends_at"]
    # Every workspace is a unit of the one subscription at the provider...
    sub_id = await subscription_of(api, body["business_id"])
    assert await quantity(api, sub_id) == STARTER
    # ... and on its invoice once the trial ends, every workspace following the subscription to active.
    assert await payments.advance(sub_id, until="payment") == ["trial_end", "payment"]
    sub = await provider(api, "GET", f"/v1/subscriptions/{sub_id}")
    invoice = await provider(api, "GET", f"/v1/invoices/{sub['latest_invoice']}")
    assert invoice["status"] == "paid" and invoice["billing_reason"] == "subscription_cycle"
    assert [(line["quantity"], line["amount"]) for line in invoice["lines"]["data"]] == [
        (STARTER, STARTER * plans.MONTHLY_PRICE_CENTS["starter"])]
    for ws in [first, *made]:
        await subscription(api, key, ws["id"], "active", "active")
    # A torn-down workspace leaves the subscription, and makes room for another (the limit counts those in use).
    for action in ("cancel", "teardown"):
        status, reply, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                             json={"id": made[0]["id"], "action": action})
        assert status == 200, reply
    assert await quantity(api, sub_id) == STARTER - 1
    status, reply, _ = await create(api, key, "Replacement")
    assert status == 201 and reply["standing"] == "active", reply
    assert await quantity(api, sub_id) == STARTER
    # Mid-period, each change is prorated onto the next invoice (a credit for the one torn down, a charge for the
    # one added).
    await payments.advance(sub_id, until="payment")
    sub = await provider(api, "GET", f"/v1/subscriptions/{sub_id}")
    invoice = await provider(api, "GET", f"/v1/invoices/{sub['latest_invoice']}")
    prorations = [line for line in invoice["lines"]["data"]
                  if line["parent"]["subscription_item_details"]["proration"]]
    assert sorted(line["amount"] > 0 for line in prorations) == [False, True], invoice["lines"]["data"]


async def test_one_trial_per_account_a_workspace_follows_the_accounts_subscription(api, account, payments):
    key, bid = account["key"], account["business_id"]
    signed_up = await workspace(api, key, bid)
    status, ws, _ = await create(api, key, "Second")
    assert status == 201, ws
    assert (ws["subscription_status"], ws["trial_ends_at"]) == ("trialing", signed_up["trial_ends_at"])
    sub_id = await subscription_of(api, bid)
    assert await quantity(api, sub_id) == 2
    await payments.advance(sub_id, until="trial_end")  # the account's trial ends: the new workspace's with it
    await subscription(api, key, ws["id"], "active", "active")


async def test_a_workspace_the_provider_did_not_answer_about_is_billed_once_it_answers(api, account, payments):
    key, bid = account["key"], account["business_id"]
    sub_id = await subscription_of(api, bid)
    fault = {"method": "POST", "path": f"/v1/subscriptions/{sub_id}", "status": 500, "times": None}
    assert (await payments.control("POST", "/faults", fault))[0] == 201
    try:
        status, body, _ = await create(api, key, "Outage")
    finally:
        await payments.control("DELETE", "/faults")
    assert status == 500 and body["error"]["code"] == "provider_error", body
    assert "kept unpaid" in body["error"]["message"]
    async def outage_workspaces():
        status, listing, _ = await api.request("GET", "/api/v1/workspaces", key=key)
        return [w for w in listing["workspaces"] if w["name"] == "Outage"]
    [kept] = await wait_until(outage_workspaces, "the kept workspace in the key's listing", bool, timeout=10)
    assert kept["standing"] == "unpaid"  # held until it is on the subscription (asked again after 5 s)
    # The billing worker asks again (the same idempotency key for the same quantity): billed once, not lost.
    await subscription(api, key, kept["id"], "trialing", "active")
    assert await quantity(api, sub_id) == 2
    status, again, _ = await create(api, key, "After")
    assert status == 201 and await quantity(api, sub_id) == 3, again


async def test_failed_billing_holds_every_workspace_and_the_owner_cannot_resume_it(api, account, payments,
                                                                                  other_key):
    key, bid = account["key"], account["business_id"]
    branch = (await create(api, key, "Branch"))[1]
    sub_id = await subscription_of(api, bid)
    assert (await payments.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": True}))[0] == 200
    assert await payments.advance(sub_id, until="payment") == ["trial_end", "payment"]
    for business_id in (bid, branch["id"]):  # past due, and paused (the tests' grace period is 0)
        held = await subscription(api, key, business_id, "past_due", "paused")
        assert held["standing"] == "paused"

    # The owner may not lift billing's hold: not by resuming, nor by pausing first to make the pause theirs.
    for ws_id in (bid, branch["id"]):
        status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                            json={"id": ws_id, "action": "resume"})
        assert status == 403 and body["error"]["code"] == "forbidden" and "billing paused" in body["error"]["message"]
    assert (await api.request("PATCH", "/api/v1/workspaces", key=key,
                              json={"id": branch["id"], "action": "pause"}))[0] == 200
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                        json={"id": branch["id"], "action": "resume"})
    assert status == 403 and "billing paused" in body["error"]["message"]
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=other_key,
                                        json={"id": branch["id"], "action": "resume"})
    assert status == 404 and body["error"]["code"] == "not_found"
    assert (await workspace(api, key, branch["id"]))["lifecycle_state"] == "paused"

    # Paid (the next retry goes through): billing resumes every workspace.
    assert (await payments.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": False}))[0] == 200
    assert (await payments.control("POST", f"/subscriptions/{sub_id}/advance"))[0] == 200
    for business_id in (bid, branch["id"]):
        await subscription(api, key, business_id, "active", "active")


async def test_an_owners_own_pause_is_theirs_to_resume(api, account):
    key, bid = account["key"], account["business_id"]
    for action in ("pause", "resume"):
        status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key, json={"id": bid, "action": action})
        assert status == 200, body
    assert (await workspace(api, key, bid))["lifecycle_state"] == "active"


async def test_an_x402_account_pays_for_each_further_workspace(api):
    _, _, headers = await signup(api, payment_capture="x402")
    status, body, _ = await signup(api, headers={"PAYMENT-SIGNATURE": payer.pay(payer.new_private_key(),
                                                                                 headers["PAYMENT-REQUIRED"])})
    assert status == 200, body
    key = await full_key(api, body)
    await release_numbers(api, key, [body["phone_number"]])  # the pool's, for the other tests
    status, reply, headers = await create(api, key, "Branch")
    assert status == 402 and reply["error"]["code"] == "payment_required", reply
    [offer] = payer.read_payment_required(headers["PAYMENT-REQUIRED"]).accepts
    assert offer.amount == str(plans.MONTHLY_PRICE_CENTS["starter"] * 10**4)  # the plan's month, in USDC
    paid = payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])
    status, ws, reply_headers = await create(api, key, "Branch", headers={"PAYMENT-SIGNATURE": paid})
    assert status == 201, ws
    assert reply_headers.get("PAYMENT-RESPONSE") and "payment_response" not in ws
    assert (ws["subscription_status"], ws["standing"]) == ("active", "active") and ws["paid_through"]
    assert "trial_ends_at" not in ws or ws["trial_ends_at"] is None  # one trial per account: the signup's
    # The same payment again pays for nothing more.
    status, reply, _ = await create(api, key, "Again", headers={"PAYMENT-SIGNATURE": paid})
    assert status == 402 and reply["error"]["code"] == "payment_required", reply
    status, listing, _ = await api.request("GET", "/api/v1/workspaces", key=key)
    assert len(listing["workspaces"]) == 2
