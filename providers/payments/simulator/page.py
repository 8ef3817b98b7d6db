"""The hosted checkout page (`/c/pay/{session id}`): what is bought, and a card form prefilled with Stripe's
success test card; the hosted invoice page (`/i/{invoice id}`) with the same form. Plain HTML, no script: a browser, a test's HTTP client or a person can all submit it."""
from __future__ import annotations

from html import escape

from providers.payments.simulator.cards import GOOD

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
"""


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def checkout_page(session: dict, *, error: str | None = None, detail: str | None = None,
                  values: dict | None = None) -> str:
    values = {**PREFILL, **(values or {})}
    items = session["_line_items"]
    trial_days = session["_subscription_data"].get("trial_period_days")
    total = sum(i["price"]["unit_amount"] * i["quantity"] for i in items) / 100
    prices = ", ".join(f"{i['quantity']} × {i['price']['id']}" for i in items)
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
        f"<h1>Subscribe</h1><p class=\"muted\">Plan <code id=\"price\">{escape(prices)}</code></p>"
        f'<p class="trial">{escape(headline)}</p><p class="muted">{escape(then)}</p>'
        + (f'<p>Email <strong id="email">{escape(email)}</strong></p>' if email else "")
        + _card_form(f"/c/pay/{session['id']}", action, values, error, detail) + cancel
        + '<p class="test">Test mode: 4242 4242 4242 4242 works; 4000 0000 0000 0002 and 4000 0000 0000 9995 are '
        "declined; 4000 0000 0000 0341 starts the trial but every later charge fails.</p>")
    return _page("Checkout", body)


def invoice_page(invoice: dict, *, error: str | None = None, detail: str | None = None,
                 values: dict | None = None) -> str:
    """The hosted invoice page (`/i/{invoice id}`): an open invoice, paid with the card given here (which becomes
    the subscription's card)."""
    values = {**PREFILL, **(values or {})}
    body = (f"<h1>Invoice <code id=\"invoice\">{escape(invoice['id'])}</code></h1>"
            f'<p class="trial">${invoice["amount_due"] / 100:,.2f} due</p>'
            f'<p class="muted">Your last payment did not go through: pay with this card, or another.</p>'
            + _card_form(f"/i/{invoice['id']}", "Pay", values, error, detail)
            + '<p class="test">Test mode: 4242 4242 4242 4242 works; 4000 0000 0000 0002 is declined.</p>')
    return _page("Invoice", body)


def _card_form(action_path: str, button: str, values: dict, error: str | None, detail: str | None) -> str:
    problem = ""
    if error:
        problem = f'<div id="error" role="alert">{escape(error)}' + \
            (f" {escape(detail)}" if detail else "") + "</div>"
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
