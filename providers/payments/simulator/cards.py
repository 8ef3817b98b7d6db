"""Stripe's test cards, as the hosted checkout page treats them (any future expiry, any 3-4 digit CVC):

- `4242 4242 4242 4242` (and any other Luhn-valid 16-digit number not listed here): succeeds, now and later;
- `4000 0000 0000 0002`: declined (`generic_decline`);
- `4000 0000 0000 9995`: declined (`insufficient_funds`);
- `4000 0000 0000 0341`: attaches to the customer, but every charge fails (the trial starts; the first real
  invoice fails). Without a trial the first charge is due at once, so checkout declines it.
- `4000 0027 6000 3184`: every charge after the checkout needs the customer's authentication (3-D Secure): the
  invoice stays open, `invoice.payment_failed` and `invoice.payment_action_required` (its hosted_invoice_url is
  where the customer authenticates).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

GOOD = "4242424242424242"
DECLINES = {"4000000000000002": "generic_decline", "4000000000009995": "insufficient_funds"}
CHARGES_FAIL = "4000000000000341"
NEEDS_ACTION = "4000002760003184"

DECLINED = "Your card was declined."
DECLINE_DETAIL = {"insufficient_funds": "Your card has insufficient funds."}
INVALID_NUMBER = "Your card number is invalid."
INCOMPLETE_EXPIRY = "Your card's expiration date is incomplete."
PAST_EXPIRY = "Your card's expiration year is in the past."
INCOMPLETE_CVC = "Your card's security code is incomplete."


@dataclass(frozen=True)
class Refusal:
    status: int  # 400: the form is wrong; 402: the card was declined
    message: str
    detail: str | None = None


def digits(number: str) -> str:
    return re.sub(r"[\s-]", "", number or "")


def luhn_ok(number: str) -> bool:
    total = 0
    for n, char in enumerate(reversed(number)):
        d = int(char)
        if n % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def check(number: str, expiry: str, cvc: str, *, charge_now: bool) -> Refusal | None:
    """Why the form's card cannot be used (None: it can). `number` already without spaces."""
    if not re.fullmatch(r"\d{16}", number) or not luhn_ok(number):
        return Refusal(400, INVALID_NUMBER)
    match = re.fullmatch(r"\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*", expiry or "")
    if not match or not 1 <= int(match.group(1)) <= 12:
        return Refusal(400, INCOMPLETE_EXPIRY)
    month, year = int(match.group(1)), int(match.group(2))
    year += 2000 if year < 100 else 0
    today = datetime.now(UTC)
    if (year, month) < (today.year, today.month):
        return Refusal(400, PAST_EXPIRY)
    if not re.fullmatch(r"\s*\d{3,4}\s*", cvc or ""):
        return Refusal(400, INCOMPLETE_CVC)
    if number in DECLINES:
        return Refusal(402, DECLINED, DECLINE_DETAIL.get(DECLINES[number]))
    if number == CHARGES_FAIL and charge_now:
        return Refusal(402, DECLINED)
    return None


def charges_fail(number: str) -> bool:
    return number == CHARGES_FAIL


def needs_action(number: str) -> bool:
    return number == NEEDS_ACTION
