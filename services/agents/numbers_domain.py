"""Phone-number rules as plain functions: E.164, capabilities, the pool filters, compliance
defaults, which business a number request is about, and when the pool buys numbers and gives them back."""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from contracts.agents import RING_SECONDS
from core.contact import AREA_CODE_PATTERN, REGIONS, normalize_e164
from core.errors import invalid
from providers.voice.port import Forwarding
from services.agents.records import StockPlace

CAPABILITIES = ("voice_inbound", "voice_outbound", "sms_inbound", "sms_outbound", "mms")
# `capability` filter values: a capability name, or a channel meaning both of its directions.
CAPABILITY_FILTERS = {
    "voice": ("voice_inbound", "voice_outbound"),
    "sms": ("sms_inbound", "sms_outbound"),
    **{c: (c,) for c in CAPABILITIES},
}
AVAILABLE_PAGE = (25, 100)
ASSIGNED_PAGE = (50, 100)  # default and maximum page size of a business's numbers


def check_capabilities(names: list[str]) -> dict[str, bool]:
    unknown = [n for n in names if n not in CAPABILITIES]
    if unknown:
        raise invalid(f"unknown capability {unknown[0]!r}; known: {', '.join(CAPABILITIES)}")
    return {c: c in names for c in CAPABILITIES}


def capability_filter(value: str) -> tuple[str, ...]:
    try:
        return CAPABILITY_FILTERS[value.strip().lower()]
    except KeyError:
        raise invalid(f"capability must be one of {', '.join(CAPABILITY_FILTERS)}") from None


def check_country(value: str) -> str:
    """Exactly as published: an upper-case ISO 3166 code libphonenumber knows (core.contact.REGIONS)."""
    if value not in REGIONS:
        raise invalid("country must be an upper-case ISO 3166 two-letter code such as US, CA or GB")
    return value


def check_area_code(value: str) -> str:
    if not re.fullmatch(AREA_CODE_PATTERN, value):
        raise invalid("area_code must be 1 to 5 digits, e.g. 415")
    return value


# Compliance a number needs before it may be used: A2P 10DLC registration for application
# SMS on US long codes, and a registered emergency (E911) address for US and Canadian voice.
def initial_a2p_status(country: str, capabilities: dict[str, bool]) -> str:
    sends_sms = capabilities.get("sms_outbound") or capabilities.get("mms")
    return "not_started" if country == "US" and sends_sms else "not_required"


def initial_emergency_status(country: str, capabilities: dict[str, bool]) -> str:
    voice = capabilities.get("voice_inbound") or capabilities.get("voice_outbound")
    return "not_set" if country in ("US", "CA") and voice else "not_required"


def check_forwarding(number: str, to: str, ring_seconds: int | None) -> Forwarding:
    default, low, high = RING_SECONDS
    to = normalize_e164(to, "forwarding.to")
    if to == number:
        raise invalid(f"forwarding.to must be another phone than {number} itself (a call would ring back to it)")
    if ring_seconds is None:
        ring_seconds = default
    if not low <= ring_seconds <= high:
        raise invalid(f"forwarding.ring_seconds must be between {low} and {high}")
    return Forwarding(to, ring_seconds)


# -- the stock of numbers bought from the SMS provider (services.agents.stock) ---------------------------------

# What a bought number must do to count as stock: take calls and texts both ways (what an agent's number does).
STOCK_CAPABILITIES = (*CAPABILITY_FILTERS["voice"], *CAPABILITY_FILTERS["sms"])
REQUESTED, STOCKED, UNAVAILABLE = "requested", "stocked", "unavailable"


@dataclass(frozen=True)
class StockRules:
    low: int  # a place with fewer free numbers than this is refilled...
    target: int  # ...up to this many
    idle: timedelta  # demand older than this ends the refills; a bought number free this long goes back
    per_day: int = 100  # the most numbers bought in any 24 hours, over every place (what the platform may spend)


@dataclass(frozen=True)
class Purchase:
    """What GET /available says of a place it found no free number in: the purchase asked for there."""
    country: str
    area_code: str | None
    status: str  # requested | unavailable
    requested_at: datetime
    message: str | None


def to_buy(free: int, rules: StockRules) -> int:
    """How many numbers a place with `free` free numbers buys: none until it runs low, then up to the target."""
    return rules.target - free if free < rules.low else 0


def within_budget(wanted: int, bought_last_day: int, rules: StockRules) -> int:
    """How many of the `wanted` numbers a refill may buy with `bought_last_day` bought in the last 24 hours: what is
    left of the day's budget. Replicas refilling different places at once may each spend what is left, so the budget
    can be passed by one refill at most."""
    return max(0, min(wanted, rules.per_day - bought_last_day))


def wanted_since(now: datetime, rules: StockRules) -> datetime:
    """The oldest demand that still keeps a place stocked, and the newest a bought number can be idle since."""
    return now - rules.idle


def after_refill(free: int, bought: int, place: str, *, held_back: bool = False) -> tuple[str, str | None]:
    """A place's state after a refill (and why, when unavailable): unavailable only when it has no free number
    and the provider offered none; still requested when the day's budget held the purchase back."""
    if held_back and free + bought == 0:
        return REQUESTED, None
    if free + bought == 0:
        return UNAVAILABLE, f"the SMS provider has no number for sale in {place}; asked again every round"
    return STOCKED, None


def purchase_of(place: StockPlace) -> Purchase:
    """A requested place as GET /available tells it: `requested`, or `unavailable` with why."""
    unavailable = place.state == UNAVAILABLE
    return Purchase(place.country, place.area_code or None, UNAVAILABLE if unavailable else REQUESTED,
                    place.requested_at, place.message if unavailable else None)


def place_name(country: str, area_code: str) -> str:
    return f"{country} area code {area_code}" if area_code else country
