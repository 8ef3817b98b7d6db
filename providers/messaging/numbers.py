"""The carrier numbers the platform buys from the SMS provider, in our types: the numbers it offers, the ones we
bought and their release. Twilio's resources (AvailablePhoneNumbers' Local list, IncomingPhoneNumbers) are read
here and nowhere else; the agents service speaks `OfferedNumber`, `OwnedNumber` and `NumberProvider`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Capabilities:
    voice: bool
    sms: bool
    mms: bool


@dataclass(frozen=True)
class OfferedNumber:
    """A number the provider would sell us now."""
    phone_number: str
    country: str
    locality: str | None
    region: str | None
    capabilities: Capabilities


@dataclass(frozen=True)
class OwnedNumber:
    """A number the account holds at the provider; `reference` is what releases it."""
    reference: str
    phone_number: str
    capabilities: Capabilities


class NumberProvider(Protocol):
    async def offered_numbers(self, country: str, area_code: str | None, *, limit: int) -> list[OfferedNumber]:
        """Local numbers of `country` (of `area_code` when given) able to take calls and texts, at most `limit`."""

    async def buy_number(self, phone_number: str, sms_url: str) -> OwnedNumber:
        """Buy one offered number, its inbound texts sent to `sms_url`. Never retried (a repeat could buy twice);
        a `ProviderError` with `maybe_done` may have bought it: `owned_number` tells."""

    async def owned_number(self, phone_number: str) -> OwnedNumber | None:
        """The account's number with this E.164 value, or None."""

    async def release_number(self, reference: str) -> None:
        """Give a bought number back to the provider; one it no longer holds counts as released."""


def capabilities_of(resource: dict[str, Any]) -> Capabilities:
    """A resource's `capabilities`, its keys read whatever their case (Twilio's document writes them in lower case,
    some of its older pages `SMS` and `MMS`)."""
    caps = {str(k).lower(): bool(v) for k, v in (resource.get("capabilities") or {}).items()}
    return Capabilities(voice=caps.get("voice", False), sms=caps.get("sms", False), mms=caps.get("mms", False))


def offered(resource: dict[str, Any]) -> OfferedNumber:
    """One entry of AvailablePhoneNumbers/{CountryCode}/Local.json's `available_phone_numbers`."""
    return OfferedNumber(phone_number=resource["phone_number"], country=resource.get("iso_country") or "",
                         locality=resource.get("locality") or None, region=resource.get("region") or None,
                         capabilities=capabilities_of(resource))


def owned(resource: dict[str, Any]) -> OwnedNumber:
    """An IncomingPhoneNumber resource."""
    return OwnedNumber(reference=resource["sid"], phone_number=resource["phone_number"],
                       capabilities=capabilities_of(resource))
