"""Phone numbers and email addresses, checked with real libraries (libphonenumber, email-validator),
never with patterns of our own. Errors name the field and say what to send instead."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import phonenumbers
from email_validator import EmailNotValidError, validate_email

from core.errors import invalid

# The shape of an E.164 number as published in the schemas; libphonenumber decides whether it exists.
E164_PATTERN = r"^\+[1-9][0-9]{5,14}$"
# Area codes as the pool lists them (digits only).
AREA_CODE_PATTERN = "^[0-9]{1,5}$"
# The regions (ISO 3166 codes) libphonenumber knows numbers of.
REGIONS = tuple(sorted(phonenumbers.SUPPORTED_REGIONS))


def normalize_e164(value: str, field: str = "phone_number", error: Callable[[str], Exception] = invalid) -> str:
    """The number in E.164, or `error` naming the field. Input must already be E.164 (no spaces)."""
    text = value.strip()
    if not text.startswith("+"):
        raise error(f"{field} must be in E.164 form: a plus sign, the country code and the number, "
                    "e.g. +14155550123")
    try:
        number = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException as exc:
        raise error(f"{field} is not a phone number: {exc}") from None
    if not phonenumbers.is_valid_number(number):
        raise error(f"{field} {text} is not a valid phone number")
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    if e164 != text:
        raise error(f"{field} must be written in E.164 without spaces or punctuation, e.g. {e164}")
    return e164


def parsed_e164(text: str, region: str | None = None) -> str | None:
    """`text` in E.164 when libphonenumber reads a valid number in it (E.164 with any spaces or punctuation, or the
    national format of `region`), else None."""
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164) \
        if phonenumbers.is_valid_number(number) else None


def is_e164(value: object) -> bool:
    """A valid number written exactly in E.164 (`+` and digits), without raising (the simulators' checks)."""
    if not isinstance(value, str) or not value.startswith("+"):
        return False
    try:
        parsed = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(parsed) and \
        phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164) == value


def normalize_email(value: str, field: str = "email", error: Callable[[str], Exception] = invalid) -> str:
    """The address, lower-cased, or `error` naming the field (syntax only: no DNS lookups)."""
    try:
        return validate_email(value.strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as exc:
        raise error(f"{field} is invalid: {exc}") from None


@dataclass(frozen=True)
class NumberFacts:
    """What the number itself tells: its country and area code."""

    country: str
    area_code: str


def number_facts(e164: str) -> NumberFacts:
    number = phonenumbers.parse(e164, None)
    national = phonenumbers.national_significant_number(number)
    length = phonenumbers.length_of_geographical_area_code(number)
    return NumberFacts(country=phonenumbers.region_code_for_number(number) or "",
                       area_code=national[:length] if length else "")
