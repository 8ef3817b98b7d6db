"""The hosted checkout page (`/c/pay/{session id}`): what is bought, and a card form prefilled with Stripe's
success test card; the hosted invoice page (`/i/{invoice id}`) with the same form; the bank's 3-D Secure challenge
(Stripe's test page: "Complete" or "Fail"). A refusal shows Stripe's message in `#error`, with its `data-code` and
`data-decline-code`. Plain HTML, no script: a browser, a test's HTTP client or a person can all submit it."""
from __future__ import annotations

from html import escape
from typing import Any

from providers.payments.simulator.cards import GOOD, Refusal
from providers.payments.simulator.objects import Catalogue

PREFILL = {"cardNumber": " ".join(GOOD[i:i + 4] for i in range(0, 16, 4)), "cardExpiry": "12 / 34", "cardCvc": "123"}

STYLE = """
body { font-family: -apple-system, system-ui, sans-serif; background: #f6f9fc; color: #1a1f36; margin: 0; }
main { max-width: 420px; margin: 48px auto; background: #fff; padding: 32px; border-radius: 8px;
       box-shadow: 0 2px 8px rgba(0,0,0,.08); }
h1 { font-size: 20px; margin: 0 0 4px; } .muted { color: #697386; font-size: 14px; }
.trial { font-size: 24px; font-weight: 600; margin: 16px 0 4px; }
label { display: block; font-size: 13px; margin: 16px 0 4px; color: #3c4257; }
input { width: 100%; box-sizing: border-box; padding: 10px; font-size: 16px; border: 1px solid #e0e6eb;
        border-radius: 6px; }
.row { display: flex; gap: 12px; } .row > div { flex: 1; }
button { width: 100%; margin-top: 24px; padding: 12px; font-size: 16px; color: #fff; background: #635bff;
         border: 0; border-radius: 6px; cursor: pointer; }
#error { color: #df1b41; margin-top: 16px; } .test { margin-top: 16px; font-size: 12px; color: #697386; }
button.secondary { background: #fff; color: #635bff; border: 1px solid #635bff; }
"""
TEST_NOTE = ("Test mode: only Stripe's test cards are taken. 4242 4242 4242 4242 works (any future date, any CVC: "
             "4 digits for American Express 3782 822463 10005); 4000 0000 0000 0002 and 4000 0000 0000 9995 are "
             "declined; 4000 0000 0000 0341 starts the trial but every later charge fails; 4000 0025 0000 3155 asks "
             "your bank to authenticate (3-D Secure).")


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def checkout_page(session: dict[str, Any], catalogue: Catalogue, *, refusal: Refusal | None = None,
                  values: dict[str, Any] | None = None) -> str:
    values = {**PREFILL, **(values or {})}
    items = session["_line_items"]
    trial_days = session["_subscription_data"].get("trial_period_days")
    total = sum(i["price"]["unit_amount"] * i["quantity"] for i in items) / 100
    names = ", ".join(f"{i['quantity']} × {catalogue.product_name(i['price'])}" for i in items)
    prices = ", ".join(i["price"]["id"] for i in items)
    if trial_days:
        headline = f"{trial_days}-day free trial"
        then = f"Then ${total:,.2f} per month"
        action = "Start trial"
    else:
        headline = f"${total:,.2f} per month"
        then = "Billed monthly"
        action = "Subscribe"
    email = session.get("customer_email")
    cancel = f'<p class="muted"><a id="cancel" href="{escape(session["cancel_url"])}">Cancel</a></p>' \
        if session.get("cancel_url") else ""
    body = (
        f"<h1>Subscribe to {escape(names)}</h1><p class=\"muted\">Price <code id=\"price\">{escape(prices)}</code></p>"
        f'<p class="trial">{escape(headline)}</p><p class="muted">{escape(then)}</p>'
        + (f'<p>Email <strong id="email">{escape(email)}</strong></p>' if email else "")
        + _card_form(f"/c/pay/{session['id']}", action, values, refusal) + cancel
        + f'<p class="test">{TEST_NOTE}</p>')
    return _page("Checkout", body)


def invoice_page(invoice: dict[str, Any], *, refusal: Refusal | None = None, values: dict[str, Any] | None = None) -> str:
    """The hosted invoice page (`/i/{invoice id}`): an open invoice, paid with the card given here (which becomes
    the subscription's card)."""
    values = {**PREFILL, **(values or {})}
    body = (f"<h1>Invoice <code id=\"invoice\">{escape(invoice['number'] or invoice['id'])}</code></h1>"
            f'<p class="trial">${invoice["amount_due"] / 100:,.2f} due</p>'
            f'<p class="muted">Your last payment did not go through: pay with this card, or another.</p>'
            + _card_form(f"/i/{invoice['id']}", "Pay", values, refusal)
            + f'<p class="test">{TEST_NOTE}</p>')
    return _page("Invoice", body)


def challenge_page(action_path: str, challenge_id: str, amount: int) -> str:
    """The bank's 3-D Secure challenge, as Stripe's test authentication page shows it: complete it or fail it."""
    body = ("<h1>3D Secure 2 Test Page</h1>"
            '<p class="muted">Your bank asks you to confirm this card'
            + (f" for a payment of ${amount / 100:,.2f}" if amount else " for future payments") + ".</p>"
            f'<form method="post" action="{escape(action_path)}">'
            f'<input type="hidden" name="challenge" value="{escape(challenge_id)}">'
            f'<button type="submit" id="complete" name="result" value="complete">Complete</button>'
            f'<button type="submit" id="fail" name="result" value="fail" class="secondary">Fail</button></form>')
    return _page("Authenticate", body)


def _card_form(action_path: str, button: str, values: dict[str, Any], refusal: Refusal | None) -> str:
    problem = ""
    if refusal is not None:
        codes = "".join(f' data-{name}="{escape(value)}"' for name, value in (
            ("code", refusal.code), ("decline-code", refusal.decline_code)) if value)
        problem = f'<div id="error" role="alert"{codes}>{escape(refusal.message)}</div>'
    return (f'<form method="post" action="{escape(action_path)}">'
            f'<label for="cardNumber">Card number</label>'
            f'<input id="cardNumber" name="cardNumber" inputmode="numeric" autocomplete="cc-number" '
            f'value="{escape(values["cardNumber"])}">'
            f'<div class="row"><div><label for="cardExpiry">Expiration</label>'
            f'<input id="cardExpiry" name="cardExpiry" autocomplete="cc-exp" value="{escape(values["cardExpiry"])}">'
            f'</div><div><label for="cardCvc">CVC</label>'
            f'<input id="cardCvc" name="cardCvc" autocomplete="cc-csc" value="{escape(values["cardCvc"])}"></div></div>'
            f"{problem}"
            f'<button type="submit" id="submit">{escape(button)}</button></form>')


def notice_page(title: str, message: str) -> str:
    return _page(title, f"<h1>{escape(title)}</h1><p id=\"notice\">{escape(message)}</p>")
