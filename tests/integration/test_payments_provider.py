"""The real payments client (`StripePayments`, the official `stripe` package) and webhook parser against the
simulator served in-process on a free port: checkout sessions and idempotency, the hosted checkout page with
Stripe's test cards, signed events as a subscription starts, renews, fails and is canceled, webhook retries,
faults, credentials, and the simulator's command line."""
import asyncio
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.payments.adapter import Checkout, PaymentsError, invoice_subscription_id, subscription_period
from providers.payments.client import StripePayments
from providers.payments.simulator.app import STATE, build_app
from providers.payments.webhooks import SIGNATURE_HEADER, InvalidWebhook, parse_event, sign_payload
from tests.integration.servers import serving
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk_test_51SimulatorKey0123456789abcdef"
SECRET = "whsec_simulator0123456789abcdef"
PRICE = "price_1SwitchboardPro"
DAY = 86400
GOOD, DECLINED, NO_FUNDS, FAILS_LATER = "4242 4242 4242 4242", "4000000000000002", "4000 0000 0000 9995", \
    "4000000000000341"


class Receiver:
    """Our webhook endpoint: records every request as it arrived; can refuse the next ones with 500."""

    def __init__(self):
        self.requests: list[dict] = []
        self.fail_next = 0
        self.app = web.Application()
        self.app.router.add_post("/stripe", self.webhook)
        self.server: TestServer | None = None  # while served

    async def webhook(self, request: web.Request) -> web.Response:
        body = await request.read()
        record = {"body": body, "headers": dict(request.headers), "event": json.loads(body), "accepted": True}
        self.requests.append(record)
        if self.fail_next:
            self.fail_next -= 1
            record["accepted"] = False
            return web.Response(status=500, text="not now")
        return web.json_response({"received": True})

    @property
    def url(self) -> str:
        return str(self.server.make_url("/stripe"))

    def about(self, object_id: str) -> list[dict]:
        """Accepted deliveries of events about an object (or, for invoices and sessions, its subscription)."""
        return [r for r in self.requests if r["accepted"] and object_id in related_ids(r["event"])]

    async def wait_for(self, object_id: str, count: int, timeout: float = 5.0) -> list[dict]:
        """The first `count` accepted deliveries about an object; then a moment more, to see no others follow."""
        await wait_until(lambda: self.about(object_id), f"{count} deliveries about {object_id}",
                         lambda got: len(got) >= count, timeout=timeout, interval=0.01)
        await asyncio.sleep(0.1)
        return self.about(object_id)


def related_ids(event: dict) -> set[str]:
    obj = event["data"]["object"]
    return {i for i in (obj.get("id"), obj.get("subscription"), invoice_subscription_id(obj)
                        if obj.get("object") == "invoice" else None) if i}


class Simulator:
    def __init__(self, webhook_url: str | None, time_scale: float = 0.001):
        self.port = free_port()
        self.app = build_app(API_KEY, webhook_url=webhook_url, webhook_secret=SECRET, public_url=self.url,
                             time_scale=time_scale)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def control(self, method: str, path: str, json=None, expect: int | None = None):
        async with aiohttp.ClientSession() as s, s.request(method, f"{self.url}/_simulator{path}", json=json) as r:
            assert (r.status < 300) if expect is None else (r.status == expect), await r.text()
            return await r.json()

    async def raw(self, method: str, path: str, *, key: str | None = API_KEY, data=None, headers=None):
        hdrs = {**({"Authorization": f"Bearer {key}"} if key else {}), **(headers or {})}
        async with aiohttp.ClientSession() as s, s.request(method, self.url + path, data=data, headers=hdrs) as r:
            return r.status, r.headers, await r.json()

    async def advance(self, sub_id: str) -> dict:
        return await self.control("POST", f"/subscriptions/{sub_id}/advance")

    async def attempts(self, method: str, path: str) -> list:
        return [e["status"] for e in await self.control("GET", f"/log?path={path}")
                if e["method"] == method and e["path"] == path]


async def pay(url: str, number: str, expiry: str = "12 / 34", cvc: str = "123") -> tuple[int, dict, str]:
    async with aiohttp.ClientSession() as s, s.post(url, allow_redirects=False, data={
            "cardNumber": number, "cardExpiry": expiry, "cardCvc": cvc}) as r:
        return r.status, dict(r.headers), await r.text()


@pytest.fixture(scope="module")
async def receiver():
    r = Receiver()
    async with serving(r.app) as r.server:
        yield r


@pytest.fixture(scope="module")
async def simulator(receiver):
    sim = Simulator(receiver.url)
    async with serving(sim.app, sim.port):
        yield sim


@pytest.fixture
async def payments(simulator):
    client = StripePayments(simulator.url, API_KEY, timeout=2.0, max_network_retries=0)
    yield client
    await client.close()
    await simulator.control("DELETE", "/faults")


def checkout_args(**overrides) -> dict:
    return {"business_id": "biz_42", "email": "owner@acme-plumbing.com", "price_id": PRICE, "trial_days": 7,
            "success_url": "https://app.example.com/billing/done?session={CHECKOUT_SESSION_ID}",
            "cancel_url": "https://app.example.com/billing/cancel", "idempotency_key": f"checkout-{time.time_ns()}",
            **overrides}


async def subscribe(payments, simulator, receiver, card: str = GOOD) -> tuple[Checkout, str]:
    """Checkout through the page with `card`; the session and its subscription, once its 3 events arrived."""
    checkout = await payments.create_checkout(**checkout_args())
    status, _, text = await pay(checkout.url, card)
    assert status == 303, text
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    await receiver.wait_for(session["subscription"], 3)
    return checkout, session["subscription"]


async def test_checkout_session_fields_and_idempotency(payments, simulator):
    before = int(time.time())
    args = checkout_args()
    checkout = await payments.create_checkout(**args)
    assert re.fullmatch(r"cs_test_[A-Za-z0-9]{58}", checkout.id)
    assert checkout.url == f"{simulator.url}/c/pay/{checkout.id}"
    assert before + DAY <= checkout.expires_at <= int(time.time()) + DAY

    status, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert status == 200 and session["object"] == "checkout.session" and session["livemode"] is False
    assert (session["mode"], session["status"], session["payment_status"]) == ("subscription", "open", "unpaid")
    assert session["customer_email"] == "owner@acme-plumbing.com" and session["client_reference_id"] == "biz_42"
    assert session["metadata"] == {"business_id": "biz_42"} and session["payment_method_collection"] == "always"
    assert session["success_url"] == args["success_url"] and session["cancel_url"] == args["cancel_url"]
    assert session["customer"] is None and session["subscription"] is None and session["amount_total"] == 0
    assert not any(k.startswith("_") for k in session)

    # The same key gives the same session back; another key, another session; changed parameters, a refusal.
    assert await payments.create_checkout(**args) == checkout
    other = await payments.create_checkout(**{**args, "idempotency_key": args["idempotency_key"] + "-2"})
    assert other.id != checkout.id
    with pytest.raises(PaymentsError) as err:
        await payments.create_checkout(**{**args, "email": "someone@else.com"})
    assert err.value.status == 400 and "same parameters" in err.value.message
    assert args["idempotency_key"] in err.value.message and API_KEY not in err.value.message
    sessions = simulator.app[STATE].sessions
    assert checkout.id in sessions and other.id in sessions


async def test_stripes_refusals_and_error_shape(payments, simulator):
    with pytest.raises(PaymentsError) as err:
        await payments.create_checkout(**checkout_args(price_id="plan_pro"))
    assert (err.value.status, err.value.code, err.value.message) == (400, "resource_missing",
                                                                     "No such price: 'plan_pro'")
    with pytest.raises(PaymentsError) as err:
        await payments.create_checkout(**checkout_args(email="not-an-email"))
    assert (err.value.status, err.value.code) == (400, "email_invalid")
    with pytest.raises(PaymentsError) as err:
        await payments.get_subscription("sub_missing")
    assert (err.value.status, err.value.code, err.value.message) == (404, "resource_missing",
                                                                     "No such subscription: 'sub_missing'")
    with pytest.raises(ValueError):
        await payments.get_subscription("")

    sessions = "/v1/checkout/sessions"
    status, headers, body = await simulator.raw("POST", sessions, data={"line_items[0][price]": PRICE,
                                                                        "line_items[0][quantity]": "1"})
    assert status == 400 and headers["Request-Id"].startswith("req_")
    assert body == {"error": {"type": "invalid_request_error", "code": "parameter_missing", "param": "mode",
                              "message": "Missing required param: mode.",
                              "doc_url": "https://stripe.com/docs/error-codes/parameter_missing"}}
    status, _, body = await simulator.raw("POST", sessions, data={"mode": "subscription"})
    assert status == 400 and (body["error"]["code"], body["error"]["param"]) == ("parameter_missing", "line_items")
    status, _, body = await simulator.raw("POST", sessions, data={"mode": "subscription", "line_items[0][price]": PRICE})
    assert status == 400 and body["error"]["param"] == "line_items[0][quantity]"
    status, _, body = await simulator.raw("POST", sessions, data={
        "mode": "subscription", "line_items[0][price]": PRICE, "line_items[0][quantity]": "1",
        "subscription_data[trial_period_days]": "0"})
    assert status == 400 and body["error"]["param"] == "subscription_data[trial_period_days]"
    status, _, body = await simulator.raw("POST", sessions, data={"mode": "subscription", "colour": "blue"})
    assert status == 400 and body["error"]["code"] == "parameter_unknown" and body["error"]["param"] == "colour"

    status, headers, body = await simulator.raw("GET", "/v1/balance", key=None)
    assert status == 401 and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith("You did not provide an API key.")
    status, _, body = await simulator.raw("GET", "/v1/balance", key="sk_test_guessedkey9876")
    assert status == 401 and body["error"]["message"] == "Invalid API Key provided: sk_test_**********9876"
    status, _, body = await simulator.raw("GET", "/v1/charges")
    assert status == 404 and body["error"]["message"].startswith("Unrecognized request URL (GET: /v1/charges)")


async def test_the_checkout_page_is_a_prefilled_form(payments, simulator):
    checkout = await payments.create_checkout(**checkout_args(email="o'brien+1@acme.com"))
    async with aiohttp.ClientSession() as s, s.get(checkout.url) as r:
        assert r.status == 200 and r.content_type == "text/html"
        page = await r.text()
    assert "o&#x27;brien+1@acme.com" in page and PRICE in page and "7-day free trial" in page
    assert '<form method="post"' in page and page.count('type="submit"') == 1 and 'id="submit"' in page
    for name, value in (("cardNumber", "4242 4242 4242 4242"), ("cardExpiry", "12 / 34"), ("cardCvc", "123")):
        assert re.search(rf'name="{name}"[^>]*value="{re.escape(value)}"', page), name
    assert 'href="https://app.example.com/billing/cancel"' in page
    async with aiohttp.ClientSession() as s, s.get(f"{simulator.url}/c/pay/cs_test_nope") as r:
        assert r.status == 404


async def test_a_good_card_starts_the_trial_with_three_signed_events(payments, simulator, receiver):
    checkout = await payments.create_checkout(**checkout_args())
    status, headers, _ = await pay(checkout.url, GOOD)
    assert status == 303
    assert headers["Location"] == f"https://app.example.com/billing/done?session={checkout.id}"
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert (session["status"], session["payment_status"]) == ("complete", "no_payment_required")
    sub_id, customer_id = session["subscription"], session["customer"]
    assert sub_id.startswith("sub_") and customer_id.startswith("cus_")

    records = await receiver.wait_for(sub_id, 3)  # the session's, the subscription's and its invoice's
    assert [r["event"]["type"] for r in records] == ["checkout.session.completed", "customer.subscription.created",
                                                     "invoice.paid"]
    for record in records:
        headers = record["headers"]
        assert headers["Content-Type"] == "application/json; charset=utf-8"
        assert headers["User-Agent"] == "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
        event = parse_event(record["body"], headers[SIGNATURE_HEADER], SECRET)
        assert event.id.startswith("evt_") and event.livemode is False and event.api_version
        assert event.pending_webhooks == 1 and event.data.object.id == record["event"]["data"]["object"]["id"]

    done, created, paid = (r["event"]["data"]["object"] for r in records)
    assert done["id"] == checkout.id and done["status"] == "complete" and done["customer"] == customer_id
    assert done["subscription"] == sub_id and done["client_reference_id"] == "biz_42"
    assert done["metadata"] == {"business_id": "biz_42"}
    assert created["status"] == "trialing" and created["metadata"] == {"business_id": "biz_42"}
    assert created["trial_end"] - created["trial_start"] == 7 * DAY and created["customer"] == customer_id
    assert [i["price"]["id"] for i in created["items"]["data"]] == [PRICE]
    assert subscription_period(created) == (created["trial_start"], created["trial_end"])
    assert paid["billing_reason"] == "subscription_create" and paid["status"] == "paid"
    assert (paid["amount_due"], paid["amount_paid"]) == (0, 0) and invoice_subscription_id(paid) == sub_id
    assert created["latest_invoice"] == paid["id"]

    now = await payments.get_subscription(sub_id)
    assert now["id"] == sub_id and now["status"] == "trialing" and now["object"] == "subscription"
    status, _, customer = await simulator.raw("GET", f"/v1/customers/{customer_id}")
    assert status == 200 and customer["email"] == "owner@acme-plumbing.com"
    # Paying again is refused: the session is complete.
    assert (await pay(checkout.url, GOOD))[0] == 409

    # Forged, tampered, replayed and malformed deliveries are refused.
    body, header = records[0]["body"], records[0]["headers"][SIGNATURE_HEADER]
    with pytest.raises(InvalidWebhook):
        parse_event(body, header, "whsec_someone_else")
    with pytest.raises(InvalidWebhook):
        parse_event(body.replace(b"biz_42", b"biz_43"), header, SECRET)
    with pytest.raises(InvalidWebhook, match="tolerance"):
        parse_event(body, sign_payload(body, SECRET, int(time.time()) - 600), SECRET)
    with pytest.raises(InvalidWebhook):
        parse_event(body, "", SECRET)
    with pytest.raises(InvalidWebhook, match="not JSON"):
        parse_event(b"<xml/>", sign_payload(b"<xml/>", SECRET, int(time.time())), SECRET)
    assert parse_event(body, sign_payload(body, SECRET, int(time.time())), SECRET).type == \
        "checkout.session.completed"


async def test_declined_and_invalid_cards(payments, simulator, receiver):
    checkout = await payments.create_checkout(**checkout_args())
    status, _, page = await pay(checkout.url, DECLINED)
    assert status == 402 and "Your card was declined." in page and 'id="error"' in page
    status, _, page = await pay(checkout.url, NO_FUNDS)
    assert status == 402 and "Your card was declined." in page and "insufficient funds" in page
    assert 'value="4000 0000 0000 9995"' in page  # what was typed stays in the form
    for number in ("1234 5678", "4242 4242 4242 4241", "4242 4242 4242 42424"):
        status, _, page = await pay(checkout.url, number)
        assert status == 400 and "Your card number is invalid." in page, number
    status, _, page = await pay(checkout.url, GOOD, expiry="01 / 20")
    assert status == 400 and "expiration year is in the past" in page

    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert session["status"] == "open" and session["customer"] is None
    await asyncio.sleep(0.1)
    assert [e for e in await simulator.control("GET", "/events") if e["object_id"] == checkout.id] == []


async def test_advancing_renews_the_subscription(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    trialing = await payments.get_subscription(sub_id)

    step = await simulator.advance(sub_id)
    assert step["moment"] == "trial_end" and len(step["events"]) == 2
    records = (await receiver.wait_for(sub_id, 5))[3:]
    assert [r["event"]["id"] for r in records] == step["events"]
    assert [r["event"]["type"] for r in records] == ["invoice.paid", "customer.subscription.updated"]
    invoice, updated = (r["event"]["data"]["object"] for r in records)
    assert invoice["billing_reason"] == "subscription_cycle" and invoice["amount_paid"] == 4900
    assert invoice["status"] == "paid" and invoice_subscription_id(invoice) == sub_id
    assert updated["status"] == "active" and updated["latest_invoice"] == invoice["id"]
    start, end = subscription_period(updated)
    assert start == trialing["trial_end"] and 28 * DAY <= end - start <= 31 * DAY
    previous = records[1]["event"]["data"]["previous_attributes"]
    assert previous["status"] == "trialing" and previous["latest_invoice"] == trialing["latest_invoice"]
    assert previous["items"]["data"][0]["current_period_end"] == trialing["trial_end"]

    step = await simulator.advance(sub_id)
    assert step["moment"] == "renewal"
    records = (await receiver.wait_for(sub_id, 7))[5:]
    assert [r["event"]["type"] for r in records] == ["invoice.paid", "customer.subscription.updated"]
    assert "status" not in records[1]["event"]["data"]["previous_attributes"]  # it stayed active
    assert subscription_period(await payments.get_subscription(sub_id))[0] == end


async def test_a_card_that_fails_later_ends_in_cancellation(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver, FAILS_LATER)
    assert (await payments.get_subscription(sub_id))["status"] == "trialing"  # the card attached

    assert (await simulator.advance(sub_id))["moment"] == "trial_end"
    records = (await receiver.wait_for(sub_id, 5))[3:]
    assert [r["event"]["type"] for r in records] == ["invoice.payment_failed", "customer.subscription.updated"]
    invoice, updated = (r["event"]["data"]["object"] for r in records)
    assert invoice["status"] == "open" and invoice["attempt_count"] == 1 and invoice["next_payment_attempt"]
    assert updated["status"] == "past_due"
    assert records[1]["event"]["data"]["previous_attributes"]["status"] == "trialing"

    for n in (2, 3):
        assert (await simulator.advance(sub_id))["moment"] == "retry"
        record = (await receiver.wait_for(sub_id, 4 + n))[-1]
        assert record["event"]["type"] == "invoice.payment_failed"
        assert record["event"]["data"]["object"]["attempt_count"] == n
    step = await simulator.advance(sub_id)
    assert step["moment"] == "retry"
    records = (await receiver.wait_for(sub_id, 9))[-2:]
    assert [r["event"]["type"] for r in records] == ["invoice.payment_failed", "customer.subscription.deleted"]
    assert records[0]["event"]["data"]["object"]["next_payment_attempt"] is None
    deleted = records[1]["event"]["data"]["object"]
    assert deleted["status"] == "canceled" and deleted["cancellation_details"]["reason"] == "payment_failed"
    assert (await payments.get_subscription(sub_id))["status"] == "canceled"
    await simulator.control("POST", f"/subscriptions/{sub_id}/advance", expect=409)


async def test_a_switched_card_fails_then_recovers(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": True})
    await simulator.advance(sub_id)
    assert (await receiver.wait_for(sub_id, 5))[-1]["event"]["data"]["object"]["status"] == "past_due"
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": False})
    await simulator.advance(sub_id)
    records = (await receiver.wait_for(sub_id, 7))[-2:]
    assert [r["event"]["type"] for r in records] == ["invoice.paid", "customer.subscription.updated"]
    assert records[1]["event"]["data"]["object"]["status"] == "active"
    assert records[1]["event"]["data"]["previous_attributes"] == {"status": "past_due"}
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": "yes"}, expect=400)


async def test_cancel_through_the_api(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    canceled = await payments.cancel_subscription(sub_id)
    assert canceled["status"] == "canceled" and canceled["canceled_at"] and canceled["ended_at"]
    record = (await receiver.wait_for(sub_id, 4))[-1]
    assert record["event"]["type"] == "customer.subscription.deleted"
    assert record["event"]["data"]["object"]["cancellation_details"]["reason"] == "cancellation_requested"
    assert record["event"]["request"]["id"].startswith("req_")
    with pytest.raises(PaymentsError) as err:  # Stripe: a canceled subscription is no longer found to cancel
        await payments.cancel_subscription(sub_id)
    assert (err.value.status, err.value.code) == (404, "resource_missing")
    assert (await payments.get_subscription(sub_id))["status"] == "canceled"


async def test_a_refused_delivery_is_retried_and_can_be_resent(payments, simulator, receiver):
    receiver.fail_next = 1
    checkout = await payments.create_checkout(**checkout_args())
    assert (await pay(checkout.url, GOOD))[0] == 303
    first = (await receiver.wait_for(checkout.id, 1))[0]["event"]
    tries = [r for r in receiver.requests if r["event"]["id"] == first["id"]]
    assert [r["accepted"] for r in tries] == [False, True]
    assert tries[0]["body"] == tries[1]["body"]  # the same event, signed afresh
    view = next(e for e in await simulator.control("GET", "/events") if e["id"] == first["id"])
    assert view["status"] == "succeeded" and [a["status"] for a in view["attempts"]] == [500, 200]

    resent = await simulator.control("POST", f"/events/{first['id']}/resend")
    assert [a["manual"] for a in resent["attempts"]] == [False, False, True] and resent["status"] == "succeeded"
    copies = [r for r in receiver.requests if r["event"]["id"] == first["id"] and r["accepted"]]
    assert len(copies) == 2 and copies[0]["body"] == copies[1]["body"]  # a duplicate for the receiver to drop
    status, _, event = await simulator.raw("GET", f"/v1/events/{first['id']}")
    assert status == 200 and event["type"] == "checkout.session.completed"


async def test_faults_timeouts_and_retries(payments, simulator):
    assert (await payments.check())["object"] == "balance"
    for status in (500, 503, 429):
        await simulator.control("POST", "/faults", {"method": "GET", "path": "/v1/balance", "status": status})
        with pytest.raises(PaymentsError) as err:
            await payments.check()
        assert err.value.status == status and "Injected" not in err.value.message
        assert err.value.message == f"payments provider failed (GET /v1/balance: {status})"
    assert err.value.code == "rate_limit"

    await simulator.control("POST", "/faults", {"path": "/v1/balance", "status": 503, "times": None})
    for _ in range(2):
        with pytest.raises(PaymentsError):
            await payments.check()
    assert (await simulator.control("DELETE", "/faults")) == {"cleared": 1}
    assert (await payments.check())["object"] == "balance"

    # The package repeats a POST that timed out, with the same idempotency key: one session, not two.
    patient = StripePayments(simulator.url, API_KEY, timeout=0.3, max_network_retries=1)
    sessions = simulator.app[STATE].sessions
    try:
        before = len(sessions)
        await simulator.control("POST", "/faults", {"method": "POST", "path": "/v1/checkout/sessions", "status": 0,
                                                    "delay_seconds": 0.5})
        checkout = await patient.create_checkout(**checkout_args())
        assert len(sessions) == before + 1 and checkout.id in sessions
        assert (await simulator.attempts("POST", "/v1/checkout/sessions"))[-2:] == [200, 200]  # the 2nd: replayed
    finally:
        await patient.close()

    await simulator.control("POST", "/faults", {"path": "/v1/balance", "status": 0, "delay_seconds": 0.5})
    quick = StripePayments(simulator.url, API_KEY, timeout=0.2, max_network_retries=0)
    try:
        with pytest.raises(PaymentsError) as err:
            await quick.check()
        assert err.value.status is None and err.value.message == "payments provider unreachable (GET /v1/balance): " \
                                                                  "timed out"
    finally:
        await quick.close()
    body = await simulator.control("POST", "/faults", {"status": 200, "loud": True}, expect=400)
    assert "property loud should not exist" in body["error"]["message"]


async def test_wrong_key_and_unreachable_provider():
    sim = Simulator(None)
    wrong = StripePayments(sim.url, "sk_test_wrongkey123456", max_network_retries=0)
    gone = StripePayments(f"http://127.0.0.1:{free_port()}", API_KEY, max_network_retries=0)
    try:
        async with serving(sim.app, sim.port):
            with pytest.raises(PaymentsError) as err:
                await wrong.check()
            assert (err.value.status, err.value.message) == (401, "payments provider rejected our credentials")
            assert "sk_test_wrongkey123456" not in repr(wrong) and "wrongkey" not in str(err.value)
            with pytest.raises(PaymentsError) as err:
                await gone.check()
            assert err.value.status is None and err.value.code is None
            assert err.value.message == "payments provider unreachable (GET /v1/balance): could not connect"
            # Without a webhook URL, events are recorded but not sent.
            good = StripePayments(sim.url, API_KEY, max_network_retries=0)
            checkout = await good.create_checkout(**checkout_args())
            await good.close()
            assert (await pay(checkout.url, GOOD))[0] == 303
            assert {e["status"] for e in await sim.control("GET", "/events")} == {"not_sent"}
            assert await sim.control("POST", "/reset") == {"reset": True}
            assert await sim.control("GET", "/events") == []
    finally:
        await wrong.close()
        await gone.close()


async def test_time_passes_on_its_own(receiver):
    sim = Simulator(receiver.url, time_scale=1e-6)  # a 7-day trial in 0.6 s, a month in 2.6 s
    client = StripePayments(sim.url, API_KEY, max_network_retries=0)
    try:
        async with serving(sim.app, sim.port):
            checkout = await client.create_checkout(**checkout_args())
            assert (await pay(checkout.url, GOOD))[0] == 303
            _, _, session = await sim.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
            records = await receiver.wait_for(session["subscription"], 6, timeout=3.0)
            # Three days before the trial ends Stripe says so; then the first charge, and the subscription active.
            assert [r["event"]["type"] for r in records][3:] == [
                "customer.subscription.trial_will_end", "invoice.paid", "customer.subscription.updated"]
            assert records[5]["event"]["data"]["object"]["status"] == "active"
    finally:
        await client.close()


def test_the_command_line(tmp_path):
    port = free_port()
    log = tmp_path / "payments-simulator.log"
    env = {"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin", "PAYMENTS_API_KEY": API_KEY,
           "PAYMENTS_SIM_PORT": str(port), "PAYMENTS_SIM_TIME_SCALE": "0.001"}
    refused = subprocess.run([sys.executable, "-m", "providers.payments.simulator", "--webhook-url",
                              "http://127.0.0.1:9/hook"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode == 2 and "whsec_" in refused.stderr
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "providers.payments.simulator"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, 20, proc, "payments simulator", log)

        async def check() -> dict:
            client = StripePayments(f"http://127.0.0.1:{port}", API_KEY, max_network_retries=0)
            try:
                return await client.check()
            finally:
                await client.close()

        assert asyncio.run(check())["object"] == "balance"
    finally:
        stop_process(proc, signal.SIGTERM, 10)
    assert proc.returncode == 0
    assert f"payments simulator listening on http://127.0.0.1:{port}" in log.read_text()
