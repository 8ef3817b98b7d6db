"""What a service's ErasePerson step reads of its request (common.proto ErasureRequest): the person's numbers in
E.164, addresses in lower case and the ids it names, each once, in the order given.

The privacy job (services.accounts.privacy) sends them normalized; a step still reads them itself, and refuses
(400) a number or an address it cannot read rather than erase by a guess. An id that is no UUID names nothing in
our tables (ids of other businesses are the queries' to ignore: every query is of the request's business)."""
from __future__ import annotations

from collections.abc import Iterable

from core.contact import normalize_email, parsed_e164
from core.errors import invalid
from core.ids import is_uuid


def phones(values: Iterable[str]) -> tuple[str, ...]:
    """The numbers in E.164, read with libphonenumber ("+1 (415) 555-0123" is +14155550123); blanks dropped."""
    return tuple(dict.fromkeys(_e164(v, i) for i, v in enumerate(values) if v.strip()))


def emails(values: Iterable[str]) -> tuple[str, ...]:
    """The addresses in lower case; blanks dropped."""
    return tuple(dict.fromkeys(normalize_email(v, f"emails[{i}]") for i, v in enumerate(values) if v.strip()))


def ids(values: Iterable[str]) -> tuple[str, ...]:
    """The UUIDs among the values, in lower case as PostgreSQL writes them."""
    return tuple(dict.fromkeys(v.lower() for v in values if is_uuid(v.lower())))


def _e164(value: str, index: int) -> str:
    text = value.strip()
    e164 = parsed_e164(text)
    if e164 is None:
        raise invalid(f"phones[{index}]: {text!r} is not a valid phone number in international form (E.164, e.g. "
                      "+14155550123)")
    return e164
