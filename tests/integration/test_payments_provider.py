"""The real payments client (`StripePayments`, the official `stripe` package) and webhook parser against the
simulator served in-process on a free port: checkout sessions in the pinned API version's shape, the account's
prices, idempotency as Stripe keeps it, the hosted checkout page with Stripe's test cards (declines, test mode's
refusal of real cards, 3-D Secure), signed events as a subscription starts, renews (drafted, then charged an
hour later), fails into dunning as the account's settings say and is canceled, their order and out-of-order
delivery, webhook retries, faults in Stripe's statuses, credentials, and the simulator's command line."""
import asyncio
import json
import re
import signal
import subprocess
import sys
import time
import typing
from pathlib import Path

import aiohttp
import pytest
import stripe
from aiohttp import web
from aiohttp.test_utils import TestServer

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.payments.adapter import Checkout, PaymentsError, invoice_subscription_id, subscription_period
from providers.payments.client import StripePayments
from providers.payments.simulator import cards
from providers.payments.simulator.app import STATE, build_app
from providers.payments.simulator.billing import Dunning
from providers.payments.webhooks import SIGNATURE_HEADER, InvalidWebhook, parse_event, sign_payload
from tests.integration.servers import serving
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk_test_51SimulatorKey0123456789abcdef"
SECRET = "whsec_simulator0123456789abcdef"
PRICE = "price_1SwitchboardPro"
PRICES = {PRICE: (4900, "Switchboard Pro"), "price_1SwitchboardMax": (14900, "Switchboard Max")}
DAY = 86400
GOOD, DECLINED, NO_FUNDS, FAILS_LATER = "4242 4242 4242 4242", "4000000000000002", "4000 0000 0000 9995", \
    "4000000000000341"
REAL_CARD = "4532 7153 8474 1197"  # Luhn-valid, not one of Stripe's test cards
CHECKOUT_EVENTS = ["customer.created", "customer.subscription.created", "invoice.created", "invoice.finalized",
                   "invoice.paid", "invoice.payment_succeeded", "checkout.session.completed"]


class Receiver:
    """Our webhook endpoint: records every request as it arrived; can refuse the next ones with 500."""

    def __init__(self):
        self.requests: list[dict] = []
        self.fail_next = 0
        self.refused_types: set[str] = set()  # event types refused until cleared
        self.app = web.Application()
        self.app.router.add_post("/stripe", self.webhook)
        self.server: TestServer | None = None  # while served

    async def webhook(self, request: web.Request) -> web.Response:
        body = await request.read()
        record = {"body": body, "headers": dict(request.headers), "event": json.loads(body), "accepted": True}
        self.requests.append(record)
        if self.fail_next or record["event"]["type"] in self.refused_types:
            self.fail_next = max(self.fail_next - 1, 0)
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


def kinds(records: list[dict]) -> list[str]:
    return [r["event"]["type"] for r in records]


class Simulator:
    def __init__(self, webhook_url: str | None, time_scale: float = 0.001, **options):
        self.port = free_port()
        self.app = build_app(API_KEY, webhook_url=webhook_url, webhook_secret=SECRET, public_url=self.url,
                             time_scale=time_scale, prices=PRICES, **options)

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


async def authenticate(page_url: str, page: str, result: str) -> tuple[int, dict, str]:
    """Answer the bank's 3-D Secure challenge page ("complete" or "fail")."""
    action = re.search(r'<form method="post" action="([^"]+)"', page).group(1)
    challenge = re.search(r'name="challenge" value="([^"]+)"', page).group(1)
    async with aiohttp.ClientSession() as s, s.post(str(aiohttp.helpers.URL(page_url).join(
            aiohttp.helpers.URL(action))), data={"challenge": challenge, "result": result},
            allow_redirects=False) as r:
        return r.status, dict(r.headers), await r.text()


def refusal_codes(page: str) -> tuple[str | None, str | None]:
    """The code and decline code the page's error carries."""
    found = re.search(r'<div id="error"[^>]*>', page)
    assert found, page
    code = re.search(r'data-code="([^"]+)"', found.group(0))
    decline = re.search(r'data-decline-code="([^"]+)"', found.group(0))
    return code and code.group(1), decline and decline.group(1)


def nullable(annotation) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith("Optional")
    if isinstance(annotation, typing.ForwardRef):
        return annotation.__forward_arg__.startswith("Optional")
    return type(None) in typing.get_args(annotation)


def assert_shape(obj: dict, cls: type, where: str = "") -> None:
    """`obj` has the fields the pinned package's type declares for this API version, and no others: every
    field the type does not allow to be null is there, nothing the version does not know is."""
    where = where or cls.__name__
    declared = {k: v for k, v in cls.__annotations__.items() if not k.startswith("_") and k != "OBJECT_NAME"}
    assert not set(obj) - set(declared), f"{where}: not in the pinned API version: {sorted(set(obj) - set(declared))}"
    required = {k for k, v in declared.items() if not nullable(v)}
    assert not required - set(obj), f"{where}: missing {sorted(required - set(obj))}"
    for name, inner in getattr(cls, "_inner_class_types", {}).items():
        value = obj.get(name)
        for n, element in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(element, dict):
                assert_shape(element, inner, f"{where}.{name}[{n}]")


def assert_object_shape(obj: dict) -> None:
    types = {"checkout.session": stripe.checkout.Session, "subscription": stripe.Subscription,
             "invoice": stripe.Invoice, "customer": stripe.Customer, "price": stripe.Price,
             "product": stripe.Product}
    assert_shape(obj, types[obj["object"]])
    for item in (obj.get("items") or {}).get("data", []) if obj["object"] == "subscription" else []:
        assert_shape(item, stripe.SubscriptionItem)
        assert_shape(item["price"], stripe.Price)
    for line in obj["lines"]["data"] if obj["object"] == "invoice" else []:
        assert_shape(line, stripe.InvoiceLineItem)


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
    await simulator.control("POST", "/settings", {"retries": {"mode": "smart", "attempts": 8, "window_days": 14},
                                                  "final_action": "cancel", "delivery": "ordered"})


def checkout_args(**overrides) -> dict:
    return {"business_id": "biz_42", "email": "owner@acme-plumbing.com", "price_id": PRICE, "trial_days": 7,
            "success_url": "https://app.example.com/billing/done?session={CHECKOUT_SESSION_ID}",
            "cancel_url": "https://app.example.com/billing/cancel", "idempotency_key": f"checkout-{time.time_ns()}",
            **overrides}


async def subscribe(payments, simulator, receiver, card: str = GOOD) -> tuple[Checkout, str]:
    """Checkout through the page with `card` (its 3-D Secure challenge completed); the session and its
    subscription, once the subscription's 6 events of the checkout arrived."""
    checkout = await payments.create_checkout(**checkout_args())
    status, _, text = await pay(checkout.url, card)
    if status == 200 and "3D Secure" in text:
        status, _, text = await authenticate(checkout.url, text, "complete")
    assert status == 303, text
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    await receiver.wait_for(session["subscription"], 6)
    return checkout, session["subscription"]


async def test_checkout_session_shape_and_idempotency(payments, simulator):
    before = int(time.time())
    args = checkout_args()
    checkout = await payments.create_checkout(**args)
    assert re.fullmatch(r"cs_test_[A-Za-z0-9]{58}", checkout.id)
    assert checkout.url == f"{simulator.url}/c/pay/{checkout.id}"
    assert before + DAY <= checkout.expires_at <= int(time.time()) + DAY

    status, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert status == 200 and session["object"] == "checkout.session" and session["livemode"] is False
    assert_object_shape(session)  # the pinned API version's Checkout Session, nothing older
    assert session["ui_mode"] == "hosted_page" and session["allowed_payment_method_types"] is None
    assert session["payment_method_types"] == ["card"]  # the account's configuration, computed
    assert session["payment_method_configuration_details"]["id"].startswith("pmc_")
    assert (session["mode"], session["status"], session["payment_status"]) == ("subscription", "open", "unpaid")
    assert session["customer_email"] == "owner@acme-plumbing.com" and session["client_reference_id"] == "biz_42"
    assert session["metadata"] == {"business_id": "biz_42"} and session["payment_method_collection"] == "always"
    assert session["success_url"] == args["success_url"] and session["cancel_url"] == args["cancel_url"]
    assert session["customer"] is None and session["subscription"] is None and session["amount_total"] == 0

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

    # Sent, the allowed payment method types filter the configuration's (cards only here).
    sessions_path = "/v1/checkout/sessions"
    base = {"mode": "subscription", "line_items[0][price]": PRICE, "line_items[0][quantity]": "1"}
    status, _, allowed = await simulator.raw("POST", sessions_path, data={
        **base, "allowed_payment_method_types[0]": "card", "allowed_payment_method_types[1]": "link"})
    assert status == 200 and allowed["allowed_payment_method_types"] == ["card", "link"]
    # Older versions' parameters and UI modes are not this version's.
    status, _, body = await simulator.raw("POST", sessions_path, data={**base, "payment_method_types[0]": "card"})
    assert status == 400 and (body["error"]["code"], body["error"]["param"]) == ("parameter_unknown",
                                                                                 "payment_method_types")
    status, _, body = await simulator.raw("POST", sessions_path, data={**base, "ui_mode": "hosted"})
    assert status == 400 and body["error"]["param"] == "ui_mode"
    status, _, body = await simulator.raw("POST", sessions_path, data={**base, "ui_mode": "embedded_page"})
    assert status == 400 and "not simulated" in body["error"]["message"]


async def test_idempotency_keeps_what_ran_for_a_day(simulator, monkeypatch):
    sessions = "/v1/checkout/sessions"
    base = {"mode": "subscription", "line_items[0][price]": PRICE, "line_items[0][quantity]": "1"}
    key = {"Idempotency-Key": f"k-{time.time_ns()}"}

    # Refused for its parameters, the request never ran: the key is still unused.
    status, _, body = await simulator.raw("POST", sessions, data={"mode": "subscription"}, headers=key)
    assert status == 400 and body["error"]["code"] == "parameter_missing"
    status, headers, first = await simulator.raw("POST", sessions, data=base, headers=key)
    assert status == 200 and "Idempotent-Replayed" not in headers
    status, headers, again = await simulator.raw("POST", sessions, data=base, headers=key)
    assert (status, again["id"], headers["Idempotent-Replayed"]) == (200, first["id"], "true")
    assert headers["Original-Request"].startswith("req_") and headers["Original-Request"] != headers["Request-Id"]
    # Another endpoint with the same key is refused, as are other parameters.
    status, _, body = await simulator.raw("POST", f"{sessions}/{first['id']}/expire", headers=key)
    assert status == 400 and body["error"]["type"] == "idempotency_error" and "same endpoint" in \
        body["error"]["message"]

    # A refusal for an object's state ran: it is kept, and answered again.
    expired_key = {"Idempotency-Key": f"k-{time.time_ns()}"}
    assert (await simulator.raw("POST", f"{sessions}/{first['id']}/expire"))[0] == 200
    status, _, body = await simulator.raw("POST", f"{sessions}/{first['id']}/expire", headers=expired_key)
    assert status == 400 and "can be expired" in body["error"]["message"]
    status, headers, replayed = await simulator.raw("POST", f"{sessions}/{first['id']}/expire", headers=expired_key)
    assert (status, replayed, headers["Idempotent-Replayed"]) == (400, body, "true")

    # So is a 500: the retry gets the same 500, not a second attempt.
    state, failing = simulator.app[STATE], {"Idempotency-Key": f"k-{time.time_ns()}"}

    def broken(**_):
        raise RuntimeError("the database is down")
    monkeypatch.setattr(state, "new_session", broken)
    assert (await simulator.raw("POST", sessions, data=base, headers=failing))[0] == 500
    monkeypatch.undo()
    status, headers, body = await simulator.raw("POST", sessions, data=base, headers=failing)
    assert (status, body["error"]["type"], headers["Idempotent-Replayed"]) == (500, "api_error", "true")

    # While the first request with a key still runs, the same key is 409 (and the stripe package retries it).
    running = {"Idempotency-Key": f"k-{time.time_ns()}"}
    state.idempotency.start(running["Idempotency-Key"], f"POST {sessions}", "x", "req_first", time.time())
    status, _, body = await simulator.raw("POST", sessions, data=base, headers=running)
    assert status == 409 and (body["error"]["type"], body["error"]["code"]) == ("idempotency_error",
                                                                                "idempotency_key_in_use")

    # A day later the key is pruned: the same key with other parameters is a new request.
    state.idempotency.keys[key["Idempotency-Key"]].at -= DAY
    status, headers, later = await simulator.raw("POST", sessions, data={**base, "client_reference_id": "b2"},
                                                 headers=key)
    assert status == 200 and later["id"] != first["id"] and "Idempotent-Replayed" not in headers


async def test_stripes_refusals_and_error_shape(payments, simulator):
    for unknown in ("plan_pro", "price_not_in_this_account"):
        with pytest.raises(PaymentsError) as err:
            await payments.create_checkout(**checkout_args(price_id=unknown))
        assert (err.value.status, err.value.code, err.value.message) == (400, "resource_missing",
                                                                         f"No such price: '{unknown}'")
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
                              "doc_url": "https://stripe.com/docs/error-codes/parameter-missing"}}
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


async def test_the_accounts_prices(payments, simulator):
    status, _, price = await simulator.raw("GET", f"/v1/prices/{PRICE}")
    assert status == 200 and (price["unit_amount"], price["currency"], price["recurring"]["interval"]) == (
        4900, "usd", "month")
    assert_object_shape(price)
    status, _, product = await simulator.raw("GET", f"/v1/products/{price['product']}")
    assert status == 200 and product["name"] == "Switchboard Pro" and product["default_price"] == PRICE
    assert_object_shape(product)
    assert (await simulator.raw("GET", "/v1/prices/price_unknown"))[0] == 404

    # A new price, made through the API, is one of the account's from then on.
    status, _, made = await simulator.raw("POST", "/v1/prices", data={
        "currency": "usd", "unit_amount": "9900", "recurring[interval]": "month", "product_data[name]": "Enterprise"})
    assert status == 200 and made["id"].startswith("price_") and made["unit_amount"] == 9900
    checkout = await payments.create_checkout(**checkout_args(price_id=made["id"], trial_days=0))
    async with aiohttp.ClientSession() as s, s.get(checkout.url) as r:
        page = await r.text()
    assert "$99.00 per month" in page and "Enterprise" in page
    status, _, body = await simulator.raw("POST", "/v1/prices", data={
        "currency": "usd", "unit_amount": "100", "recurring[interval]": "month", "product": "prod_missing"})
    assert status == 400 and body["error"]["code"] == "resource_missing" and body["error"]["param"] == "product"
    status, _, body = await simulator.raw("POST", "/v1/prices", data={
        "currency": "usd", "unit_amount": "100", "recurring[interval]": "year", "product": price["product"]})
    assert status == 400 and "not simulated" in body["error"]["message"]


async def test_the_checkout_page_is_a_prefilled_form(payments, simulator):
    checkout = await payments.create_checkout(**checkout_args(email="o'brien+1@acme.com"))
    async with aiohttp.ClientSession() as s, s.get(checkout.url) as r:
        assert r.status == 200 and r.content_type == "text/html"
        page = await r.text()
    assert "o&#x27;brien+1@acme.com" in page and PRICE in page and "7-day free trial" in page
    assert "Switchboard Pro" in page and "Then $49.00 per month" in page
    assert '<form method="post"' in page and page.count('type="submit"') == 1 and 'id="submit"' in page
    for name, value in (("cardNumber", "4242 4242 4242 4242"), ("cardExpiry", "12 / 34"), ("cardCvc", "123")):
        assert re.search(rf'name="{name}"[^>]*value="{re.escape(value)}"', page), name
    assert 'href="https://app.example.com/billing/cancel"' in page
    async with aiohttp.ClientSession() as s, s.get(f"{simulator.url}/c/pay/cs_test_nope") as r:
        assert r.status == 404


async def test_a_good_card_starts_the_trial_with_stripes_events(payments, simulator, receiver):
    checkout = await payments.create_checkout(**checkout_args())
    status, headers, _ = await pay(checkout.url, GOOD)
    assert status == 303
    assert headers["Location"] == f"https://app.example.com/billing/done?session={checkout.id}"
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert (session["status"], session["payment_status"], session["url"]) == ("complete", "no_payment_required", None)
    sub_id, customer_id = session["subscription"], session["customer"]
    assert sub_id.startswith("sub_") and customer_id.startswith("cus_")

    await receiver.wait_for(sub_id, 6)
    records = [r for r in receiver.requests if r["accepted"] and
               ({sub_id, customer_id} & related_ids(r["event"]))]
    assert kinds(records) == CHECKOUT_EVENTS
    for record in records:
        headers = record["headers"]
        assert headers["Content-Type"] == "application/json; charset=utf-8"
        assert headers["User-Agent"] == "Stripe/1.0 (+https://stripe.com/docs/webhooks)"
        event = parse_event(record["body"], headers[SIGNATURE_HEADER], SECRET)
        assert event.id.startswith("evt_") and event.livemode is False and event.api_version == stripe.api_version
        assert event.pending_webhooks == 1 and event.data.object.id == record["event"]["data"]["object"]["id"]
        assert_object_shape(record["event"]["data"]["object"])
    # The session completes after the subscription and its first invoice: a later second.
    created = [r["event"]["created"] for r in records]
    assert created[-1] == created[0] + 1 and len(set(created[:-1])) == 1

    objects = {r["event"]["type"]: r["event"]["data"]["object"] for r in records}
    done, sub = objects["checkout.session.completed"], objects["customer.subscription.created"]
    assert done["id"] == checkout.id and done["status"] == "complete" and done["customer"] == customer_id
    assert done["subscription"] == sub_id and done["client_reference_id"] == "biz_42"
    assert done["metadata"] == {"business_id": "biz_42"}
    assert sub["status"] == "trialing" and sub["metadata"] == {"business_id": "biz_42"}
    assert sub["trial_end"] - sub["trial_start"] == 7 * DAY and sub["customer"] == customer_id
    assert [i["price"]["id"] for i in sub["items"]["data"]] == [PRICE]
    assert subscription_period(sub) == (sub["trial_start"], sub["trial_end"])
    assert objects["invoice.created"]["status"] == "draft" and objects["invoice.finalized"]["status"] == "open"
    paid = objects["invoice.paid"]
    assert paid["billing_reason"] == "subscription_create" and paid["status"] == "paid"
    assert (paid["amount_due"], paid["amount_paid"]) == (0, 0) and invoice_subscription_id(paid) == sub_id
    assert sub["latest_invoice"] == paid["id"]

    now = await payments.get_subscription(sub_id)
    assert now["id"] == sub_id and now["status"] == "trialing" and now["object"] == "subscription"
    status, _, customer = await simulator.raw("GET", f"/v1/customers/{customer_id}")
    assert status == 200 and customer["email"] == "owner@acme-plumbing.com"
    assert_object_shape(customer)
    # Paying again is refused: the session is complete.
    assert (await pay(checkout.url, GOOD))[0] == 409

    # Forged, tampered, replayed and malformed deliveries are refused.
    body, header = records[-1]["body"], records[-1]["headers"][SIGNATURE_HEADER]
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


async def test_stripes_test_cards_by_brand(payments, simulator):
    for number, brand in (("4000056655665556", "visa"), ("5555555555554444", "mastercard"),
                          ("2223003122003222", "mastercard"), ("6011111111111117", "discover"),
                          ("36227206271667", "diners"), ("3566002020360505", "jcb"),
                          ("6205500000000000004", "unionpay"), (cards.AMEX, "amex")):
        checkout = await payments.create_checkout(**checkout_args())
        cvc = "1234" if brand == "amex" else "123"
        status, _, page = await pay(checkout.url, number, cvc=cvc)
        assert status == 303, (number, page)
        _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
        assert simulator.app[STATE].customers[session["customer"]]["_card"]["brand"] == brand
    # Every number of the documented table is a valid card number.
    assert all(cards.luhn_ok(n) for n in cards.TEST_CARDS if n != "4242424242424241")

    checkout = await payments.create_checkout(**checkout_args())
    status, _, page = await pay(checkout.url, cards.AMEX, cvc="123")  # American Express takes 4 digits
    assert status == 400 and "security code is incomplete" in page
    status, _, page = await pay(checkout.url, GOOD, cvc="1234")
    assert status == 400 and "security code is invalid" in page
    # Test mode refuses a real card however valid its number.
    status, _, page = await pay(checkout.url, REAL_CARD)
    assert status == 402 and "used a non test (live) card" in page
    assert refusal_codes(page) == ("card_declined", "test_mode_live_card")


async def test_declined_and_invalid_cards(payments, simulator, receiver):
    checkout = await payments.create_checkout(**checkout_args())
    for number, message, codes in (
            (DECLINED, "Your card was declined.", ("card_declined", "generic_decline")),
            (NO_FUNDS, "Your card has insufficient funds.", ("card_declined", "insufficient_funds")),
            ("4000000000009987", "Your card was declined.", ("card_declined", "lost_card")),
            ("4000000000000069", "Your card has expired.", ("expired_card", "expired_card")),
            ("4000000000000127", "Your card&#x27;s security code is incorrect.", ("incorrect_cvc", "incorrect_cvc")),
            ("4000000000000119", "An error occurred while processing your card.", ("processing_error",
                                                                                  "processing_error"))):
        status, _, page = await pay(checkout.url, number)
        assert status == 402 and message in page and refusal_codes(page) == codes, number
    status, _, page = await pay(checkout.url, NO_FUNDS)
    assert 'value="4000 0000 0000 9995"' in page  # what was typed stays in the form
    status, _, page = await pay(checkout.url, "1234 5678")
    assert status == 400 and "Your card number is incomplete." in page
    for number in ("4242 4242 4242 4241", "4242 4242 4242 42424"):
        status, _, page = await pay(checkout.url, number)
        assert status == 400 and "Your card number is invalid." in page, number
    status, _, page = await pay(checkout.url, GOOD, expiry="01 / 20")
    assert status == 400 and "expiration year is in the past" in page

    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    assert session["status"] == "open" and session["customer"] is None
    await asyncio.sleep(0.1)
    assert [e for e in await simulator.control("GET", "/events") if e["object_id"] == checkout.id] == []


async def test_3d_secure_asks_the_customer_at_the_checkout(payments, simulator, receiver):
    # The bank's challenge failed: Stripe's message, nothing starts; completed: the trial starts.
    checkout = await payments.create_checkout(**checkout_args())
    status, _, challenge = await pay(checkout.url, cards.AUTHENTICATE_ONCE)
    assert status == 200 and "3D Secure 2 Test Page" in challenge and 'id="complete"' in challenge
    status, _, page = await authenticate(checkout.url, challenge, "fail")
    assert status == 402 and "unable to authenticate your payment method" in page
    assert refusal_codes(page)[0] == "setup_intent_authentication_failure"
    status, _, challenge = await pay(checkout.url, cards.AUTHENTICATE_ONCE)
    status, headers, _ = await authenticate(checkout.url, challenge, "complete")
    assert status == 303 and headers["Location"].startswith("https://app.example.com/billing/done")
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    sub_id = session["subscription"]
    await receiver.wait_for(sub_id, 6)
    # Set up with its authentication, the card pays the renewals off-session.
    await simulator.advance(sub_id)
    assert (await simulator.advance(sub_id))["moment"] == "payment"
    assert kinds((await receiver.wait_for(sub_id, 11))[-3:]) == ["invoice.finalized", "invoice.paid",
                                                                 "invoice.payment_succeeded"]

    # A card whose bank asks every time: each renewal waits for the customer (at the invoice's hosted page).
    _, sub_id = await subscribe(payments, simulator, receiver, cards.NEEDS_ACTION)
    await simulator.advance(sub_id)
    await simulator.advance(sub_id)
    records = (await receiver.wait_for(sub_id, 12))[-4:]
    assert kinds(records) == ["invoice.finalized", "invoice.payment_failed", "invoice.payment_action_required",
                              "customer.subscription.updated"]
    invoice = records[2]["event"]["data"]["object"]
    status, _, challenge = await pay(invoice["hosted_invoice_url"], cards.NEEDS_ACTION)
    assert status == 200 and "$49.00" in challenge
    status, _, page = await authenticate(invoice["hosted_invoice_url"], challenge, "complete")
    assert status == 200 and "The invoice is paid." in page
    assert (await payments.get_subscription(sub_id))["status"] == "active"


async def test_renewals_are_drafted_then_charged_an_hour_later(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    trialing = await payments.get_subscription(sub_id)

    step = await simulator.advance(sub_id)
    assert step["moment"] == "trial_end" and len(step["events"]) == 2
    records = (await receiver.wait_for(sub_id, 8))[6:]
    assert [r["event"]["id"] for r in records] == step["events"]
    assert kinds(records) == ["customer.subscription.updated", "invoice.created"]
    updated, draft = (r["event"]["data"]["object"] for r in records)
    assert updated["status"] == "active" and updated["latest_invoice"] == draft["id"]
    assert (draft["status"], draft["billing_reason"], draft["number"], draft["hosted_invoice_url"]) == (
        "draft", "subscription_cycle", None, None)
    assert draft["automatically_finalizes_at"] == trialing["trial_end"] + 3600
    start, end = subscription_period(updated)
    assert start == trialing["trial_end"] and 28 * DAY <= end - start <= 31 * DAY
    previous = records[0]["event"]["data"]["previous_attributes"]
    assert previous["status"] == "trialing" and previous["latest_invoice"] == trialing["latest_invoice"]
    assert previous["items"]["data"][0]["current_period_end"] == trialing["trial_end"]

    step = await simulator.advance(sub_id)
    assert step["moment"] == "payment"
    charged = (await receiver.wait_for(sub_id, 11))[8:]
    assert kinds(charged) == ["invoice.finalized", "invoice.paid", "invoice.payment_succeeded"]
    invoice = charged[1]["event"]["data"]["object"]
    assert invoice["id"] == draft["id"] and invoice["amount_paid"] == 4900 and invoice["status"] == "paid"
    assert invoice["status_transitions"]["finalized_at"] == start + 3600 and invoice["number"]
    # A later moment is a later second: the order the events happened in is in their `created`.
    assert charged[0]["event"]["created"] > records[-1]["event"]["created"]

    assert (await simulator.advance(sub_id))["moment"] == "renewal"
    records = (await receiver.wait_for(sub_id, 13))[11:]
    assert kinds(records) == ["customer.subscription.updated", "invoice.created"]
    assert "status" not in records[0]["event"]["data"]["previous_attributes"]  # it stayed active
    assert subscription_period(await payments.get_subscription(sub_id))[0] == end


async def test_the_finalization_waits_for_our_endpoint(receiver):
    sim = Simulator(receiver.url, time_scale=1e-4)  # an hour in 0.36 s; a webhook retry's minute in 6 ms
    client = StripePayments(sim.url, API_KEY, max_network_retries=0)
    try:
        async with serving(sim.app, sim.port):
            _, sub_id = await subscribe(client, sim, receiver)
            receiver.refused_types = {"invoice.created"}  # refused (and retried at 6, 30, 180, 720 ms...)
            await sim.advance(sub_id)
            created = await wait_until(lambda: sim.control("GET", "/events?type=invoice.created"),
                                       "the renewal's invoice.created", lambda got: len(got) == 2)
            await asyncio.sleep(0.5)  # past the hour, but it was not acknowledged: still a draft
            assert (await client.get_subscription(sub_id))["status"] == "active"
            assert (await sim.raw("GET", f"/v1/invoices/{created[-1]['object_id']}"))[2]["status"] == "draft"
            receiver.refused_types = set()
            records = await receiver.wait_for(sub_id, 11, timeout=10)
            acked = next(r for r in receiver.requests if r["accepted"] and
                         r["event"]["id"] == created[-1]["id"])
            finalized = next(r for r in records if r["event"]["type"] == "invoice.finalized"
                             and r["event"]["data"]["object"]["id"] == created[-1]["object_id"])
            assert receiver.requests.index(acked) < receiver.requests.index(finalized)
    finally:
        receiver.refused_types = set()
        await client.close()


async def test_a_card_that_fails_later_follows_the_dunning_settings(payments, simulator, receiver):
    assert await simulator.control("GET", "/settings") == {
        "retries": {"mode": "smart", "attempts": 8, "window_days": 14}, "final_action": "cancel",
        "delivery": "ordered"}  # Stripe's defaults
    await simulator.control("POST", "/settings", {"retries": {"mode": "custom", "days": [3, 5, 7]}})
    _, sub_id = await subscribe(payments, simulator, receiver, FAILS_LATER)
    assert (await payments.get_subscription(sub_id))["status"] == "trialing"  # the card attached

    assert (await simulator.advance(sub_id))["moment"] == "trial_end"
    assert (await simulator.advance(sub_id))["moment"] == "payment"
    records = (await receiver.wait_for(sub_id, 11))[8:]
    assert kinds(records) == ["invoice.finalized", "invoice.payment_failed", "customer.subscription.updated"]
    invoice, updated = records[1]["event"]["data"]["object"], records[2]["event"]["data"]["object"]
    assert invoice["status"] == "open" and invoice["attempt_count"] == 1
    assert invoice["next_payment_attempt"] == invoice["status_transitions"]["finalized_at"] + 3 * DAY
    assert updated["status"] == "past_due"
    assert records[2]["event"]["data"]["previous_attributes"] == {"status": "active"}
    assert records[2]["event"]["created"] > records[1]["event"]["created"]

    count, finalized, after = 11, invoice["status_transitions"]["finalized_at"], 3
    for n, days in ((2, 5), (3, 7)):  # each retry N days after the previous attempt
        assert (await simulator.advance(sub_id))["moment"] == "retry"
        count, after = count + 2, after + days
        failed, changed = (await receiver.wait_for(sub_id, count))[-2:]
        assert kinds([failed, changed]) == ["invoice.payment_failed", "invoice.updated"]
        assert failed["event"]["data"]["object"]["attempt_count"] == n
        assert failed["event"]["data"]["object"]["next_payment_attempt"] == finalized + after * DAY
        assert changed["event"]["data"]["previous_attributes"]["attempt_count"] == n - 1
    step = await simulator.advance(sub_id)
    assert step["moment"] == "retry"
    records = (await receiver.wait_for(sub_id, count + 3))[-3:]
    assert kinds(records) == ["invoice.payment_failed", "invoice.updated", "customer.subscription.deleted"]
    assert records[0]["event"]["data"]["object"]["next_payment_attempt"] is None
    deleted = records[2]["event"]["data"]["object"]
    assert deleted["status"] == "canceled" and deleted["cancellation_details"]["reason"] == "payment_failed"
    assert (await payments.get_subscription(sub_id))["status"] == "canceled"
    await simulator.control("POST", f"/subscriptions/{sub_id}/advance", expect=409)


async def test_smart_retries_and_the_other_final_actions(payments, simulator, receiver):
    # Stripe's default: 8 tries within 2 weeks (spread evenly by the simulator).
    _, sub_id = await subscribe(payments, simulator, receiver, FAILS_LATER)
    await simulator.advance(sub_id)
    await simulator.advance(sub_id)
    invoice = (await payments.open_invoice(sub_id))
    finalized = invoice["status_transitions"]["finalized_at"]
    assert invoice["next_payment_attempt"] == finalized + round(14 * DAY / 8)
    assert Dunning().schedule()[-1] == 14 * DAY

    # Mark unpaid: the last failure leaves the subscription unpaid, and its next invoices are drafted, not charged.
    await simulator.control("POST", "/settings", {"retries": {"mode": "custom", "days": [1]},
                                                  "final_action": "unpaid"})
    _, sub_id = await subscribe(payments, simulator, receiver, FAILS_LATER)
    for _ in range(3):  # trial end, payment, the one retry
        await simulator.advance(sub_id)
    records = (await receiver.wait_for(sub_id, 14))[-3:]
    assert kinds(records) == ["invoice.payment_failed", "invoice.updated", "customer.subscription.updated"]
    assert records[2]["event"]["data"]["object"]["status"] == "unpaid"
    assert (await simulator.advance(sub_id))["moment"] == "renewal"
    records = (await receiver.wait_for(sub_id, 16))[-2:]
    assert kinds(records) == ["customer.subscription.updated", "invoice.created"]
    assert records[1]["event"]["data"]["object"]["auto_advance"] is False
    assert (await payments.get_subscription(sub_id))["status"] == "unpaid"

    # Leave it past due: no more retries, the invoice stays open to be paid at its page.
    await simulator.control("POST", "/settings", {"final_action": "past_due"})
    _, sub_id = await subscribe(payments, simulator, receiver, FAILS_LATER)
    for _ in range(3):
        await simulator.advance(sub_id)
    records = (await receiver.wait_for(sub_id, 13))[-2:]
    assert kinds(records) == ["invoice.payment_failed", "invoice.updated"]
    assert (await payments.get_subscription(sub_id))["status"] == "past_due"
    assert (await payments.open_invoice(sub_id)) is not None
    assert (await simulator.advance(sub_id))["moment"] == "renewal"

    for wrong in ({"final_action": "delete"}, {"retries": {"mode": "smart", "attempts": 9}},
                  {"retries": {"mode": "custom", "days": []}}, {"delivery": "backwards"}, {"colour": "blue"}):
        body = await simulator.control("POST", "/settings", wrong, expect=400)
        assert body["error"]["message"], wrong


async def test_a_switched_card_fails_then_recovers(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": True})
    await simulator.advance(sub_id)
    await simulator.advance(sub_id)
    assert (await receiver.wait_for(sub_id, 11))[-1]["event"]["data"]["object"]["status"] == "past_due"
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": False})
    await simulator.advance(sub_id)
    records = (await receiver.wait_for(sub_id, 14))[-3:]
    assert kinds(records) == ["invoice.paid", "invoice.payment_succeeded", "customer.subscription.updated"]
    assert records[2]["event"]["data"]["object"]["status"] == "active"
    assert records[2]["event"]["data"]["previous_attributes"] == {"status": "past_due"}
    await simulator.control("POST", f"/subscriptions/{sub_id}/fail_payments", {"fail": "yes"}, expect=400)


async def test_cancel_through_the_api(payments, simulator, receiver):
    _, sub_id = await subscribe(payments, simulator, receiver)
    canceled = await payments.cancel_subscription(sub_id)
    assert canceled["status"] == "canceled" and canceled["canceled_at"] and canceled["ended_at"]
    record = (await receiver.wait_for(sub_id, 7))[-1]
    assert record["event"]["type"] == "customer.subscription.deleted"
    assert record["event"]["data"]["object"]["cancellation_details"]["reason"] == "cancellation_requested"
    assert record["event"]["request"]["id"].startswith("req_")
    with pytest.raises(PaymentsError) as err:  # Stripe: a canceled subscription is no longer found to cancel
        await payments.cancel_subscription(sub_id)
    assert (err.value.status, err.value.code) == (404, "resource_missing")
    assert (await payments.get_subscription(sub_id))["status"] == "canceled"


async def test_events_held_back_go_out_in_another_order(payments, simulator, receiver):
    await simulator.control("POST", "/events/hold")
    checkout = await payments.create_checkout(**checkout_args())
    assert (await pay(checkout.url, GOOD))[0] == 303
    _, _, session = await simulator.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
    await asyncio.sleep(0.1)
    assert receiver.about(session["subscription"]) == []
    released = (await simulator.control("POST", "/events/release", {"order": "reversed"}))["released"]
    records = await receiver.wait_for(session["subscription"], 6)
    assert kinds(records) == list(reversed(CHECKOUT_EVENTS[1:]))
    assert [r["event"]["id"] for r in records] == [i for i in released if i in
                                                  {r["event"]["id"] for r in records}]
    # The newest first: what happened last is what `created` says, whatever the order they came in.
    assert records[0]["event"]["created"] > records[-1]["event"]["created"]
    await simulator.control("POST", "/events/release", {"order": "sideways"}, expect=400)

    # Shuffled delivery: each event goes out on its own, all of them arrive.
    await simulator.control("POST", "/settings", {"delivery": "shuffled"})
    _, sub_id = await subscribe(payments, simulator, receiver)
    assert sorted(kinds(receiver.about(sub_id))) == sorted(CHECKOUT_EVENTS[1:])


async def test_a_refused_delivery_is_retried_and_can_be_resent(payments, simulator, receiver):
    checkout = await payments.create_checkout(**checkout_args())
    await simulator.control("POST", "/events/hold")
    assert (await pay(checkout.url, GOOD))[0] == 303
    receiver.fail_next = 1
    await simulator.control("POST", "/events/release", {"order": "reversed"})  # the session's event goes first
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


async def test_faults_in_stripes_statuses_timeouts_and_retries(payments, simulator):
    assert (await payments.check())["object"] == "balance"
    for status, code in ((500, None), (503, None), (429, "rate_limit"), (409, "idempotency_key_in_use")):
        await simulator.control("POST", "/faults", {"method": "GET", "path": "/v1/balance", "status": status})
        with pytest.raises(PaymentsError) as err:
            await payments.check()
        assert err.value.status == status and "Injected" not in err.value.message and err.value.code == code
        assert err.value.message == f"payments provider failed (GET /v1/balance: {status})" if status != 409 \
            else err.value.message.startswith("There is currently another in-progress request")
    await simulator.control("POST", "/faults", {"path": "/v1/balance", "status": 429, "code": "lock_timeout"})
    status, headers, body = await simulator.raw("GET", "/v1/balance")
    assert (status, body["error"]["code"], headers["Stripe-Should-Retry"]) == (429, "lock_timeout", "true")
    await simulator.control("POST", "/faults", {"path": "/v1/balance", "status": 429, "code": ""}, expect=400)

    # The package retries what Stripe asks it to (a lock timeout, a conflict), not a rate limit.
    retrying = StripePayments(simulator.url, API_KEY, timeout=2.0, max_network_retries=1)
    try:
        for fault in ({"status": 429, "code": "lock_timeout"}, {"status": 409}):
            await simulator.control("POST", "/faults", {"path": "/v1/balance", **fault})
            assert (await retrying.check())["object"] == "balance"
        await simulator.control("POST", "/faults", {"path": "/v1/balance", "status": 429})
        with pytest.raises(PaymentsError):
            await retrying.check()
    finally:
        await retrying.close()

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
            assert (await sim.raw("GET", f"/v1/prices/{PRICE}"))[0] == 200  # the account's prices stay
    finally:
        await wrong.close()
        await gone.close()


async def test_time_passes_on_its_own(receiver):
    sim = Simulator(receiver.url, time_scale=1e-6)  # a 7-day trial in 0.6 s, an hour in 4 ms, a month in 2.6 s
    client = StripePayments(sim.url, API_KEY, max_network_retries=0)
    try:
        async with serving(sim.app, sim.port):
            checkout = await client.create_checkout(**checkout_args())
            assert (await pay(checkout.url, GOOD))[0] == 303
            _, _, session = await sim.raw("GET", f"/v1/checkout/sessions/{checkout.id}")
            records = await receiver.wait_for(session["subscription"], 12, timeout=3.0)
            # Three days before the trial ends Stripe says so; then the period moves, and an hour later its charge.
            assert kinds(records)[6:12] == [
                "customer.subscription.trial_will_end", "customer.subscription.updated", "invoice.created",
                "invoice.finalized", "invoice.paid", "invoice.payment_succeeded"]
            assert records[7]["event"]["data"]["object"]["status"] == "active"
    finally:
        await client.close()


def test_the_command_line(tmp_path):
    port = free_port()
    log = tmp_path / "payments-simulator.log"
    env = {"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin", "PAYMENTS_API_KEY": API_KEY,
           "PAYMENTS_SIM_PORT": str(port), "PAYMENTS_SIM_TIME_SCALE": "0.001",
           "CHECKOUT_PRICES": "starter=price_s, growth=price_g", "PAYMENTS_SIM_RETRIES": "custom:1,2",
           "PAYMENTS_SIM_FINAL_ACTION": "unpaid"}

    def refused(**changes) -> str:
        run = subprocess.run([sys.executable, "-m", "providers.payments.simulator"], cwd=ROOT,
                             env={**env, **changes}, capture_output=True, text=True)
        assert run.returncode == 2, run.stderr
        return run.stderr
    assert "whsec_" in refused(PAYMENTS_WEBHOOK_URL="http://127.0.0.1:9/hook")
    assert "PAYMENTS_SIM_RETRIES" in refused(PAYMENTS_SIM_RETRIES="smart:9/14")
    assert "PAYMENTS_SIM_PRICES" in refused(PAYMENTS_SIM_PRICES="gold=12")
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "providers.payments.simulator"], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, 20, proc, "payments simulator", log)

        async def check() -> tuple[dict, list, dict]:
            client = StripePayments(f"http://127.0.0.1:{port}", API_KEY, max_network_retries=0)
            try:
                balance = await client.check()
            finally:
                await client.close()
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {API_KEY}"}) as s:
                prices = []
                for price in ("price_s", "price_g", "price_starter_monthly"):
                    async with s.get(f"http://127.0.0.1:{port}/v1/prices/{price}") as r:
                        body = await r.json()
                        prices.append(body.get("unit_amount") or body["error"]["code"])
                async with s.get(f"http://127.0.0.1:{port}/_simulator/settings") as r:
                    return balance, prices, await r.json()

        balance, prices, settings = asyncio.run(check())
        assert balance["object"] == "balance"
        assert prices == [4900, 14900, "resource_missing"]  # the stack's offered prices, at the plans' amounts
        assert settings["retries"] == {"mode": "custom", "days": [1, 2]} and settings["final_action"] == "unpaid"
    finally:
        stop_process(proc, signal.SIGTERM, 10)
    assert proc.returncode == 0
    assert f"payments simulator listening on http://127.0.0.1:{port}" in log.read_text()
