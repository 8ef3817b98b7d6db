"""What a workspace may spend follows its standing (core.standing), end to end: an unpaid signup, a paused, a
canceled and a torn-down workspace may read and set up but not place calls, text, email, take pool numbers or run
outreach (403 forbidden saying what to do), and may again once back in good standing; a completed checkout lifts
the hold through the standing event (not the principal cache's TTL); scheduled outreach waits while the workspace
is held; a trial's pool numbers are limited, concurrent requests included; a teardown frees the numbers."""
import asyncio
import time

import pytest

from tests.billing import workspace
from tests.calling import agent_with_number
from tests.compliance import answering_callee
from tests.runs import create, jobs_of, run_of, settled, touch
from tests.waiting import wait_until

TRIAL_NUMBERS = 3  # TRIAL_POOL_NUMBERS' default


async def lifecycle(api, key, business_id, action: str) -> dict:
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                        json={"id": business_id, "action": action})
    assert status == 200, body
    return body


async def email(api, key, to: str):
    return await api.request("POST", "/api/v1/emails", key=key, json={"to": to, "subject": "Hi", "body": "Hello."})


async def free_number(api, key) -> str:
    status, body, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key, params={"country": "US"})
    assert status == 200 and body["numbers"], body
    return body["numbers"][0]["phone_number"]


def refused(reply, status: int, body: dict, *words: str) -> None:
    assert status == 403 and body["error"]["code"] == "forbidden", (reply, status, body)
    assert all(w in body["error"]["message"] for w in words), (reply, body["error"]["message"])


async def test_an_unpaid_signup_reads_and_sets_up_but_spends_nothing(api):
    signup = await api.signup(paid=False)
    dash = await api.dashboard(signup)
    try:
        key = (await dash.create_key(name="all", scopes=["*"]))["key"]
        business_id = signup["business_id"]
        ws = await workspace(api, key, business_id)
        assert (ws["standing"], ws["subscription_status"]) == ("unpaid", "incomplete")
        status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
            "business_id": business_id, "name": "Front desk", "system_prompt": "Answer."})
        assert status == 201, agent  # setting up is allowed
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={
            "business_id": business_id, "phone_number": await free_number(api, key), "agent_id": agent["id"]})
        refused("number", status, body, "taking a phone number", "checkout")
        status, body, _ = await email(api, key, "someone@example.com")
        refused("email", status, body, "sending email", "checkout")
        status, body, _ = await api.request("POST", "/api/v1/workspaces", key=key, json={"name": "Second"})
        refused("workspace", status, body, "creating a workspace")
    finally:
        await dash.close()


async def test_a_paused_workspace_spends_nothing_until_resumed(api, account, calling_agent):
    key, business_id, agent = account["key"], account["business_id"], calling_agent
    assert (await workspace(api, key, business_id))["standing"] == "trialing"
    paused = await lifecycle(api, key, business_id, "pause")
    assert (paused["lifecycle_state"], paused["standing"]) == ("paused", "paused")
    status, body, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": answering_callee()})
    refused("call", status, body, "placing calls", "paused", "action resume")
    status, body, _ = await api.request("POST", "/api/v1/sms/send", key=key, json={
        "from_agent_id": agent["id"], "to": answering_callee(), "message": "Hi"})
    refused("sms", status, body, "sending texts", "paused")
    status, body, _ = await email(api, key, account["email"])
    refused("email", status, body, "sending email", "paused")
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={
        "business_id": business_id, "phone_number": await free_number(api, key), "agent_id": agent["id"]})
    refused("number", status, body, "taking a phone number", "paused")
    status, body, _ = await create(api, key, run_of(account, agent, touch("a", answering_callee())))
    refused("run", status, body, "scheduling outreach", "paused")
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": business_id, "name": "Dana", "phone": answering_callee()})
    assert status == 201, lead  # setting up (and reading) is allowed
    status, body, _ = await api.request("POST", "/api/sdr/action", key=key, json={
        "businessId": business_id, "leadId": lead["id"], "action": "call"})
    refused("pipeline", status, body, "reaching out to leads", "paused")
    status, calls, _ = await api.request("GET", "/api/v1/calls", key=key)
    assert status == 200, calls
    resumed = await lifecycle(api, key, business_id, "resume")
    assert resumed["standing"] == "trialing"
    status, body, _ = await email(api, key, account["email"])
    assert status == 201, body


async def test_a_canceled_workspace_says_to_resubscribe(api, account):
    key, business_id = account["key"], account["business_id"]
    assert (await lifecycle(api, key, business_id, "cancel"))["standing"] == "canceled"
    status, body, _ = await email(api, key, account["email"])
    refused("email", status, body, "canceled", "subscribe again")


async def test_a_completed_checkout_lifts_the_hold_at_once(api, payments):
    """The key was used (its principal cached as unpaid); the checkout's standing event invalidates it, well
    before the cache's 60-second time-to-live."""
    signup = await api.signup(paid=False)
    dash = await api.dashboard(signup)
    try:
        full = (await dash.create_key(name="all", scopes=["*"]))["key"]
        assert (await workspace(api, full, signup["business_id"]))["standing"] == "unpaid"
        status, body, _ = await email(api, full, "someone@example.com")
        refused("email before paying", status, body, "checkout")
        status, _ = await payments.check_out(signup["checkout_url"])
        assert status in (200, 303)
        started = time.monotonic()

        async def allowed():
            status, body, _ = await email(api, full, "someone@example.com")
            return status == 201
        await wait_until(allowed, "the completed checkout to allow spending", timeout=20)
        assert time.monotonic() - started < 30
        assert (await workspace(api, full, signup["business_id"]))["standing"] == "trialing"
    finally:
        await dash.close()


async def test_scheduled_outreach_waits_while_the_workspace_is_held(api, account, db, calling_agent):
    key, business_id = account["key"], account["business_id"]
    status, run, _ = await create(api, key, run_of(account, calling_agent, touch("later", answering_callee(),
                                                                                 seconds=3)))
    assert status == 201, run
    await lifecycle(api, key, business_id, "pause")

    async def standing() -> str:
        return await db.fetchval("SELECT standing FROM sdr.business_standings WHERE business_id = $1", business_id)
    await wait_until(standing, "the scheduler to learn the workspace is paused", lambda s: s == "paused", timeout=20)
    await asyncio.sleep(4)  # the touch is due now, and the scheduler polls every 0.2 s
    [job] = await jobs_of(api, key, run["id"])
    assert job["status"] == "pending", job
    await lifecycle(api, key, business_id, "resume")
    done = await settled(api, key, run["id"])
    assert done["status"] == "completed", done


async def test_a_trial_holds_a_limited_number_of_pool_numbers(api, account):
    key, business_id = account["key"], account["business_id"]
    held = [(await agent_with_number(api, account))["phone_number"] for _ in range(TRIAL_NUMBERS - 1)]
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": business_id, "name": "Extra", "system_prompt": "Answer."})
    status, available, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key,
                                             params={"country": "US", "limit": "5"})
    candidates = [n["phone_number"] for n in available["numbers"]][:3]
    # Three requests for the last allowed number race: exactly one wins, the others are told the allowance.
    replies = await asyncio.gather(*(api.request("POST", "/api/v1/phone-numbers", key=key, json={
        "business_id": business_id, "phone_number": n, "agent_id": agent["id"]}) for n in candidates))
    won = [body for status, body, _ in replies if status == 201]
    assert len(won) == 1, replies
    for status, body, _ in replies:
        if status != 201:
            refused("over the allowance", status, body, f"at most {TRIAL_NUMBERS} pool numbers")
    held.append(won[0]["phone_number"])
    status, numbers, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
    assert sorted(n["phone_number"] for n in numbers["phone_numbers"]) == sorted(held)
    for number in held:
        await api.request("DELETE", "/api/v1/phone-numbers", key=key, params={"phone_number": number})


async def test_a_teardown_frees_the_numbers_and_stops_everything(api, account):
    key, business_id = account["key"], account["business_id"]
    agent = await agent_with_number(api, account)
    await lifecycle(api, key, business_id, "cancel")
    assert (await lifecycle(api, key, business_id, "teardown"))["standing"] == "inactive"

    async def released():
        status, numbers, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
        return status == 200 and numbers["phone_numbers"] == []
    await wait_until(released, "the torn-down workspace's number to go back to the pool", timeout=20)
    status, available, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key,
                                             params={"country": "US", "limit": "100"})
    assert agent["phone_number"] in [n["phone_number"] for n in available["numbers"]] or available["has_more"]
    status, body, _ = await email(api, key, account["email"])
    refused("email", status, body, "torn down")


@pytest.mark.parametrize("action", ["pause", "cancel"])
async def test_another_accounts_key_cannot_hold_a_workspace(api, account, other_key, action):
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=other_key,
                                        json={"id": account["business_id"], "action": action})
    assert status == 404 and body["error"]["code"] == "not_found", body
    assert (await workspace(api, account["key"], account["business_id"]))["standing"] == "trialing"
