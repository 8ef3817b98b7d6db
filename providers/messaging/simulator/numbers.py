"""Numbers for sale and the account's own: Twilio's AvailablePhoneNumbers (Local) and IncomingPhoneNumbers
resources, shaped field for field as its 2010 API document writes them (providers/fidelity compares them).

What is for sale: in a North American area code, the 100 numbers `NPA-555-0100` to `NPA-555-0199` (the range kept
for fiction, valid to libphonenumber); elsewhere, numbers shaped like the country's example fixed-line number in the
area code asked for, those libphonenumber takes as valid there. `STOCK` of them are offered at a time, fewer once bought (a bought number is
never offered again); the control plane sets an area code's stock (0: none for sale, as in a sold-out area code).
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any

import phonenumbers

from core.contact import is_e164, number_facts
from providers.messaging.simulator import errors
from providers.messaging.simulator.errors import ApiError
from providers.messaging.simulator.messages import API_VERSION, int_param, list_page, new_sid, rfc2822

STOCK = 20  # numbers offered in an area code (or a country) unless the control plane says otherwise
SEARCH_PAGE_DEFAULT, SEARCH_PAGE_MAX = 50, 1000  # AvailablePhoneNumbers' PageSize, as the list pages' elsewhere
NANP_DEFAULT_AREA = {"US": "415", "CA": "604"}  # a search of a whole North American country
INVALID_NUMBER = 21421  # "PhoneNumber is invalid"
NOT_AVAILABLE = 21422  # "PhoneNumber is not available"

# What POST .../IncomingPhoneNumbers.json takes (Twilio's whole list): a number (PhoneNumber, or the first one
# offered in AreaCode) and the settings it is bought with, each kept as the resource's snake_case field.
PURCHASE_PARAMETERS = (
    "PhoneNumber", "AreaCode", "ApiVersion", "FriendlyName", "SmsApplicationSid", "SmsFallbackMethod",
    "SmsFallbackUrl", "SmsMethod", "SmsUrl", "StatusCallback", "StatusCallbackMethod", "VoiceApplicationSid",
    "VoiceCallerIdLookup", "VoiceFallbackMethod", "VoiceFallbackUrl", "VoiceMethod", "VoiceUrl", "EmergencyStatus",
    "EmergencyAddressSid", "TrunkSid", "IdentitySid", "AddressSid", "VoiceReceiveMode", "BundleSid")
CHOOSING = frozenset({"PhoneNumber", "AreaCode"})
# The search's query parameters the simulator takes (others are ignored, as Twilio ignores unknown ones).
SEARCH_FILTERS = ("AreaCode", "SmsEnabled", "VoiceEnabled", "MmsEnabled", "PageSize")


def field_of(parameter: str) -> str:
    """A request parameter's resource field: `VoiceCallerIdLookup` -> `voice_caller_id_lookup`."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", parameter).lower()


def friendly(e164: str) -> str:
    return phonenumbers.format_number(phonenumbers.parse(e164, None), phonenumbers.PhoneNumberFormat.NATIONAL)


def _candidates(country: str, area_code: str | None) -> Iterator[str]:
    code = phonenumbers.country_code_for_region(country)
    if code == 1:
        npa = area_code or NANP_DEFAULT_AREA.get(country)
        if npa:
            yield from (f"+1{npa}55501{d:02d}" for d in range(100))
        return
    example = phonenumbers.example_number_for_type(country, phonenumbers.PhoneNumberType.FIXED_LINE)
    if example is None:
        return
    national = phonenumbers.national_significant_number(example)
    area = area_code or national[:phonenumbers.length_of_geographical_area_code(example)]
    tail = national[len(area):]
    for lead in "0123456789":  # the digit after the area code: some are not given out there (London's 0 and 1)
        yield from (f"+{code}{area}{lead}{tail[1:-2]}{d:02d}" for d in range(100))


def for_sale(country: str, area_code: str | None) -> Iterator[str]:
    """Every number the simulator would ever sell there, in order."""
    for e164 in _candidates(country, area_code):
        if is_e164(e164):
            facts = number_facts(e164)
            if facts.country == country and (area_code is None or facts.area_code == area_code):
                yield e164


def available_resource(e164: str) -> dict[str, Any]:
    """An entry of AvailablePhoneNumbers/{CountryCode}/Local.json (Twilio's fields, every one)."""
    facts = number_facts(e164)
    nanp = phonenumbers.country_code_for_region(facts.country) == 1
    return {"friendly_name": friendly(e164), "phone_number": e164, "lata": "722" if nanp else None,
            "locality": "Simulated City", "rate_center": "SIMULATED" if nanp else None,
            "latitude": 37.77 if nanp else None, "longitude": -122.42 if nanp else None,
            "region": "CA" if facts.country == "US" else None, "postal_code": None, "iso_country": facts.country,
            "address_requirements": "none", "beta": False,
            "capabilities": {"mms": True, "sms": True, "voice": True, "fax": False}}


class Numbers:
    """The account's numbers (IncomingPhoneNumber resources by SID, bought order) and what is for sale."""

    def __init__(self, account_sid: str):
        self.account_sid = account_sid
        self.base = f"/{API_VERSION}/Accounts/{account_sid}/IncomingPhoneNumbers"
        self.records: dict[str, dict[str, Any]] = {}
        self.stock: dict[tuple[str, str], int] = {}  # (country, area code or "") -> how many are offered

    def offers(self, country: str, area_code: str | None) -> list[str]:
        held = {r["phone_number"] for r in self.records.values()}
        return list(islice((n for n in for_sale(country, area_code) if n not in held),
                           self.stock.get((country, area_code or ""), STOCK)))

    def search(self, country: str, query: Mapping[str, str]) -> dict[str, Any]:
        """GET .../AvailablePhoneNumbers/{CountryCode}/Local.json: AreaCode, PageSize; every number offered takes
        calls, texts and MMS, so SmsEnabled, VoiceEnabled and MmsEnabled filter nothing out."""
        if country not in phonenumbers.SUPPORTED_REGIONS:
            raise errors.not_found(f"/{API_VERSION}/Accounts/{self.account_sid}/AvailablePhoneNumbers/{country}")
        size = int_param(query, "PageSize", SEARCH_PAGE_DEFAULT, 1, SEARCH_PAGE_MAX)
        area_code = query.get("AreaCode") or None
        if area_code is not None and not area_code.isdigit():
            raise ApiError(400, None, "AreaCode must be an integer")
        numbers = self.offers(country, area_code)[:size]
        uri = f"/{API_VERSION}/Accounts/{self.account_sid}/AvailablePhoneNumbers/{country}/Local.json"
        return {"available_phone_numbers": [available_resource(n) for n in numbers], "uri": uri}

    def buy(self, form: Mapping[str, str]) -> dict[str, Any]:
        """POST .../IncomingPhoneNumbers.json: the number bought, with the settings given."""
        wanted, area_code = form.get("PhoneNumber"), form.get("AreaCode")
        if not wanted and not area_code:
            raise ApiError(400, None, "A 'PhoneNumber' or an 'AreaCode' is required.")
        if wanted:
            if not is_e164(wanted):
                raise ApiError(400, INVALID_NUMBER, f"PhoneNumber {wanted} is invalid.")
            facts = number_facts(wanted)
            if wanted not in self.offers(facts.country, facts.area_code):
                raise ApiError(400, NOT_AVAILABLE, f"PhoneNumber {wanted} is not available.")
        else:
            offered = self.offers("US", area_code)
            if not offered:
                raise ApiError(400, NOT_AVAILABLE, f"No phone number is available in area code {area_code}.")
            wanted = offered[0]
        return self._keep(wanted, {field_of(k): v for k, v in form.items() if k in PURCHASE_PARAMETERS
                                   and k not in CHOOSING})

    def _keep(self, e164: str, settings: dict[str, Any]) -> dict[str, Any]:
        sid, stamp = new_sid("PN"), rfc2822()
        if "voice_caller_id_lookup" in settings:
            settings["voice_caller_id_lookup"] = settings["voice_caller_id_lookup"].lower() == "true"
        record = {
            "account_sid": self.account_sid, "address_sid": None, "address_requirements": "none",
            "api_version": API_VERSION, "beta": False,
            "capabilities": {"fax": False, "mms": True, "sms": True, "voice": True},
            "date_created": stamp, "date_updated": stamp, "friendly_name": friendly(e164), "identity_sid": None,
            "phone_number": e164, "origin": "twilio", "sid": sid, "sms_application_sid": "",
            "sms_fallback_method": "POST", "sms_fallback_url": "", "sms_method": "POST", "sms_url": "",
            "status_callback": "", "status_callback_method": "POST", "trunk_sid": None, "uri": f"{self.base}/{sid}.json",
            "voice_receive_mode": "voice", "voice_application_sid": "", "voice_caller_id_lookup": False,
            "voice_fallback_method": "POST", "voice_fallback_url": "", "voice_method": "POST", "voice_url": "",
            "emergency_status": "Inactive", "emergency_address_sid": None, "emergency_address_status": "unregistered",
            "bundle_sid": None, "status": "in-use", "type": "local",
        }
        record.update(settings)
        self.records[sid] = record
        return record

    def get(self, sid: str) -> dict[str, Any] | None:
        return self.records.get(sid)

    def sms_url(self, phone_number: str) -> str | None:
        """Where texts to one of the account's numbers go, as bought (its SmsUrl), or None."""
        return next((r["sms_url"] for r in self.records.values() if r["phone_number"] == phone_number), None) or None

    def release(self, sid: str) -> dict[str, Any] | None:
        return self.records.pop(sid, None)

    def page(self, query: Mapping[str, str]) -> dict[str, Any]:
        """GET .../IncomingPhoneNumbers.json: Twilio's list envelope, PhoneNumber matching part of a number (`*`
        any digits) and FriendlyName exactly, oldest first."""
        pattern = query.get("PhoneNumber")
        match = re.compile(".*".join(map(re.escape, pattern.split("*")))) if pattern else None
        found = [r for r in self.records.values() if (match is None or match.search(r["phone_number"]))
                 and query.get("FriendlyName", r["friendly_name"]) == r["friendly_name"]]
        return list_page(self.base, "incoming_phone_numbers", found, query, ("PhoneNumber", "FriendlyName"))
