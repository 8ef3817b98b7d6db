"""Stripe's v1 routes the simulator answers, and the hosted checkout and invoice pages.

Parameters are checked against the pinned `stripe` package's create/update parameter types (an unknown one is
400 `parameter_unknown`); those it knows but does not simulate are refused with 400, saying so.

- `POST /v1/checkout/sessions`: Stripe's checks (`mode` and `line_items` with a `price` and `quantity` required;
  only `mode=subscription` and `ui_mode=hosted_page` are simulated; a price must be one of the account's
  (else 400 `resource_missing`); `customer_email`, `success_url`/`cancel_url`,
  `subscription_data[trial_period_days]` (1-730), metadata limits; `allowed_payment_method_types` must allow
  `card`) → the Checkout Session, `status: open`, `payment_status: unpaid`, `url` on the public URL, expiring in
  24 h. `customer` (an existing customer, instead of `customer_email`) is paid with and keeps that customer.
- `POST /v1/checkout/sessions/{id}/expire`: an open session expires now (else 400), as one past its `expires_at`
  does when next looked at; either emits `checkout.session.expired`.
- `GET /v1/checkout/sessions/{id}`, `/v1/subscriptions/{id}`, `/v1/customers/{id}`, `/v1/invoices/{id}`,
  `/v1/prices/{id}`, `/v1/products/{id}`, `/v1/events/{id}`; `GET /v1/events?type=&limit=&starting_after=` (newest
  first); `GET /v1/balance`; `DELETE /v1/subscriptions/{id}` (cancel now; a canceled one is no longer found, as
  Stripe answers); `POST /v1/subscriptions/{id}` with `items[0][id]` and `items[0][price]` (a plan change) and/or
  `items[0][quantity]` (prorated onto the next invoice unless `proration_behavior=none`; not during a trial), emitting
  `customer.subscription.updated`; `POST /v1/customers` (`email`, `payment_method` `pm_card_visa`) and
  `POST /v1/subscriptions` (`customer`, `items`, `trial_period_days`, `metadata`): a subscription without a checkout. A trialing subscription's `customer.subscription.trial_will_end`
  comes three days before the trial ends (on the scaled clock; `POST /_simulator/subscriptions/{id}/trial_will_end`
  sends it now).
- `POST /v1/prices` (`currency` usd, `unit_amount`, `recurring[interval]` month, and `product` or
  `product_data[name]`): a new price of the account, `price_...`.
- `GET /c/pay/{id}`: the page; `POST /c/pay/{id}` (cardNumber, cardExpiry, cardCvc): pay (see `cards`), then
  303 to the success URL with `{CHECKOUT_SESSION_ID}` filled in. A card that asks for 3-D Secure gets the bank's
  challenge page instead (200), whose "Complete" or "Fail" posts to `/c/pay/{id}/authenticate`.
- `GET /i/{id}`: an invoice's hosted page (its `hosted_invoice_url`); `POST /i/{id}` (the same card form, the same
  challenge at `/i/{id}/authenticate`) pays a past-due subscription's open invoice (200), refuses a card that does
  not work (402), or says the invoice is paid already (409) or closed (410).
"""
from __future__ import annotations

import re
from typing import Any

from aiohttp import web
from stripe.params import (
    CustomerCreateParams,
    PriceCreateParams,
    SubscriptionCreateParams,
    SubscriptionCreateParamsItem,
    SubscriptionUpdateParams,
    SubscriptionUpdateParamsItem,
)
from stripe.params.checkout import (
    SessionCreateParams,
    SessionCreateParamsLineItem,
    SessionCreateParamsSubscriptionData,
)

from core.urls import url_parts
from providers.payments.simulator import cards
from providers.payments.simulator.billing import Billing
from providers.payments.simulator.errors import ApiError, invalid, missing, no_such
from providers.payments.simulator.events import Events
from providers.payments.simulator.forms import check_known, decode, decode_body, integer, string_map
from providers.payments.simulator.objects import SESSION_LIFETIME, State, card_details, new_id, now, public
from providers.payments.simulator.page import (
    PREFILL,
    challenge_page,
    checkout_page,
    invoice_page,
    notice_page,
)

REQUEST_OPTIONS = {"api_key", "content_type", "headers", "idempotency_key", "max_network_retries",
                   "stripe_account", "stripe_context", "stripe_version"}
SESSION_PARAMS = set(SessionCreateParams.__annotations__) - REQUEST_OPTIONS
SUBSCRIPTION_DATA_PARAMS = set(SessionCreateParamsSubscriptionData.__annotations__)
LINE_ITEM_PARAMS = set(SessionCreateParamsLineItem.__annotations__)
PRICE_PARAMS = set(PriceCreateParams.__annotations__) - REQUEST_OPTIONS
SUBSCRIPTION_UPDATE_PARAMS = set(SubscriptionUpdateParams.__annotations__) - REQUEST_OPTIONS
SUBSCRIPTION_ITEM_PARAMS = set(SubscriptionUpdateParamsItem.__annotations__)
CUSTOMER_PARAMS = set(CustomerCreateParams.__annotations__) - REQUEST_OPTIONS
SUBSCRIPTION_CREATE_PARAMS = set(SubscriptionCreateParams.__annotations__) - REQUEST_OPTIONS
SUBSCRIPTION_CREATE_ITEM_PARAMS = set(SubscriptionCreateParamsItem.__annotations__)
# Stripe's test payment methods by id, as the card each stands for (a customer made through the API pays with one).
TEST_PAYMENT_METHODS = {"pm_card_visa": cards.GOOD}
PRORATION_BEHAVIORS = ("always_invoice", "create_prorations", "none")
UI_MODES = ("elements", "embedded_page", "form", "hosted_page")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
EVENTS_LIMIT = 100
REQUEST_ID = web.RequestKey("request_id", str)  # set by the app's middleware for every /v1 request


def is_url(value: object) -> bool:
    if not isinstance(value, str) or len(value) > 5000:
        return False
    parts = url_parts(value)
    return parts is not None and parts.scheme in ("http", "https") and bool(parts.netloc)


def request_info(request: web.Request) -> dict[str, Any]:
    """An event's `request`: the API request that caused it."""
    return {"id": request.get(REQUEST_ID), "idempotency_key": request.headers.get("Idempotency-Key")}


def not_simulated(param: str, what: str = "") -> ApiError:
    return invalid(param, f"{param} is not simulated{what}: the payments simulator does not support it")


class Api:
    def __init__(self, state: State, events: Events, billing: Billing, public_url: str):
        self.state, self.events, self.billing, self.public_url = state, events, billing, public_url

    # -- Checkout Sessions -----------------------------------------------------------------------------------

    async def create_session(self, request: web.Request) -> web.Response:
        p = decode_body(await request.read())
        check_known(p, SESSION_PARAMS)
        mode = p.get("mode")
        if not mode:
            raise missing("mode")
        if mode not in ("payment", "setup", "subscription"):
            raise invalid("mode", f"Invalid mode: must be one of payment, setup, or subscription (got {mode!r})")
        if mode != "subscription":
            raise not_simulated("mode", f" for {mode}")
        ui_mode = p.get("ui_mode", "hosted_page")
        if ui_mode not in UI_MODES:
            raise invalid("ui_mode", f"Invalid ui_mode: must be one of {', '.join(UI_MODES)}")
        if ui_mode != "hosted_page":
            raise not_simulated("ui_mode", f" for {ui_mode}")
        line_items = self._line_items(p.get("line_items"))
        email = p.get("customer_email")
        if email is not None and (not isinstance(email, str) or not EMAIL.match(email)):
            raise invalid("customer_email", f"Invalid email address: {email}", "email_invalid")
        customer = p.get("customer")
        if customer is not None:
            if email is not None:
                raise invalid("customer_email", "You may only specify one of these parameters: customer, "
                              "customer_email.")
            if customer not in self.state.customers:
                raise no_such("customer", str(customer), "customer", status=400)
        reference = p.get("client_reference_id")
        if reference is not None and (not isinstance(reference, str) or not 1 <= len(reference) <= 200):
            raise invalid("client_reference_id", "Invalid client_reference_id: 1 to 200 characters")
        metadata = string_map(p.get("metadata"), "metadata")
        data = p.get("subscription_data") or {}
        if not isinstance(data, dict):
            raise invalid("subscription_data", "Invalid object: subscription_data")
        check_known(data, SUBSCRIPTION_DATA_PARAMS, "subscription_data")
        trial_days = None
        if data.get("trial_period_days") not in (None, ""):
            trial_days = integer(data["trial_period_days"], "subscription_data[trial_period_days]", 1, 730)
        sub_metadata = string_map(data.get("metadata"), "subscription_data[metadata]")
        collection = p.get("payment_method_collection", "always")
        if collection not in ("always", "if_required"):
            raise invalid("payment_method_collection",
                          "Invalid payment_method_collection: must be one of always or if_required")
        allowed = p.get("allowed_payment_method_types")
        if allowed is not None:
            if not isinstance(allowed, list) or not all(isinstance(t, str) and t for t in allowed):
                raise invalid("allowed_payment_method_types", "Invalid array: allowed_payment_method_types")
            if "card" not in allowed:
                raise not_simulated("allowed_payment_method_types", " without card (the simulator offers cards)")
        for name in ("success_url", "cancel_url"):
            if p.get(name) is not None and not is_url(p[name]):
                raise invalid(name, "Not a valid URL", "url_invalid")
        expires_at = None
        if p.get("expires_at") not in (None, ""):
            created = now()
            expires_at = integer(p["expires_at"], "expires_at", created + 1800, created + SESSION_LIFETIME)
        session = self.state.new_session(
            line_items=line_items, mode=mode, public_url=self.public_url, customer_email=email, customer=customer,
            client_reference_id=reference, metadata=metadata,
            subscription_data={"trial_period_days": trial_days, "metadata": sub_metadata},
            payment_method_collection=collection, success_url=p.get("success_url"), cancel_url=p.get("cancel_url"),
            expires_at=expires_at, allowed_payment_method_types=allowed)
        return web.json_response(public(session))

    def _price(self, price: object, param: str) -> dict[str, Any]:
        found = self.state.catalogue.prices.get(price) if isinstance(price, str) else None
        if found is None:
            raise no_such("price", str(price), param, status=400)
        return found

    def _line_items(self, raw: object) -> list[dict[str, Any]]:
        if raw in (None, "", [], {}):
            raise missing("line_items")
        if not isinstance(raw, list):
            raise invalid("line_items", "Invalid array: line_items")
        items = []
        for n, item in enumerate(raw):
            where = f"line_items[{n}]"
            if not isinstance(item, dict):
                raise invalid(where, f"Invalid object: {where}")
            check_known(item, LINE_ITEM_PARAMS, where)
            if "price_data" in item:
                raise not_simulated(f"{where}[price_data]", " (pass a price id)")
            if not item.get("price"):
                raise missing(f"{where}[price]")
            price = self._price(item["price"], f"{where}[price]")
            if item.get("quantity") in (None, ""):
                raise missing(f"{where}[quantity]")
            items.append({"price": price, "quantity": integer(item["quantity"], f"{where}[quantity]", 1, 999_999)})
        return items

    def _session(self, session_id: str) -> dict[str, Any]:
        session = self.state.sessions.get(session_id)
        if session is None:
            raise no_such("checkout.session", session_id)
        if session["status"] == "open" and now() >= session["expires_at"]:
            self.billing.expire_session(session)
        return session

    async def get_session(self, request: web.Request) -> web.Response:
        return web.json_response(public(self._session(request.match_info["id"])))

    async def expire_session(self, request: web.Request) -> web.Response:
        session = self._session(request.match_info["id"])
        if session["status"] != "open":
            raise ApiError(400, f"Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout "
                           f"Session has a status of \"{session['status']}\".", executed=True)
        self.billing.expire_session(session)
        return web.json_response(public(session))

    # -- Prices and products -----------------------------------------------------------------------------------

    async def create_price(self, request: web.Request) -> web.Response:
        p = decode_body(await request.read())
        check_known(p, PRICE_PARAMS)
        for name in ("currency_options", "custom_unit_amount", "tiers", "tiers_mode", "transform_quantity",
                     "unit_amount_decimal", "transfer_lookup_key"):
            if name in p:
                raise not_simulated(name)
        if not p.get("currency"):
            raise missing("currency")
        if p["currency"] != "usd":
            raise not_simulated("currency", f" for {p['currency']} (the account bills in usd)")
        if p.get("unit_amount") in (None, ""):
            raise missing("unit_amount")
        amount = integer(p["unit_amount"], "unit_amount", 0, 99_999_999)
        recurring = p.get("recurring")
        if not isinstance(recurring, dict) or recurring.get("interval") != "month" \
                or recurring.get("interval_count", "1") != "1":
            raise not_simulated("recurring", " other than monthly (recurring[interval]=month): the simulator "
                                             "bills month by month")
        check_known(recurring, {"interval", "interval_count", "meter", "trial_period_days", "usage_type"},
                    "recurring")
        product, product_data = p.get("product"), p.get("product_data")
        if (product is None) == (product_data is None):
            raise invalid("product", "You must specify either product or product_data.")
        if product is not None and product not in self.state.catalogue.products:
            raise no_such("product", str(product), "product", status=400)
        if product_data is not None:
            if not isinstance(product_data, dict) or not product_data.get("name"):
                raise missing("product_data[name]")
            product = self.state.catalogue.add_product(str(product_data["name"]), now())["id"]
        metadata = string_map(p.get("metadata"), "metadata")
        price = self.state.catalogue.add_price(new_id("price", 24), amount, str(product), now(),
                                               nickname=p.get("nickname") or None,
                                               lookup_key=p.get("lookup_key") or None, metadata=metadata)
        return web.json_response(price)

    async def get_price(self, request: web.Request) -> web.Response:
        price = self.state.catalogue.prices.get(request.match_info["id"])
        if price is None:
            raise no_such("price", request.match_info["id"])
        return web.json_response(price)

    async def get_product(self, request: web.Request) -> web.Response:
        product = self.state.catalogue.products.get(request.match_info["id"])
        if product is None:
            raise no_such("product", request.match_info["id"])
        return web.json_response(product)

    # -- Subscriptions and the rest --------------------------------------------------------------------------

    def _subscription(self, sub_id: str) -> dict[str, Any]:
        sub = self.state.subscriptions.get(sub_id)
        if sub is None:
            raise no_such("subscription", sub_id)
        return sub

    async def get_subscription(self, request: web.Request) -> web.Response:
        return web.json_response(public(self._subscription(request.match_info["id"])))

    async def update_subscription(self, request: web.Request) -> web.Response:
        """A change of one item: its price (a plan change, not prorated) or its quantity (prorated onto the next
        invoice by default, `proration_behavior=create_prorations`; `none` does not prorate; `always_invoice` is
        not simulated): `items[0][id]` with `items[0][price]` and/or `items[0][quantity]`."""
        sub = self._subscription(request.match_info["id"])
        p = decode_body(await request.read())
        check_known(p, SUBSCRIPTION_UPDATE_PARAMS)
        for name in set(p) - {"items", "proration_behavior", "expand"}:
            raise not_simulated(name, " (only a change of one item is: items[0][id], items[0][price], "
                                      "items[0][quantity])")
        behavior = p.get("proration_behavior", "create_prorations")
        if behavior not in PRORATION_BEHAVIORS:
            raise invalid("proration_behavior", f"Invalid proration_behavior: must be one of "
                          f"{', '.join(PRORATION_BEHAVIORS)}")
        if behavior == "always_invoice":
            raise not_simulated("proration_behavior", " for always_invoice (prorations go on the next invoice)")
        items = p.get("items")
        if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
            raise not_simulated("items", " beyond a change of one item: items[0][id] with items[0][price] or "
                                         "items[0][quantity]")
        check_known(items[0], SUBSCRIPTION_ITEM_PARAMS, "items[0]")
        for name in set(items[0]) - {"id", "price", "quantity"}:
            raise not_simulated(f"items[0][{name}]")
        item_id = items[0].get("id")
        if not any(i["id"] == item_id for i in sub["items"]["data"]):
            raise no_such("subscription_item", str(item_id), "items[0][id]", status=400)
        price = self._price(items[0]["price"], "items[0][price]") if "price" in items[0] else None
        quantity = integer(items[0]["quantity"], "items[0][quantity]", 1, 999_999) if "quantity" in items[0] \
            else None
        if price is None and quantity is None:
            raise missing("items[0][price]")
        if sub["status"] == "canceled":
            raise ApiError(400, "A canceled subscription cannot be updated.", param="items", executed=True)
        self.billing.change_item(sub, str(item_id), price=price, quantity=quantity, prorate=behavior != "none")
        return web.json_response(public(sub))

    # -- Customers and subscriptions made through the API (a test account's, without a checkout) ---------------

    async def create_customer(self, request: web.Request) -> web.Response:
        """`email` and `payment_method` (one of Stripe's test payment methods, `pm_card_visa`) only."""
        p = decode_body(await request.read())
        check_known(p, CUSTOMER_PARAMS)
        for name in set(p) - {"email", "payment_method", "metadata"}:
            raise not_simulated(name)
        email = p.get("email")
        if email is not None and (not isinstance(email, str) or not EMAIL.match(email)):
            raise invalid("email", f"Invalid email address: {email}", "email_invalid")
        number = TEST_PAYMENT_METHODS.get(p.get("payment_method") or "pm_card_visa")
        if number is None:
            raise no_such("payment_method", str(p.get("payment_method")), "payment_method", status=400)
        card = cards.card_of(number)
        assert card is not None  # each test payment method is a test card
        customer = self.state.new_customer(email=email, card=card_details(card.brand, card.funding, number[-4:]),
                                           at=now())
        customer["metadata"] = string_map(p.get("metadata"), "metadata")
        customer["_card_number"] = number
        self.events.emit("customer.created", customer)
        return web.json_response(public(customer))

    async def create_subscription(self, request: web.Request) -> web.Response:
        """`customer` (made through the API), `items[n][price]` with `items[n][quantity]`, `trial_period_days` and
        `metadata`; charged to the customer's payment method as a checkout's subscription is."""
        p = decode_body(await request.read())
        check_known(p, SUBSCRIPTION_CREATE_PARAMS)
        for name in set(p) - {"customer", "items", "trial_period_days", "metadata", "expand"}:
            raise not_simulated(name)
        customer = self.state.customers.get(p.get("customer") or "")
        if customer is None:
            raise no_such("customer", str(p.get("customer")), "customer", status=400)
        raw = p.get("items")
        if not isinstance(raw, list) or not raw:
            raise missing("items")
        line_items = []
        for n, item in enumerate(raw):
            if not isinstance(item, dict):
                raise invalid(f"items[{n}]", f"Invalid object: items[{n}]")
            check_known(item, SUBSCRIPTION_CREATE_ITEM_PARAMS, f"items[{n}]")
            quantity = integer(item.get("quantity", "1"), f"items[{n}][quantity]", 1, 999_999)
            line_items.append({"price": self._price(item.get("price"), f"items[{n}][price]"), "quantity": quantity})
        trial_days = 0
        if p.get("trial_period_days") not in (None, ""):
            trial_days = integer(p["trial_period_days"], "trial_period_days", 0, 730)
        sub = self.billing.start_subscription(customer, line_items, string_map(p.get("metadata"), "metadata"),
                                              trial_days, customer.get("_card_number") or cards.GOOD)
        return web.json_response(public(sub))

    async def cancel_subscription(self, request: web.Request) -> web.Response:
        sub = self._subscription(request.match_info["id"])
        if sub["status"] == "canceled":  # Stripe: a canceled subscription cannot be canceled, nor found to be
            raise no_such("subscription", sub["id"])
        p = decode(request.query.items())
        details = p.get("cancellation_details") or {}
        if isinstance(details, dict):
            for name in ("comment", "feedback"):
                if isinstance(details.get(name), str):
                    sub["cancellation_details"][name] = details[name] or None
        self.billing.cancel(sub, reason="cancellation_requested", request=request_info(request))
        return web.json_response(public(sub))

    async def get_customer(self, request: web.Request) -> web.Response:
        customer = self.state.customers.get(request.match_info["id"])
        if customer is None:
            raise no_such("customer", request.match_info["id"])
        return web.json_response(public(customer))

    async def get_invoice(self, request: web.Request) -> web.Response:
        invoice = self.state.invoices.get(request.match_info["id"])
        if invoice is None:
            raise no_such("invoice", request.match_info["id"])
        return web.json_response(public(invoice))

    async def get_balance(self, request: web.Request) -> web.Response:
        return web.json_response(self.state.balance())

    async def get_event(self, request: web.Request) -> web.Response:
        record = self.events.by_id.get(request.match_info["id"])
        if record is None:
            raise no_such("event", request.match_info["id"])
        return web.json_response(record["event"])

    async def list_events(self, request: web.Request) -> web.Response:
        p = decode(request.query.items())
        limit = integer(p.get("limit", "10"), "limit", 1, EVENTS_LIMIT)
        found = [r["event"] for r in reversed(self.events.list(p.get("type") or None))]
        after = p.get("starting_after")
        if after:
            ids = [e["id"] for e in found]
            if after not in ids:
                raise no_such("event", after, "starting_after", status=400)
            found = found[ids.index(after) + 1:]
        return web.json_response({"object": "list", "data": found[:limit], "has_more": len(found) > limit,
                                  "url": "/v1/events"})

    # -- the hosted checkout page ----------------------------------------------------------------------------

    def _page_session(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            session = self._session(request.match_info["id"])
        except ApiError:
            return html(404, notice_page("Not found", "This checkout page does not exist."))
        if session["status"] == "complete":
            return html(409 if request.method == "POST" else 200,
                        notice_page("Already paid", "This checkout session is already complete."))
        if session["status"] != "open":
            return html(410, notice_page("Expired", "This checkout session has expired."))
        return session

    async def show_page(self, request: web.Request) -> web.Response:
        session = self._page_session(request)
        if isinstance(session, web.Response):
            return session
        return html(200, checkout_page(session, self.state.catalogue))

    async def pay(self, request: web.Request) -> web.Response:
        session = self._page_session(request)
        if isinstance(session, web.Response):
            return session
        values = await form_values(request)
        number = cards.digits(values["cardNumber"])
        charge_now = not session["_subscription_data"].get("trial_period_days")
        refusal = cards.form_refusal(number, values["cardExpiry"], values["cardCvc"])
        if refusal is None and cards.needs_authentication(number):
            return challenge(session, f"/c/pay/{session['id']}/authenticate", number, values,
                             session["amount_total"] or 0)
        refusal = refusal or cards.on_session(number, charge_now=charge_now)
        if refusal is not None:
            return self._refused_checkout(session, refusal, values)
        return self._complete(session, number)

    async def authenticate(self, request: web.Request) -> web.Response:
        """The bank's challenge answered: completed, the checkout goes on as with any card; failed, the page
        says the payment method could not be authenticated."""
        session = self._page_session(request)
        if isinstance(session, web.Response):
            return session
        answered = await challenge_answered(session, request)
        if isinstance(answered, web.Response):
            return answered
        pending, completed = answered
        charge_now = not session["_subscription_data"].get("trial_period_days")
        if not completed:
            code = "payment_intent_authentication_failure" if charge_now else "setup_intent_authentication_failure"
            return self._refused_checkout(session, cards.Refusal(402, cards.AUTHENTICATION_FAILED, code),
                                          pending["values"])
        refusal = cards.on_session(pending["number"], charge_now=charge_now, authenticated=True)
        if refusal is not None:
            return self._refused_checkout(session, refusal, pending["values"])
        return self._complete(session, pending["number"])

    def _refused_checkout(self, session: dict[str, Any], refusal: cards.Refusal, values: dict[str, Any]) -> web.Response:
        return html(refusal.status, checkout_page(session, self.state.catalogue, refusal=refusal, values=values))

    def _complete(self, session: dict[str, Any], number: str) -> web.Response:
        success_url = session["success_url"]
        self.billing.complete_checkout(session, number)
        if success_url:
            return web.Response(status=303, headers={"Location": success_url.replace("{CHECKOUT_SESSION_ID}",
                                                                                  session["id"])})
        return html(200, notice_page("Thanks for subscribing", "Your subscription has started."))

    # -- the hosted invoice page -----------------------------------------------------------------------------

    def _page_invoice(self, request: web.Request) -> tuple[dict[str, Any], dict[str, Any]] | web.Response:
        """(the invoice, its subscription) of an open invoice's page, or the page saying why it cannot be paid."""
        invoice = self.state.invoices.get(request.match_info["id"])
        if invoice is None or invoice["status"] == "draft":
            return html(404, notice_page("Not found", "This invoice does not exist."))
        if invoice["status"] == "paid":
            return html(409 if request.method == "POST" else 200, notice_page("Already paid", "This invoice is paid."))
        sub = next((s for s in self.state.subscriptions.values() if s.get("_open_invoice") == invoice["id"]), None)
        if invoice["status"] != "open" or sub is None or sub["status"] == "canceled":
            return html(410, notice_page("Closed", "This invoice can no longer be paid."))
        return invoice, sub

    async def show_invoice(self, request: web.Request) -> web.Response:
        found = self._page_invoice(request)
        return found if isinstance(found, web.Response) else html(200, invoice_page(found[0]))

    async def pay_invoice(self, request: web.Request) -> web.Response:
        found = self._page_invoice(request)
        if isinstance(found, web.Response):
            return found
        invoice, sub = found
        values = await form_values(request)
        number = cards.digits(values["cardNumber"])
        refusal = cards.form_refusal(number, values["cardExpiry"], values["cardCvc"])
        if refusal is None and cards.needs_authentication(number):
            return challenge(invoice, f"/i/{invoice['id']}/authenticate", number, values, invoice["amount_due"])
        refusal = refusal or cards.on_session(number, charge_now=True)
        if refusal is not None:
            return html(refusal.status, invoice_page(invoice, refusal=refusal, values=values))
        self.billing.pay_open_invoice(sub, invoice, number)
        return html(200, notice_page("Thank you", "The invoice is paid."))

    async def authenticate_invoice(self, request: web.Request) -> web.Response:
        found = self._page_invoice(request)
        if isinstance(found, web.Response):
            return found
        invoice, sub = found
        answered = await challenge_answered(invoice, request)
        if isinstance(answered, web.Response):
            return answered
        pending, completed = answered
        refusal = cards.on_session(pending["number"], charge_now=True, authenticated=True) if completed else \
            cards.Refusal(402, cards.AUTHENTICATION_FAILED, "payment_intent_authentication_failure")
        if refusal is not None:
            return html(refusal.status, invoice_page(invoice, refusal=refusal, values=pending["values"]))
        self.billing.pay_open_invoice(sub, invoice, pending["number"])
        return html(200, notice_page("Thank you", "The invoice is paid."))

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1/checkout/sessions", self.create_session)
        router.add_get("/v1/checkout/sessions/{id}", self.get_session)
        router.add_post("/v1/checkout/sessions/{id}/expire", self.expire_session)
        router.add_get("/v1/subscriptions/{id}", self.get_subscription)
        router.add_post("/v1/subscriptions/{id}", self.update_subscription)
        router.add_delete("/v1/subscriptions/{id}", self.cancel_subscription)
        router.add_post("/v1/customers", self.create_customer)
        router.add_post("/v1/subscriptions", self.create_subscription)
        router.add_get("/v1/customers/{id}", self.get_customer)
        router.add_get("/v1/invoices/{id}", self.get_invoice)
        router.add_post("/v1/prices", self.create_price)
        router.add_get("/v1/prices/{id}", self.get_price)
        router.add_get("/v1/products/{id}", self.get_product)
        router.add_get("/v1/balance", self.get_balance)
        router.add_get("/v1/events", self.list_events)
        router.add_get("/v1/events/{id}", self.get_event)
        router.add_get("/c/pay/{id}", self.show_page)
        router.add_post("/c/pay/{id}", self.pay)
        router.add_post("/c/pay/{id}/authenticate", self.authenticate)
        router.add_get("/i/{id}", self.show_invoice)
        router.add_post("/i/{id}", self.pay_invoice)
        router.add_post("/i/{id}/authenticate", self.authenticate_invoice)


def challenge(holder: dict[str, Any], action_path: str, number: str, values: dict[str, Any], amount: int) -> web.Response:
    """The bank's 3-D Secure challenge for a card given at a hosted page (the session's or the invoice's): the
    page, with the card kept aside until it is answered."""
    pending: dict[str, Any] = {"id": new_id("src_3ds", 16), "number": number, "values": values}
    holder["_challenge"] = pending
    return html(200, challenge_page(action_path, pending["id"], amount))


async def challenge_answered(holder: dict[str, Any], request: web.Request) -> tuple[dict[str, Any], bool] | web.Response:
    """The challenge pending at this page and whether the customer completed it, or the page saying there is
    none to answer."""
    form = await request.post()
    pending = holder.get("_challenge")
    if not pending or form.get("challenge") != pending["id"]:
        return html(400, notice_page("Expired", "This authentication is no longer pending: pay again."))
    holder["_challenge"] = None
    return pending, form.get("result") == "complete"


async def form_values(request: web.Request) -> dict[str, str]:
    form = await request.post()
    return {name: str(form.get(name, "")) for name in PREFILL}


def html(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")
