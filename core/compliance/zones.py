"""Where a callee may be: the time zones and US states a touch is judged in.

A callee may be in every zone any fact places them in: the time zone a caller stated (`target.timezone`), the zones
of the state a lead says they live in, and the zones libphonenumber gives the number's area code. A touch is legal
only when it is legal in all of them. Where libphonenumber cannot narrow a number below every zone of its country
code (toll-free and non-geographic numbers, many mobiles: +1 spans Guam to Samoa) and nothing else places the
callee, the sending number's zones stand in when the library narrows those (a business is usually local to its
customers), then every zone of the callee's country code when some moment is legal in all of them, then UTC.
"""
from __future__ import annotations

from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

import phonenumbers
from holidays.countries.united_states import UnitedStates
from phonenumbers import geocoder
from phonenumbers import timezone as number_timezones
from phonenumbers.tzdata import TIMEZONE_DATA

from core.errors import invalid

US_STATE_ZONES = {
    "AL": ("America/Chicago",), "AK": ("America/Anchorage", "America/Adak"), "AZ": ("America/Phoenix",),
    "AR": ("America/Chicago",), "CA": ("America/Los_Angeles",), "CO": ("America/Denver",),
    "CT": ("America/New_York",), "DE": ("America/New_York",), "DC": ("America/New_York",),
    "FL": ("America/New_York", "America/Chicago"), "GA": ("America/New_York",), "HI": ("Pacific/Honolulu",),
    "ID": ("America/Boise", "America/Los_Angeles"), "IL": ("America/Chicago",),
    "IN": ("America/Indiana/Indianapolis", "America/Chicago"), "IA": ("America/Chicago",),
    "KS": ("America/Chicago", "America/Denver"), "KY": ("America/New_York", "America/Chicago"),
    "LA": ("America/Chicago",), "ME": ("America/New_York",), "MD": ("America/New_York",),
    "MA": ("America/New_York",), "MI": ("America/Detroit", "America/Menominee"), "MN": ("America/Chicago",),
    "MS": ("America/Chicago",), "MO": ("America/Chicago",), "MT": ("America/Denver",),
    "NE": ("America/Chicago", "America/Denver"), "NV": ("America/Los_Angeles",), "NH": ("America/New_York",),
    "NJ": ("America/New_York",), "NM": ("America/Denver",), "NY": ("America/New_York",),
    "NC": ("America/New_York",), "ND": ("America/Chicago", "America/Denver"), "OH": ("America/New_York",),
    "OK": ("America/Chicago",), "OR": ("America/Los_Angeles", "America/Boise"), "PA": ("America/New_York",),
    "RI": ("America/New_York",), "SC": ("America/New_York",), "SD": ("America/Chicago", "America/Denver"),
    "TN": ("America/Chicago", "America/New_York"), "TX": ("America/Chicago", "America/Denver"),
    "UT": ("America/Denver",), "VT": ("America/New_York",), "VA": ("America/New_York",),
    "WA": ("America/Los_Angeles",), "WV": ("America/New_York",), "WI": ("America/Chicago",),
    "WY": ("America/Denver",), "PR": ("America/Puerto_Rico",),
}
# State names as libphonenumber's geocoder and people write them (the holidays package's list of US subdivisions).
_STATE_NAMES = {name.upper(): code for name, code in UnitedStates.subdivisions_aliases.items()}
_STATE_NAMES.update({"WASHINGTON STATE": "WA", "WASHINGTON D.C.": "DC", "WASHINGTON DC": "DC"})


@lru_cache(maxsize=1)
def _iana_names() -> frozenset[str]:
    return frozenset(available_timezones())


def check_zone(name: str, field: str) -> str:
    """An IANA zone name, or 400 invalid_request naming the field."""
    if name not in _iana_names():
        raise invalid(f"{field}: {name[:64]!r} is not an IANA time zone name (for example America/New_York)")
    return name


_ZONES: dict[str, ZoneInfo] = {}


def zone(name: str) -> ZoneInfo:
    """The ZoneInfo of a name, kept for good: zoneinfo's own cache holds only eight strongly, and a number placed in
    every zone of +1 (42 of them) would reload zone files on every decision."""
    found = _ZONES.get(name)
    if found is None:
        found = _ZONES[name] = ZoneInfo(name)
    return found


def state_code(state: str | None) -> str | None:
    """The USPS code of a US state written as a code or a name ("fl", "Florida"), else None."""
    text = (state or "").strip().upper()
    if text in US_STATE_ZONES:
        return text
    return _STATE_NAMES.get(text)


def state_zones(state: str | None) -> tuple[str, ...]:
    """The zones of a stated US state, if it names one."""
    return US_STATE_ZONES.get(state_code(state) or "", ())


# libphonenumber places a NANP number by its area code alone, and by its exchange too only where an area code spans
# zones (a US area code never spans states; a non-geographic one, such as toll-free, is one of its own). So the facts
# of NANP numbers are looked up once per such prefix, without validating the number again (the edge did,
# core.contact.normalize_e164). Elsewhere a number's type decides (a mobile is placed in every zone of its
# country), so they are looked up per number.
_SPLIT_AREA_CODES = frozenset(prefix[1:4] for prefix in TIMEZONE_DATA if prefix.startswith("1") and len(prefix) > 4)
_FACTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {}
_FACTS_MAX = 100_000


def _area_facts(e164: str) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """(zones, narrowed zones, US state) of a number, from the cache of its prefix."""
    key = e164
    if is_nanp(e164):
        key = e164[:8] if e164[2:5] in _SPLIT_AREA_CODES else e164[:5]
    found = _FACTS.get(key)
    if found is None:
        if len(_FACTS) >= _FACTS_MAX:
            _FACTS.clear()
        found = _FACTS[key] = _facts_of(e164)
    return found


def _facts_of(e164: str) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    number = phonenumbers.parse(e164, None)
    nanp = number.country_code == 1
    placed = number_timezones.time_zones_for_geographical_number(number) if nanp else \
        number_timezones.time_zones_for_number(number)
    zones = tuple(z for z in placed if z != "Etc/Unknown")
    whole = TIMEZONE_DATA.get(str(number.country_code), ())
    narrowed = () if len(zones) > 1 and set(zones) == set(whole) else zones
    state = None
    if nanp:  # a US state's name or "City, ST"; Canadian and Caribbean places map to none
        place = geocoder.description_for_valid_number(number, "en")
        state = state_code(place.rsplit(", ", 1)[-1] if ", " in place else place)
    return zones, narrowed, state


def number_zones(e164: str) -> tuple[str, ...]:
    """The zones libphonenumber gives a number (none when it knows none)."""
    return _area_facts(e164)[0]


def narrowed_zones(e164: str) -> tuple[str, ...]:
    """The number's zones when libphonenumber narrows it below every zone of its country code, else none."""
    return _area_facts(e164)[1]


def area_code_state(e164: str) -> str | None:
    """The US state of a number's area code (libphonenumber's geocoder), or None (not a US geographic number)."""
    return _area_facts(e164)[2]


def possible_states(e164: str, lead_state: str | None) -> list[str]:
    """The US states whose law applies to a touch of this number: the area code's and the lead's stated one (both,
    without repeats)."""
    found = [area_code_state(e164), state_code(lead_state)]
    return list(dict.fromkeys(s for s in found if s))


def is_nanp(e164: str) -> bool:
    return e164.startswith("+1")
