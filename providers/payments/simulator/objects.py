"""Stripe's objects as the API version of the pinned `stripe` package shapes them, and the in-memory store.

Objects are dicts in Stripe's JSON shape (`id` with Stripe's prefixes: `cs_test_`, `cus_`, `sub_`, `si_`, `in_`,
`il_`, `pm_`, `prod_`, `price_`, `pmc_`; `object`; `livemode: false`; `created` in Unix seconds), with the fields
the package's types declare for that version and no others (tests/integration/test_payments_provider.py checks
them against the types). Private fields (leading underscore) are the simulator's bookkeeping and never leave it
(`public`).

The catalogue holds the account's prices: the ones the simulator is started with (`Catalogue.of`: price id →
monthly amount in cents and the product's name) and any made through `POST /v1/prices`. A price id it does not
hold is Stripe's 400 `resource_missing`.

Idempotency keys (`Idempotency`) keep the answer of a request that began executing for 24 hours.
"""
from __future__ import annotations

import calendar
import copy
import secrets
import string
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import stripe

API_VERSION = stripe.api_version  # the version the pinned package speaks (and sends as Stripe-Version)
CURRENCY, INTERVAL = "usd", "month"
DAY = 86400
HOUR = 3600
SESSION_LIFETIME = DAY
IDEMPOTENCY_TTL = DAY  # Stripe prunes a key once it is at least 24 hours old
ALPHABET = string.ascii_letters + string.digits
ACCOUNT_NAME = "Switchboard (payments simulator)"
CATALOGUE_CREATED = 1_700_000_000
PAYMENT_METHOD_CONFIGURATION = "pmc_" + "1SimulatorDefault0000000"  # the account's default configuration


def now() -> int:
    return int(time.time())


def new_id(prefix: str, length: int = 24) -> str:
    return f"{prefix}_" + "".join(secrets.choice(ALPHABET) for _ in range(length))


def public(record: dict[str, Any]) -> dict[str, Any]:
    """The object as the API shows it: a deep copy without the private fields."""
    return copy.deepcopy({k: v for k, v in record.items() if not k.startswith("_")})


def add_months(ts: int, months: int = 1) -> int:
    """Stripe's monthly cycle: the same day of the month (the last day when the month is shorter)."""
    at = datetime.fromtimestamp(ts, UTC)
    month0 = at.month - 1 + months
    year, month = at.year + month0 // 12, month0 % 12 + 1
    day = min(at.day, calendar.monthrange(year, month)[1])
    return int(at.replace(year=year, month=month, day=day).timestamp())


# -- the catalogue -------------------------------------------------------------------------------------------

def product_object(product_id: str, name: str, created: int, default_price: str | None = None) -> dict[str, Any]:
    return {"id": product_id, "object": "product", "active": True, "created": created,
            "default_price": default_price, "description": None, "images": [], "livemode": False,
            "marketing_features": [], "metadata": {}, "name": name, "package_dimensions": None, "shippable": None,
            "statement_descriptor": None, "tax_code": None, "type": "service", "unit_label": None,
            "updated": created, "url": None}


def price_object(price_id: str, unit_amount: int, product: str, created: int, *, nickname: str | None = None,
                 lookup_key: str | None = None, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": price_id, "object": "price", "active": True, "billing_scheme": "per_unit", "created": created,
            "currency": CURRENCY, "custom_unit_amount": None, "livemode": False, "lookup_key": lookup_key,
            "metadata": metadata or {}, "nickname": nickname, "product": product,
            "recurring": {"interval": INTERVAL, "interval_count": 1, "meter": None, "trial_period_days": None,
                          "usage_type": "licensed"},
            "tax_behavior": "unspecified", "tiers_mode": None, "transform_quantity": None, "type": "recurring",
            "unit_amount": unit_amount, "unit_amount_decimal": str(unit_amount)}


def plan_object(price: dict[str, Any]) -> dict[str, Any]:
    """The legacy `plan` beside each subscription item's `price`, as Stripe still sends it."""
    return {"id": price["id"], "object": "plan", "active": True, "amount": price["unit_amount"],
            "amount_decimal": price["unit_amount_decimal"], "billing_scheme": "per_unit", "created": price["created"],
            "currency": price["currency"], "interval": INTERVAL, "interval_count": 1, "livemode": False,
            "metadata": {}, "meter": None, "nickname": price["nickname"], "product": price["product"],
            "tiers_mode": None, "transform_usage": None, "trial_period_days": None, "usage_type": "licensed"}


@dataclass
class Catalogue:
    """The account's products and prices (monthly, USD)."""

    prices: dict[str, dict[str, Any]] = field(default_factory=dict)
    products: dict[str, dict[str, Any]] = field(default_factory=dict)
    configured: dict[str, tuple[int, str]] = field(default_factory=dict)  # what the simulator started with

    @classmethod
    def of(cls, prices: Mapping[str, tuple[int, str]]) -> Catalogue:
        """The catalogue of these prices: price id → (monthly amount in cents, product name)."""
        catalogue = cls(configured=dict(prices))
        catalogue.reset()
        return catalogue

    def reset(self) -> None:
        self.prices.clear()
        self.products.clear()
        for price_id, (amount, name) in self.configured.items():
            product = self.add_product(name, CATALOGUE_CREATED)
            self.add_price(price_id, amount, product["id"], CATALOGUE_CREATED)

    def add_product(self, name: str, created: int) -> dict[str, Any]:
        product = product_object(new_id("prod", 14), name, created)
        self.products[product["id"]] = product
        return product

    def add_price(self, price_id: str, amount: int, product_id: str, created: int, **fields: Any) -> dict[str, Any]:
        price = price_object(price_id, amount, product_id, created, **fields)
        self.prices[price_id] = price
        product = self.products[product_id]
        product["default_price"] = product["default_price"] or price_id
        return price

    def product_name(self, price: dict[str, Any]) -> str:
        product = self.products.get(price["product"])
        return str(product["name"] if product else price["product"])


# -- idempotency keys ------------------------------------------------------------------------------------------

@dataclass
class Saved:
    """What an idempotency key is bound to: the endpoint and parameters of its first request, and once that has
    run, its answer (None while it is still executing)."""

    endpoint: str  # "POST /v1/..."
    fingerprint: str
    request_id: str
    at: float
    answer: tuple[int, bytes] | None = None


@dataclass
class Idempotency:
    keys: dict[str, Saved] = field(default_factory=dict)

    def get(self, key: str, at: float) -> Saved | None:
        saved = self.keys.get(key)
        if saved is not None and at - saved.at >= IDEMPOTENCY_TTL:  # pruned: the key is new again
            del self.keys[key]
            return None
        return saved

    def start(self, key: str, endpoint: str, fingerprint: str, request_id: str, at: float) -> Saved:
        saved = self.keys[key] = Saved(endpoint, fingerprint, request_id, at)
        return saved

    def forget(self, key: str) -> None:
        self.keys.pop(key, None)

    def clear(self) -> None:
        self.keys.clear()


def card_details(brand: str, funding: str, last4: str) -> dict[str, Any]:
    return {"brand": brand, "funding": funding, "last4": last4}


@dataclass
class State:
    catalogue: Catalogue = field(default_factory=Catalogue)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    customers: dict[str, dict[str, Any]] = field(default_factory=dict)
    subscriptions: dict[str, dict[str, Any]] = field(default_factory=dict)
    invoices: dict[str, dict[str, Any]] = field(default_factory=dict)
    idempotency: Idempotency = field(default_factory=Idempotency)
    collected: int = 0  # what paid invoices brought in (the balance)

    def reset(self) -> None:
        for table in (self.sessions, self.customers, self.subscriptions, self.invoices):
            table.clear()
        self.idempotency.clear()
        self.catalogue.reset()
        self.collected = 0

    # -- Checkout Sessions -----------------------------------------------------------------------------------

    def new_session(self, *, line_items: list[dict[str, Any]], mode: str, public_url: str, customer_email: str | None,
                    customer: str | None, client_reference_id: str | None, metadata: dict[str, Any], subscription_data: dict[str, Any],
                    payment_method_collection: str, success_url: str | None, cancel_url: str | None,
                    expires_at: int | None, allowed_payment_method_types: list[str] | None) -> dict[str, Any]:
        """An open Checkout Session of the hosted page (`ui_mode: hosted_page`). Its payment methods are the
        account's default configuration (dynamic payment methods; the simulator offers cards), filtered by
        `allowed_payment_method_types` when it was sent."""
        created = now()
        session_id = new_id("cs_test", 58)
        session = {
            "id": session_id, "object": "checkout.session", "adaptive_pricing": None, "after_expiration": None,
            "allow_promotion_codes": None, "allowed_payment_method_types": allowed_payment_method_types,
            "amount_subtotal": None, "amount_total": None,
            "automatic_tax": {"enabled": False, "liability": None, "provider": None, "status": None},
            "billing_address_collection": None, "branding_settings": None, "cancel_url": cancel_url,
            "client_reference_id": client_reference_id, "client_secret": None, "collected_information": None,
            "consent": None, "consent_collection": None, "created": created, "currency": CURRENCY,
            "custom_fields": [],
            "custom_text": {"after_submit": None, "shipping_address": None, "submit": None,
                            "terms_of_service_acceptance": None},
            "customer": customer, "customer_account": None, "customer_creation": None, "customer_details": None,
            "customer_email": customer_email, "discounts": [], "excluded_payment_method_types": None,
            "expires_at": expires_at or created + SESSION_LIFETIME, "integration_identifier": None, "invoice": None,
            "invoice_creation": None, "livemode": False, "locale": None, "managed_payments": None,
            "metadata": metadata, "mode": mode, "name_collection": None, "optional_items": None,
            "origin_context": None, "payment_intent": None, "payment_link": None,
            "payment_method_collection": payment_method_collection,
            "payment_method_configuration_details": {"id": PAYMENT_METHOD_CONFIGURATION, "parent": None},
            "payment_method_options": {"card": {"request_three_d_secure": "automatic"}},
            "payment_method_types": ["card"], "payment_status": "unpaid", "permissions": None,
            "phone_number_collection": {"enabled": False}, "presentment_details": None, "recovered_from": None,
            "redirect_on_completion": None, "return_url": None, "saved_payment_method_options": None,
            "setup_intent": None, "shipping_address_collection": None, "shipping_cost": None, "shipping_options": [],
            "status": "open", "submit_type": None, "subscription": None, "success_url": success_url,
            "tax_id_collection": {"enabled": False, "required": "never"},
            "total_details": {"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0}, "ui_mode": "hosted_page",
            "url": f"{public_url}/c/pay/{session_id}", "wallet_options": None,
            "_line_items": line_items,  # [{"price": price object, "quantity": n}]
            "_subscription_data": subscription_data,  # {"trial_period_days": n | None, "metadata": {...}}
        }
        total = sum(i["price"]["unit_amount"] * i["quantity"] for i in line_items)
        trial = bool(subscription_data.get("trial_period_days"))
        session["amount_subtotal"] = session["amount_total"] = 0 if trial else total
        self.sessions[session_id] = session
        return session

    # -- Customers ---------------------------------------------------------------------------------------------

    def new_customer(self, *, email: str | None, card: dict[str, Any], at: int) -> dict[str, Any]:
        payment_method = new_id("pm")
        customer: dict[str, Any] = {
            "id": new_id("cus", 14), "object": "customer", "address": None, "balance": 0, "business_name": None,
            "created": at, "currency": CURRENCY, "customer_account": None, "default_source": None,
            "delinquent": False, "description": None, "discount": None, "email": email, "individual_name": None,
            "invoice_prefix": "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(8)),
            "invoice_settings": {"custom_fields": None, "default_payment_method": payment_method, "footer": None,
                                 "rendering_options": None},
            "livemode": False, "metadata": {}, "name": None, "next_invoice_sequence": 1, "phone": None,
            "preferred_locales": [], "shipping": None, "tax_exempt": "none", "test_clock": None,
            "_card": {"id": payment_method, **card},
        }
        self.customers[customer["id"]] = customer
        return customer

    # -- Subscriptions -----------------------------------------------------------------------------------------

    def new_subscription(self, *, customer: dict[str, Any], line_items: list[dict[str, Any]], metadata: dict[str, Any], trial_days: int,
                         at: int) -> dict[str, Any]:
        """A subscription started by a checkout: `trialing` with a trial, else `incomplete` until its first
        invoice is paid (at once, on the checkout page)."""
        sub_id = new_id("sub")
        trial_end = at + trial_days * DAY if trial_days else None
        period_end = trial_end or add_months(at)
        items = [{"id": new_id("si", 14), "object": "subscription_item", "billed_until": None,
                  "billing_thresholds": None, "created": at, "current_period_end": period_end,
                  "current_period_start": at, "current_trial": None, "discounts": [], "metadata": {},
                  "plan": plan_object(item["price"]), "price": copy.deepcopy(item["price"]),
                  "quantity": item["quantity"], "subscription": sub_id, "tax_rates": []} for item in line_items]
        sub = {
            "id": sub_id, "object": "subscription", "application": None, "application_fee_percent": None,
            "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None},
            "billing_cycle_anchor": period_end if trial_end else at, "billing_cycle_anchor_config": None,
            "billing_mode": {"flexible": None, "type": "classic", "updated_at": None}, "billing_schedules": [],
            "billing_thresholds": None, "cancel_at": None, "cancel_at_period_end": False, "canceled_at": None,
            "cancellation_details": {"comment": None, "feedback": None, "reason": None},
            "collection_method": "charge_automatically", "created": at, "currency": CURRENCY,
            "customer": customer["id"], "customer_account": None, "days_until_due": None,
            "default_payment_method": customer["invoice_settings"]["default_payment_method"], "default_source": None,
            "default_tax_rates": [], "description": None, "discounts": [], "ended_at": None,
            "invoice_settings": {"account_tax_ids": None, "issuer": {"type": "self"}},
            "items": {"object": "list", "data": items, "has_more": False, "total_count": len(items),
                      "url": f"/v1/subscription_items?subscription={sub_id}"},
            "latest_invoice": None, "livemode": False, "managed_payments": None, "metadata": metadata,
            "next_pending_invoice_item_invoice": None, "on_behalf_of": None, "pause_collection": None,
            "payment_settings": {"payment_method_options": None, "payment_method_types": None,
                                 "save_default_payment_method": "off"},
            "pending_invoice_item_interval": None, "pending_setup_intent": None, "pending_update": None,
            "presentment_details": None, "schedule": None, "start_date": at,
            "status": "trialing" if trial_end else "incomplete", "status_details": None, "test_clock": None,
            "transfer_data": None, "trial_end": trial_end,
            "trial_settings": {"end_behavior": {"missing_payment_method": "create_invoice"}},
            "trial_start": at if trial_end else None,
            # the billing clock (see billing): the moment last played, the next one and when; the card's fate
            "_clock": at, "_next": "trial_end" if trial_end else "renewal", "_next_at": period_end,
            "_decline": None, "_needs_action": False, "_open_invoice": None, "_draft": None, "_retries": [],
            "_stamp": 0, "_prorations": [],  # quantity changes' prorations, for the next invoice
        }
        self.subscriptions[sub_id] = sub
        return sub

    @staticmethod
    def set_period(sub: dict[str, Any], start: int, end: int) -> None:
        for item in sub["items"]["data"]:
            item["current_period_start"], item["current_period_end"] = start, end

    # -- Invoices --------------------------------------------------------------------------------------------

    def new_invoice(self, *, sub: dict[str, Any], billing_reason: str, at: int, period: tuple[int, int],
                    trial: bool) -> dict[str, Any]:
        """A draft invoice of the subscription's items for `period` (0 during a trial); `finalize` opens it."""
        customer = self.customers[sub["customer"]]
        invoice_id = new_id("in")
        lines = []
        for item in sub["items"]["data"]:
            price = item["price"]
            amount = 0 if trial else price["unit_amount"] * (item["quantity"] or 1)
            name = self.catalogue.product_name(price)
            label = f"Trial period for {name}" if trial else \
                f"{item['quantity']} × {name} (at ${price['unit_amount'] / 100:.2f} / {INTERVAL})"
            lines.append({
                "id": new_id("il"), "object": "line_item", "amount": amount, "currency": CURRENCY,
                "description": label, "discount_amounts": [], "discountable": True, "discounts": [],
                "invoice": invoice_id, "livemode": False, "metadata": {},
                "parent": {"invoice_item_details": None, "type": "subscription_item_details",
                           "subscription_item_details": {"invoice_item": None, "proration": False,
                                                         "proration_details": {"credited_items": None},
                                                         "subscription": sub["id"], "subscription_item": item["id"]}},
                "period": {"end": period[1], "start": period[0]}, "pretax_credit_amounts": [],
                "pricing": {"price_details": {"price": price["id"], "product": price["product"]},
                            "type": "price_details", "unit_amount_decimal": price["unit_amount_decimal"]},
                "quantity": item["quantity"], "quantity_decimal": str(item["quantity"]), "subtotal": amount,
                "taxes": []})
        if not trial:  # the prorations of quantity changes since the last invoice
            lines += [{**line, "invoice": invoice_id} for line in sub["_prorations"]]
            sub["_prorations"] = []
        total = sum(line["amount"] for line in lines)
        usage_period = (at, at) if billing_reason == "subscription_create" else period_before(sub, period[0])
        invoice = {
            "id": invoice_id, "object": "invoice", "account_country": "US", "account_name": ACCOUNT_NAME,
            "account_tax_ids": None, "amount_due": total, "amount_overpaid": 0, "amount_paid": 0,
            "amount_paid_off_stripe": 0, "amount_remaining": total, "amount_shipping": 0, "application": None,
            "attempt_count": 0, "attempted": False, "auto_advance": True,
            "automatic_tax": {"disabled_reason": None, "enabled": False, "liability": None, "provider": None,
                              "status": None},
            "automatically_finalizes_at": at + HOUR, "billing_reason": billing_reason,
            "collection_method": "charge_automatically", "confirmation_secret": None, "created": at,
            "currency": CURRENCY, "custom_fields": None, "customer": customer["id"], "customer_account": None,
            "customer_address": None, "customer_email": customer["email"], "customer_name": None,
            "customer_phone": None, "customer_shipping": None, "customer_tax_exempt": "none", "customer_tax_ids": [],
            "default_payment_method": None, "default_source": None, "default_tax_rates": [], "description": None,
            "discounts": [], "due_date": None, "effective_at": None, "ending_balance": None, "footer": None,
            "from_invoice": None, "hosted_invoice_url": None, "invoice_pdf": None, "issuer": {"type": "self"},
            "last_finalization_error": None, "latest_revision": None,
            "lines": {"object": "list", "data": lines, "has_more": False, "total_count": len(lines),
                      "url": f"/v1/invoices/{invoice_id}/lines"},
            "livemode": False, "metadata": {}, "next_payment_attempt": at + HOUR, "number": None,
            "on_behalf_of": None,
            "parent": {"quote_details": None, "type": "subscription_details",
                       "subscription_details": {"metadata": dict(sub["metadata"]), "subscription": sub["id"]}},
            "payment_settings": {"default_mandate": None, "payment_method_options": None,
                                 "payment_method_types": None},
            "period_end": usage_period[1], "period_start": usage_period[0], "post_payment_credit_notes_amount": 0,
            "pre_payment_credit_notes_amount": 0, "receipt_number": None, "rendering": None, "shipping_cost": None,
            "shipping_details": None, "starting_balance": 0, "statement_descriptor": None, "status": "draft",
            "status_details": None,
            "status_transitions": {"finalized_at": None, "marked_uncollectible_at": None, "paid_at": None,
                                   "voided_at": None},
            "subtotal": total, "subtotal_excluding_tax": total, "test_clock": None, "threshold_reason": None,
            "total": total, "total_discount_amounts": [], "total_excluding_tax": total,
            "total_pretax_credit_amounts": [], "total_taxes": [], "webhooks_delivered_at": None,
        }
        self.invoices[invoice_id] = invoice
        sub["latest_invoice"] = invoice_id
        return invoice

    def prorate(self, sub: dict[str, Any], item: dict[str, Any], change: int, at: int) -> None:
        """A quantity change's share of the rest of the current period, as a proration line of the next invoice
        (a credit for a lower quantity)."""
        start, end = item["current_period_start"], item["current_period_end"]
        at = min(max(at, start), end)  # the period's dates are the planned ones (billing), ahead of the clock
        price = item["price"]
        amount = round(price["unit_amount"] * change * max(end - at, 0) / max(end - start, 1))
        name = self.catalogue.product_name(price)
        word = "Remaining" if change > 0 else "Unused"
        sub["_prorations"].append({
            "id": new_id("il"), "object": "line_item", "amount": amount, "currency": CURRENCY,
            "description": f"{word} time on {abs(change)} × {name} after {datetime.fromtimestamp(at, UTC):%d %b %Y}",
            "discount_amounts": [], "discountable": False, "discounts": [], "invoice": None, "livemode": False,
            "metadata": {},
            "parent": {"invoice_item_details": None, "type": "subscription_item_details",
                       "subscription_item_details": {"invoice_item": new_id("ii"), "proration": True,
                                                     "proration_details": {"credited_items": None},
                                                     "subscription": sub["id"], "subscription_item": item["id"]}},
            "period": {"end": end, "start": at}, "pretax_credit_amounts": [],
            "pricing": {"price_details": {"price": price["id"], "product": price["product"]},
                        "type": "price_details", "unit_amount_decimal": price["unit_amount_decimal"]},
            "quantity": abs(change), "quantity_decimal": str(abs(change)), "subtotal": amount, "taxes": []})

    def finalize(self, invoice: dict[str, Any], at: int, public_url: str) -> None:
        """The draft becomes open: numbered, payable at its hosted page."""
        customer = self.customers[invoice["customer"]]
        sequence = customer["next_invoice_sequence"]
        customer["next_invoice_sequence"] = sequence + 1
        invoice.update(status="open", number=f"{customer['invoice_prefix']}-{sequence:04d}", effective_at=at,
                       automatically_finalizes_at=None, ending_balance=0, next_payment_attempt=None,
                       hosted_invoice_url=f"{public_url}/i/{invoice['id']}",
                       invoice_pdf=f"{public_url}/i/{invoice['id']}/pdf",
                       webhooks_delivered_at=invoice["webhooks_delivered_at"] or at)
        invoice["status_transitions"]["finalized_at"] = at

    def mark_paid(self, invoice: dict[str, Any], at: int) -> None:
        invoice.update(status="paid", amount_paid=invoice["amount_due"], amount_remaining=0, attempted=True,
                       attempt_count=invoice["attempt_count"] + (1 if invoice["amount_due"] else 0),
                       next_payment_attempt=None)
        invoice["status_transitions"]["paid_at"] = at
        self.collected += invoice["amount_due"]

    @staticmethod
    def mark_failed(invoice: dict[str, Any], next_attempt: int | None) -> None:
        invoice.update(attempted=True, attempt_count=invoice["attempt_count"] + 1, next_payment_attempt=next_attempt)

    # -- the balance -----------------------------------------------------------------------------------------

    def balance(self) -> dict[str, Any]:
        return {"object": "balance", "livemode": False,
                "available": [{"amount": self.collected, "currency": CURRENCY,
                               "source_types": {"card": self.collected}}],
                "pending": [{"amount": 0, "currency": CURRENCY, "source_types": {"card": 0}}],
                "connect_reserved": [{"amount": 0, "currency": CURRENCY}],
                "refund_and_dispute_prefunding": {"available": [{"amount": 0, "currency": CURRENCY}],
                                                  "pending": [{"amount": 0, "currency": CURRENCY}]}}


def period_before(sub: dict[str, Any], start: int) -> tuple[int, int]:
    """The period an invoice at `start` closes (the trial, or the month before)."""
    if sub["trial_end"] == start and sub["trial_start"] is not None:
        return sub["trial_start"], start
    return add_months(start, -1), start
