"""x402 payments that are never lost and never grant what was not paid, end to end through the local facilitator
(real signatures, an in-memory chain): a settlement whose answer is lost, at each step, is reconciled by asking the
facilitator again; renewals of the paid period (POST /api/v1/subscription/x402) extend paid_through and resume a
workspace paused for non-payment; the owner is reminded before a period ends."""
import asyncio
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest

from providers.x402 import payer
from tests.billing import full_key, provisioned, release_numbers, signup, workspace
from tests.emails import owner_notices
from tests.waiting import wait_until

RENEW = "/api/v1/subscription/x402"


class Facilitator:
    """The stack's local facilitator: its control plane and its chain."""

    def __init__(self, session: aiohttp.ClientSession, url: str):
        self.session, self.url = session, url

    async def control(self, method: str, path: str, body: dict | None = None):
        async with self.session.request(method, f"{self.url}/_facilitator{path}", json=body) as r:
            answer = await r.json()
            assert r.status < 300, answer
            return answer

    async def fail_settle(self, **fault):
        await self.control("POST", "/faults", {"path": "/settle", "times": 1, "status": 503, **fault})

    async def settlements_of(self, address: str) -> list[dict]:
        ledger = await self.control("GET", "/settlements")
        return [s for s in ledger["settlements"] if s["payer"].lower() == address.lower()]


@pytest.fixture
async def facilitator(stack):
    async with aiohttp.ClientSession() as session:
        f = Facilitator(session, f"http://127.0.0.1:{stack.process('x402-facilitator').port}")
        yield f
        await f.control("DELETE", "/faults")


async def x402_signup(api, **payment):
    """An x402 signup from a new payer: (status, body, headers, the payer's address)."""
    _, _, headers = await signup(api, payment_capture="x402")
    key = payer.new_private_key()
    status, body, headers = await signup(api, headers={
        "PAYMENT-SIGNATURE": payer.pay(key, headers["PAYMENT-REQUIRED"], **payment)})
    return status, body, headers, payer.address_of(key)


async def pending_signup(api, stack):
    """An x402 signup answered pending; its full key, business id and payer."""
    status, body, headers, address = await x402_signup(api)
    assert status == 200, body
    assert body["payment_status"] == "pending" and body["provisioning_deferred"] is True, body
    assert body["agent_id"] is None and "PAYMENT-RESPONSE" not in headers
    key = await full_key(api, body)
    await api.confirm_address(stack, body["_email"])
    return key, body["business_id"], address


async def held_unpaid(api, key: str, bid: str) -> dict:
    ws = await workspace(api, key, bid)
    assert (ws["subscription_status"], ws["standing"]) == ("incomplete", "unpaid"), ws
    assert ws["provisioning"]["status"] == "waiting_payment" and ws.get("paid_through") is None, ws
    return ws


async def settled(api, key: str, bid: str) -> dict:
    """The workspace once its subscription is active."""
    return await wait_until(lambda: workspace(api, key, bid), "the payment to be reconciled",
                            lambda ws: ws["subscription_status"] == "active", timeout=20)


# -- a settlement whose answer is lost ----------------------------------------------------------------------

async def test_a_settlement_that_moved_the_money_but_lost_its_answer_is_reconciled(api, stack, facilitator):
    # The facilitator settles at once but holds its answer past our bound (2 x 2 s).
    await facilitator.fail_settle(status=0, hold="answer", delay_seconds=6)
    await facilitator.fail_settle(status=503, times=1000)  # then down, until the test has looked
    key, bid, address = await pending_signup(api, stack)
    # The money moved, and the workspace is held until we know it: reconciled, it is paid and provisioned.
    await held_unpaid(api, key, bid)
    assert len(await facilitator.settlements_of(address)) == 1
    await facilitator.control("DELETE", "/faults")
    ws = await settled(api, key, bid)
    assert ws["standing"] == "active" and ws["paid_through"]
    ws = await provisioned(api, key, bid)
    [notice] = await wait_until(lambda: owner_notices(api, key, "confirmed"), "the owner's e-mail", timeout=20)
    assert "went through" in notice["body"]
    assert len(await facilitator.settlements_of(address)) == 1  # taken once, never twice
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_settlement_that_never_reached_the_chain_is_taken_by_the_reconciler(api, stack, facilitator):
    await facilitator.fail_settle(status=503)  # answered before the facilitator takes anything
    key, bid, address = await pending_signup(api, stack)
    ws = await provisioned(api, key, bid)
    assert ws["subscription_status"] == "active"
    [taken] = await facilitator.settlements_of(address)
    assert taken["amount"] == "49000000"
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_a_pending_payment_the_facilitator_then_refuses_is_never_provisioned(api, stack, facilitator):
    await facilitator.fail_settle(status=503, times=1000)  # down until the payer's funds are gone
    key, bid, address = await pending_signup(api, stack)
    await facilitator.control("POST", "/balances", {"address": address, "balance": "0"})
    await facilitator.control("DELETE", "/faults")

    [notice] = await wait_until(lambda: owner_notices(api, key, "did not go through"), "the owner's e-mail",
                                timeout=30)
    assert "insufficient_balance" in notice["body"] and "/api/v1/subscription/x402" in notice["body"]
    await held_unpaid(api, key, bid)  # never provisioned; nothing was taken
    assert await facilitator.settlements_of(address) == []

    # The owner pays with the renewal route instead: the signup's trial and month, then provisioning.
    status, answer, headers = await api.request("POST", RENEW, key=key, json={})
    assert status == 402, answer
    status, answer, headers = await api.request("POST", RENEW, key=key, json={}, headers={
        "PAYMENT-SIGNATURE": payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])})
    assert status == 200 and answer["payment_status"] == "settled", answer
    assert "PAYMENT-RESPONSE" in headers
    ws = await provisioned(api, key, bid)
    assert ws["subscription_status"] == "active" and ws["standing"] == "active"
    await release_numbers(api, key, [ws["provisioning"]["phone_number"]])


async def test_an_authorization_that_expires_unanswered_is_unresolved_and_never_provisioned(api, stack, facilitator,
                                                                                            db):
    await facilitator.fail_settle(status=503, times=1000)
    status, body, _, address = await x402_signup(api, valid_for_seconds=9)
    assert status == 200 and body["payment_status"] == "pending", body
    key, bid = await full_key(api, body), body["business_id"]
    await api.confirm_address(stack, body["_email"])
    expires = await db.fetchval("SELECT valid_before FROM accounts.x402_payments WHERE business_id = $1", bid)
    await wait_until(lambda: datetime.now(UTC) > expires + timedelta(seconds=1),
                     "the authorization to expire", timeout=20)
    await facilitator.control("DELETE", "/faults")
    [notice] = await wait_until(lambda: owner_notices(api, key, "could not confirm"), "the owner's e-mail",
                                timeout=30)
    assert "do not pay twice" in notice["body"]
    assert await db.fetchval("SELECT status FROM accounts.x402_payments WHERE business_id = $1", bid) == "unresolved"
    await held_unpaid(api, key, bid)
    # While an operator checks the chain, another payment would be refused rather than taken twice.
    status, answer, _ = await api.request("POST", RENEW, key=key, json={})
    assert status == 409 and answer["error"]["code"] == "conflict", answer


async def test_a_facilitator_down_before_the_payment_creates_nothing(api, facilitator):
    await facilitator.control("POST", "/faults", {"path": "/verify", "times": 1, "status": 503})
    _, _, headers = await signup(api, payment_capture="x402")
    email = "down-" + payer.new_private_key()[2:12] + "@example.com"
    status, body, _ = await signup(api, email=email, headers={
        "PAYMENT-SIGNATURE": payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])})
    assert status == 500 and body["error"]["code"] == "provider_error", body
    assert (await signup(api, email=email))[0] == 200  # nothing was made


# -- renewal ------------------------------------------------------------------------------------------------

async def test_renewal_extends_paid_through_and_resumes_a_workspace_paused_for_non_payment(api, db):
    status, body, _, _ = await x402_signup(api)
    assert status == 200 and body["payment_status"] == "settled", body
    key, bid = await full_key(api, body), body["business_id"]
    ws = await workspace(api, key, bid)
    paid_through = datetime.fromisoformat(ws["paid_through"])
    assert paid_through - datetime.fromisoformat(body["trial_ends_at"]) == timedelta(days=30)

    status, answer, _ = await api.request("POST", RENEW, key=key, json={"business_id": bid})
    assert status == 409 and "the next period can be paid from" in answer["error"]["message"], answer

    # The trial and the period ran out: billing pauses the workspace (grace 0 here).
    await db.execute("UPDATE accounts.businesses SET paid_through = now() - interval '1 minute', "
                     "trial_ends_at = now() - interval '31 days' WHERE id = $1", bid)
    await wait_until(lambda: workspace(api, key, bid), "billing to pause the workspace",
                     lambda ws: ws["lifecycle_state"] == "paused", timeout=20)
    status, answer, headers = await api.request("POST", RENEW, key=key, json={"business_id": bid})
    assert status == 402 and answer["error"]["code"] == "payment_required", answer
    [offer] = answer["error"]["payment_required"]["accepts"]
    assert offer["amount"] == "49000000"
    assert answer["error"]["payment_required"]["resource"]["url"].endswith(RENEW)

    paid = payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])
    status, renewed, headers = await api.request("POST", RENEW, key=key, json={"business_id": bid},
                                                 headers={"PAYMENT-SIGNATURE": paid})
    assert status == 200, renewed
    assert (renewed["payment_status"], renewed["subscription_status"]) == ("settled", "active")
    until_then = datetime.fromisoformat(renewed["paid_through"]) - datetime.now(UTC)
    assert timedelta(days=29, hours=23) < until_then <= timedelta(days=30)
    assert payer.payment_response(headers["PAYMENT-RESPONSE"]).transaction == renewed["transaction"]
    ws = await wait_until(lambda: workspace(api, key, bid), "the workspace to resume",
                          lambda ws: ws["lifecycle_state"] == "active", timeout=20)
    assert ws["standing"] == "active"

    # The same payment again answers the same outcome; nothing is paid or extended twice.
    status, again, _ = await api.request("POST", RENEW, key=key, json={"business_id": bid},
                                         headers={"PAYMENT-SIGNATURE": paid})
    assert status == 200 and again["transaction"] == renewed["transaction"], again
    assert again["paid_through"] == renewed["paid_through"]
    await release_numbers(api, key, [body["phone_number"]] if body["phone_number"] else [])


async def test_a_renewal_left_unanswered_is_pending_then_settled(api, db, facilitator):
    status, body, _, _ = await x402_signup(api)
    key, bid = await full_key(api, body), body["business_id"]
    await db.execute("UPDATE accounts.businesses SET paid_through = now() + interval '1 day', "
                     "trial_ends_at = now() - interval '29 days' WHERE id = $1", bid)
    _, _, headers = await api.request("POST", RENEW, key=key, json={})
    await facilitator.fail_settle(status=503)
    status, answer, _ = await api.request("POST", RENEW, key=key, json={}, headers={
        "PAYMENT-SIGNATURE": payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])})
    assert status == 202 and answer["payment_status"] == "pending", answer
    before = datetime.fromisoformat(answer["paid_through"])
    await wait_until(lambda: workspace(api, key, bid), "the renewal to be reconciled",
                     lambda ws: datetime.fromisoformat(ws["paid_through"]) == before + timedelta(days=30), timeout=20)
    await release_numbers(api, key, [body["phone_number"]] if body["phone_number"] else [])


async def test_a_card_subscription_is_not_paid_by_x402(api):
    body = await api.signup()  # in its trial, billed to a card
    key = await full_key(api, body)
    status, answer, _ = await api.request("POST", RENEW, key=key, json={})
    assert status == 409 and "billed to the card" in answer["error"]["message"], answer


async def test_the_owner_is_reminded_once_before_the_period_ends(api, db, stack):
    status, body, _, _ = await x402_signup(api)
    key, bid = await full_key(api, body), body["business_id"]
    await api.confirm_address(stack, body["_email"])
    await db.execute("UPDATE accounts.businesses SET paid_through = now() + interval '2 days' WHERE id = $1", bid)
    [notice] = await wait_until(lambda: owner_notices(api, key, "ends on"), "the owner's reminder", timeout=20)
    assert RENEW in notice["body"] and "PAYMENT-SIGNATURE" in notice["body"]
    await asyncio.sleep(1.5)  # five more rounds of the billing worker (0.3 s apart here)
    assert len(await owner_notices(api, key, "ends on")) == 1
    await release_numbers(api, key, [body["phone_number"]] if body["phone_number"] else [])

