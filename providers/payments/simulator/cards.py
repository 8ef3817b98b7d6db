"""Stripe's test cards (https://docs.stripe.com/testing), as the hosted checkout and invoice pages treat them.

Test mode takes only Stripe's test card numbers: any other number, however valid, is declined the way Stripe's
test mode declines a real card (`card_declined`, decline code `test_mode_live_card`). Any future expiry; a 3-digit
CVC, 4 digits for American Express.

- Cards by brand (they work, now and later): Visa 4242 4242 4242 4242 and 4000 0566 5566 5556 (debit), Mastercard
  5555 5555 5555 4444, 2223 0031 2200 3222, 5200 8282 8282 8210 (debit), 5105 1051 0510 5100 (prepaid), American
  Express 3782 822463 10005 and 3714 496353 98431, Discover 6011 1111 1111 1117, 6011 0009 9013 9424, 6011 9811 1111
  1113 (debit), Diners Club 3056 9300 0902 0004 and 3622 720627 1667 (14 digits), BCcard and DinaCard
  6555 9000 0060 4105, JCB 3566 0020 2036 0505, UnionPay 6200 0000 0000 0005, 6200 0000 0000 0047 (debit) and
  6205 5000 0000 0000 004 (19 digits).
- Declined at the checkout (the card is checked when it is set up for the trial, or charged): 4000 0000 0000 0002
  `card_declined`/`generic_decline`, ...9995 `insufficient_funds`, ...9987 `lost_card`, ...9979 `stolen_card`,
  ...6975 `card_velocity_exceeded`, 4100 0000 0000 0019 `fraudulent` (blocked), ...0069 `expired_card`, ...0127
  `incorrect_cvc`, ...0119 `processing_error`; 4242 4242 4242 4241 is not a valid number (`incorrect_number`:
  the page says it is invalid).
- 4000 0000 0000 0341: attaches to the customer, but every charge fails (`generic_decline`): the trial starts, the
  first real invoice fails; without a trial the charge at the checkout is declined.
- 3-D Secure: the checkout page (as the hosted invoice page) answers with the bank's challenge, "Complete" or
  "Fail" (Stripe's test authentication page); completed, the card is set up for later off-session payments.
  4000 0025 0000 3155 and 4000 0038 0000 0446 then pay off-session without asking again; 4000 0027 6000 3184 asks
  on every charge, so each renewal stays open with `invoice.payment_action_required` (its hosted_invoice_url is
  where the customer authenticates); 4000 0082 6000 3178 authenticates, then every charge is declined
  `insufficient_funds`; 4000 0000 0000 3220 and 4000 0000 0000 3063 (3DS2, "must be completed") pay after it;
  4000 0084 0000 1629 is declined (`card_declined`) after it. A failed challenge: "We are unable to authenticate
  your payment method..." (`setup_intent_authentication_failure`, or `payment_intent_authentication_failure` when
  the checkout charges at once).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

GOOD = "4242424242424242"
AMEX = "378282246310005"
GENERIC_DECLINE = "4000000000000002"
CHARGES_FAIL = "4000000000000341"
AUTHENTICATE_ONCE = "4000002500003155"  # 3DS when set up; off-session payments afterwards go through
NEEDS_ACTION = "4000002760003184"  # 3DS on every payment, off-session ones too

DECLINED = "Your card was declined."
LIVE_CARD = ("Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of "
             "valid test cards, visit: https://stripe.com/docs/testing.")
AUTHENTICATION_FAILED = ("We are unable to authenticate your payment method. Please choose a different payment method "
                         "and try again.")
INCOMPLETE_NUMBER = "Your card number is incomplete."
INVALID_NUMBER = "Your card number is invalid."
INCOMPLETE_EXPIRY = "Your card's expiration date is incomplete."
PAST_EXPIRY = "Your card's expiration year is in the past."
INCOMPLETE_CVC = "Your card's security code is incomplete."
INVALID_CVC = "Your card's security code is invalid."

# Stripe's messages for its error codes and decline codes.
MESSAGES = {"generic_decline": DECLINED, "insufficient_funds": "Your card has insufficient funds.",
            "lost_card": DECLINED, "stolen_card": DECLINED, "fraudulent": DECLINED,
            "card_velocity_exceeded": "Your card was declined for making repeated attempts too frequently or "
                                      "exceeding its amount limit.",
            "expired_card": "Your card has expired.", "incorrect_cvc": "Your card's security code is incorrect.",
            "processing_error": "An error occurred while processing your card. Try again in a little bit.",
            "authentication_required": "Your card was declined. This transaction requires authentication.",
            "test_mode_live_card": LIVE_CARD}


@dataclass(frozen=True)
class Card:
    """A test card: its brand and funding, and how Stripe's test mode treats it. `decline`: declined whenever it is
    set up or charged, with this decline code; `later`: the decline code of every charge after the checkout
    (`authentication_required`: the bank asks the customer, off-session); `authenticate`: the checkout answers
    with a 3-D Secure challenge; `after_authentication`: the decline code once the challenge is completed."""

    brand: str
    funding: str = "credit"
    decline: str | None = None
    later: str | None = None
    authenticate: bool = False
    after_authentication: str | None = None


BRANDS = {
    GOOD: Card("visa"), "4000056655665556": Card("visa", "debit"),
    "5555555555554444": Card("mastercard"), "2223003122003222": Card("mastercard"),
    "5200828282828210": Card("mastercard", "debit"), "5105105105105100": Card("mastercard", "prepaid"),
    AMEX: Card("amex"), "371449635398431": Card("amex"),
    "6011111111111117": Card("discover"), "6011000990139424": Card("discover"),
    "6011981111111113": Card("discover", "debit"),
    "3056930009020004": Card("diners"), "36227206271667": Card("diners"),
    "6555900000604105": Card("discover"),  # BCcard and DinaCard
    "3566002020360505": Card("jcb"),
    "6200000000000005": Card("unionpay"), "6200000000000047": Card("unionpay", "debit"),
    "6205500000000000004": Card("unionpay"),
}
BEHAVIOURS = {
    GENERIC_DECLINE: Card("visa", decline="generic_decline"),
    "4000000000009995": Card("visa", decline="insufficient_funds"),
    "4000000000009987": Card("visa", decline="lost_card"),
    "4000000000009979": Card("visa", decline="stolen_card"),
    "4000000000006975": Card("visa", decline="card_velocity_exceeded"),
    "4100000000000019": Card("visa", decline="fraudulent"),
    "4000000000000069": Card("visa", decline="expired_card"),
    "4000000000000127": Card("visa", decline="incorrect_cvc"),
    "4000000000000119": Card("visa", decline="processing_error"),
    CHARGES_FAIL: Card("visa", later="generic_decline"),
    AUTHENTICATE_ONCE: Card("visa", authenticate=True),
    "4000003800000446": Card("visa", authenticate=True),
    NEEDS_ACTION: Card("visa", authenticate=True, later="authentication_required"),
    "4000008260003178": Card("visa", authenticate=True, after_authentication="insufficient_funds",
                             later="insufficient_funds"),
    "4000000000003220": Card("visa", authenticate=True),
    "4000000000003063": Card("visa", authenticate=True),
    "4000008400001629": Card("visa", authenticate=True, after_authentication="generic_decline"),
}
TEST_CARDS = {**BRANDS, **BEHAVIOURS}
# Codes that are error codes of their own (the rest are `card_declined` with a decline code).
OWN_CODES = ("expired_card", "incorrect_cvc", "processing_error", "authentication_required")


@dataclass(frozen=True)
class Refusal:
    """Why a card cannot be used: 400 the form is wrong (the page's own check), 402 Stripe declined it (`code`,
    `decline_code` as Stripe's card error carries them)."""

    status: int
    message: str
    code: str | None = None
    decline_code: str | None = None


def declined(decline_code: str) -> Refusal:
    """Stripe's card error for a decline code (or an error code of its own, such as expired_card)."""
    code = decline_code if decline_code in OWN_CODES else "card_declined"
    return Refusal(402, MESSAGES.get(decline_code, DECLINED), code, decline_code)


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


def brand_of(number: str) -> str:
    """The brand a number's first digits name, as a card form tells it while it is typed."""
    if re.match(r"3[47]", number):
        return "amex"
    if re.match(r"3(0[0-5]|[689])", number):
        return "diners"
    if re.match(r"35", number):
        return "jcb"
    if re.match(r"62", number):
        return "unionpay"
    if re.match(r"6(011|5|4[4-9])", number):
        return "discover"
    if re.match(r"(5[1-5]|2[2-7])", number):
        return "mastercard"
    if number.startswith("4"):
        return "visa"
    return "unknown"


def lengths(brand: str) -> tuple[int, ...]:
    return {"amex": (15,), "diners": (14, 16), "unionpay": (16, 17, 18, 19)}.get(brand, (16,))


def form_refusal(number: str, expiry: str, cvc: str) -> Refusal | None:
    """What the card form itself refuses, before anything is sent (`number` without spaces): a number too short
    or not a card number, an incomplete or past expiry, a CVC of the wrong length for the brand."""
    brand = brand_of(number)
    if not re.fullmatch(r"\d+", number) or len(number) < min(lengths(brand)):
        return Refusal(400, INCOMPLETE_NUMBER if re.fullmatch(r"\d*", number) else INVALID_NUMBER)
    if len(number) not in lengths(brand) or not luhn_ok(number):
        return Refusal(400, INVALID_NUMBER, "incorrect_number")
    match = re.fullmatch(r"\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*", expiry or "")
    if not match or not 1 <= int(match.group(1)) <= 12:
        return Refusal(400, INCOMPLETE_EXPIRY)
    month, year = int(match.group(1)), int(match.group(2))
    year += 2000 if year < 100 else 0
    today = datetime.now(UTC)
    if (year, month) < (today.year, today.month):
        return Refusal(400, PAST_EXPIRY)
    cvc = (cvc or "").strip()
    want = 4 if brand == "amex" else 3
    if not re.fullmatch(r"\d*", cvc) or len(cvc) > want:
        return Refusal(400, INVALID_CVC)
    if len(cvc) < want:
        return Refusal(400, INCOMPLETE_CVC)
    return None


def card_of(number: str) -> Card | None:
    """The test card with this number; None for any other (a real card, which test mode declines)."""
    return TEST_CARDS.get(number)


def on_session(number: str, *, charge_now: bool, authenticated: bool = False) -> Refusal | None:
    """Why Stripe refuses the card when the customer sets it up or pays with it at a hosted page (None: it goes
    through). `charge_now`: the page charges it (no trial); `authenticated`: its 3-D Secure challenge was
    completed (a card that asks for one is not refused for that here: the page asks first)."""
    card = card_of(number)
    if card is None:
        return declined("test_mode_live_card")
    if card.decline:
        return declined(card.decline)
    if authenticated and card.after_authentication and (charge_now or card.after_authentication != card.later):
        return declined(card.after_authentication)
    if charge_now and card.later and card.later != "authentication_required":
        return declined(card.later)
    return None


def needs_authentication(number: str) -> bool:
    card = card_of(number)
    return card is not None and card.authenticate


def later_decline(number: str) -> str | None:
    """The decline code of every off-session charge after the checkout (None: they go through)."""
    card = card_of(number)
    return card.later if card is not None else None
