"""Stripe's v1 routes the simulator answers, and the hosted checkout page.

- `POST /v1/checkout/sessions`: Stripe's checks (unknown parameters refused; `mode` and `line_items` with a
  `price` and `quantity` required; only `mode=subscription` is simulated; a price must be a `price_...` id;
  `customer_email`, `success_url`/`cancel_url`, `subscription_data[trial_period_days]` (1-730), metadata limits)
  → the Checkout Session, `status: open`, `payment_status: unpaid`, `url` on the public URL, expiring in 24 h.
  `customer` (an existing customer, instead of `customer_email`) is paid with and keeps that customer.
- `POST /v1/checkout/sessions/{id}/expire`: an open session expires now (else 400), as one past its `expires_at`
  does when next looked at; either emits `checkout.session.expired`.
- `GET /v1/checkout/sessions/{id}`, `/v1/subscriptions/{id}`, `/v1/customers/{id}`, `/v1/invoices/{id}`,
  `/v1/prices/{id}`, `/v1/events/{id}`; `GET /v1/events?type=&limit=&starting_after=` (newest first);
  `GET /v1/balance`; `DELETE /v1/subscriptions/{id}` (cancel now; a canceled one is no longer found, as Stripe
  answers); `POST /v1/subscriptions/{id}` with `items[0][id]` and `items[0][price]` (a plan change, emitting
  `customer.subscription.updated`). A trialing subscription's `customer.subscription.trial_will_end` comes three
  days before the trial ends (on the scaled clock; `POST /_simulator/subscriptions/{id}/trial_will_end` sends it
  now).
- `GET /c/pay/{id}`: the page; `POST /c/pay/{id}` (cardNumber, cardExpiry, cardCvc): pay (see `cards`), then
  303 to the success URL with `{CHECKOUT_SESSION_ID}` filled in.
- `GET /i/{id}`: an invoice's hosted page (its `hosted_invoice_url`); `POST /i/{id}` (the same card form) pays a
  past-due subscription's open invoice (200), refuses a card that does not work (402), or says the invoice is
  paid already (409) or closed (410).
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from aiohttp import web

from providers.payments.simulator import cards
from providers.payments.simulator.billing import Billing
from providers.payments.simulator.errors import ApiError, invalid, missing, no_such
from providers.payments.simulator.events import Events
from providers.payments.simulator.forms import check_known, decode, decode_body, integer, string_map
from providers.payments.simulator.objects import SESSION_LIFETIME, State, now, price_object, public
from providers.payments.simulator.page import PREFILL, checkout_page, invoice_page, notice_page

SESSION_PARAMS = {
    "adaptive_pricing", "after_expiration", "allow_promotion_codes", "automatic_tax", "billing_address_collection",
    "branding_settings", "cancel_url", "client_reference_id", "consent_collection", "currency", "custom_fields",
    "custom_text", "customer", "customer_creation", "customer_email", "customer_update", "discounts",
    "excluded_payment_method_types", "expand", "expires_at", "invoice_creation", "line_items", "locale",
    "metadata", "mode", "name_collection", "optional_items", "origin_context", "payment_intent_data",
    "payment_method_collection", "payment_method_configuration", "payment_method_data", "payment_method_options",
    "payment_method_types", "permissions", "phone_number_collection", "redirect_on_completion", "return_url",
    "saved_payment_method_options", "setup_intent_data", "shipping_address_collection", "shipping_options",
    "submit_type", "subscription_data", "success_url", "tax_id_collection", "ui_mode", "wallet_options",
}
SUBSCRIPTION_DATA_PARAMS = {
    "application_fee_percent", "billing_cycle_anchor", "billing_mode", "default_tax_rates", "description",
    "invoice_settings", "metadata", "on_behalf_of", "pending_invoice_item_interval", "proration_behavior",
    "transfer_data", "trial_end", "trial_period_days", "trial_settings",
}
LINE_ITEM_PARAMS = {"adjustable_quantity", "dynamic_tax_rates", "metadata", "price", "price_data", "quantity",
                    "tax_rates"}
PRICE_ID = re.compile(r"^price_[A-Za-z0-9_]+$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
EVENTS_LIMIT = 100
REQUEST_ID = web.RequestKey("request_id", str)  # set by the app's middleware for every /v1 request


def is_url(value) -> bool:
    if not isinstance(value, str) or len(value) > 5000:
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def request_info(request: web.Request) -> dict:
    """An event's `request`: the API request that caused it."""
    return {"id": request.get(REQUEST_ID), "idempotency_key": request.headers.get("Idempotency-Key")}


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
            raise invalid("mode", f"mode={mode} is not simulated: the simulator speaks subscription mode only")
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
            expires_at=expires_at)
        return web.json_response(public(session))

    def _line_items(self, raw) -> list[dict]:
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
                raise invalid(f"{where}[price_data]", "price_data is not simulated: pass a price id")
            price = item.get("price")
            if not price:
                raise missing(f"{where}[price]")
            if not isinstance(price, str) or not PRICE_ID.match(price):
                raise no_such("price", str(price), f"{where}[price]", status=400)
            if item.get("quantity") in (None, ""):
                raise missing(f"{where}[quantity]")
            items.append({"price": price_object(price), "quantity": integer(item["quantity"], f"{where}[quantity]",
                                                                           1, 999_999)})
        return items

    def _session(self, session_id: str) -> dict:
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
                           f"Session has a status of \"{session['status']}\".")
        self.billing.expire_session(session)
        return web.json_response(public(session))

    # -- Subscriptions and the rest --------------------------------------------------------------------------

    def _subscription(self, sub_id: str) -> dict:
        sub = self.state.subscriptions.get(sub_id)
        if sub is None:
            raise no_such("subscription", sub_id)
        return sub

    async def get_subscription(self, request: web.Request) -> web.Response:
        return web.json_response(public(self._subscription(request.match_info["id"])))

    async def update_subscription(self, request: web.Request) -> web.Response:
        """Only a plan change is simulated: `items[0][id]` (an item of the subscription) and `items[0][price]`."""
        sub = self._subscription(request.match_info["id"])
        p = decode_body(await request.read())
        check_known(p, {"items", "proration_behavior"})
        items = p.get("items")
        if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
            raise invalid("items", "Only a change of one item's price is simulated: items[0][id], items[0][price]")
        check_known(items[0], {"id", "price"}, "items[0]")
        item_id, price = items[0].get("id"), items[0].get("price")
        if not any(i["id"] == item_id for i in sub["items"]["data"]):
            raise no_such("subscription_item", str(item_id), "items[0][id]", status=400)
        if not isinstance(price, str) or not PRICE_ID.match(price):
            raise no_such("price", str(price), "items[0][price]", status=400)
        if sub["status"] == "canceled":
            raise invalid("items", "A canceled subscription cannot be updated.")
        self.billing.change_price(sub, item_id, price_object(price))
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

    async def get_price(self, request: web.Request) -> web.Response:
        price_id = request.match_info["id"]
        if not PRICE_ID.match(price_id):
            raise no_such("price", price_id)
        return web.json_response(price_object(price_id))

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

    def _page_session(self, request: web.Request) -> dict | web.Response:
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
        return html(200, checkout_page(session))

    async def pay(self, request: web.Request) -> web.Response:
        session = self._page_session(request)
        if isinstance(session, web.Response):
            return session
        form = await request.post()
        values = {name: str(form.get(name, "")) for name in PREFILL}
        number = cards.digits(values["cardNumber"])
        trial = bool(session["_subscription_data"].get("trial_period_days"))
        refusal = cards.check(number, values["cardExpiry"], values["cardCvc"], charge_now=not trial)
        if refusal is not None:
            return html(refusal.status, checkout_page(session, error=refusal.message, detail=refusal.detail,
                                                      values=values))
        self.billing.complete_checkout(session, number, fails=cards.charges_fail(number),
                                       needs_action=cards.needs_action(number))
        if session["success_url"]:
            location = session["success_url"].replace("{CHECKOUT_SESSION_ID}", session["id"])
            return web.Response(status=303, headers={"Location": location})
        return html(200, notice_page("Thanks for subscribing", "Your subscription has started."))

    # -- the hosted invoice page -----------------------------------------------------------------------------

    def _page_invoice(self, request: web.Request) -> tuple[dict, dict] | web.Response:
        """(the invoice, its subscription) of an open invoice's page, or the page saying why it cannot be paid."""
        invoice = self.state.invoices.get(request.match_info["id"])
        if invoice is None:
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
        form = await request.post()
        values = {name: str(form.get(name, "")) for name in PREFILL}
        number = cards.digits(values["cardNumber"])
        refusal = cards.check(number, values["cardExpiry"], values["cardCvc"], charge_now=True)
        if refusal is None and cards.needs_action(number):  # the bank's challenge is not simulated here
            refusal = cards.Refusal(402, cards.DECLINED, "This card asks for authentication; use another.")
        if refusal is not None:
            return html(refusal.status, invoice_page(invoice, error=refusal.message, detail=refusal.detail,
                                                     values=values))
        self.billing.pay_open_invoice(sub, invoice)
        return html(200, notice_page("Thank you", "The invoice is paid."))

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_post("/v1/checkout/sessions", self.create_session)
        router.add_get("/v1/checkout/sessions/{id}", self.get_session)
        router.add_post("/v1/checkout/sessions/{id}/expire", self.expire_session)
        router.add_get("/v1/subscriptions/{id}", self.get_subscription)
        router.add_post("/v1/subscriptions/{id}", self.update_subscription)
        router.add_delete("/v1/subscriptions/{id}", self.cancel_subscription)
        router.add_get("/v1/customers/{id}", self.get_customer)
        router.add_get("/v1/invoices/{id}", self.get_invoice)
        router.add_get("/v1/prices/{id}", self.get_price)
        router.add_get("/v1/balance", self.get_balance)
        router.add_get("/v1/events", self.list_events)
        router.add_get("/v1/events/{id}", self.get_event)
        router.add_get("/c/pay/{id}", self.show_page)
        router.add_post("/c/pay/{id}", self.pay)
        router.add_get("/i/{id}", self.show_invoice)
        router.add_post("/i/{id}", self.pay_invoice)


def html(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")
