"""The suppression hash: what is kept of an erased person's phone number, so their opt-out outlives their erasure.

An erasure (services.messaging.erasure) takes the person's number out of everything, but a business must still never
text or call them again when they said STOP, or when the erasure asked for suppression: the number goes on the
business's do-not-contact list, and stays in the consent and decision logs (the evidence), as its hash:

    hmac-sha256:<64 hex digits>  =  "hmac-sha256:" + HMAC-SHA256(PRIVACY_HASH_KEY, the E.164 number).hexdigest()

A keyed hash, because a plain SHA-256 of a phone number is no protection: there are few enough numbers to hash them
all and read the table back. Without the key (core.settings PRIVACY_HASH_KEY, the messaging service's alone) the
hash says nothing of the number; with it, the number is still only found by hashing a number one already has. The
key is never rotated (a new key would match none of the hashes kept, and every erased person who opted out could be
texted again).

Every check that asks whether a number is on the business's list or opted out asks of the number and of its hash
(`aliases`): the standing a compliance decision reads (compliance_service), CheckDnc, GetConsent and RemoveDnc
(consent_service), their facts merged (`merged`).
"""
from __future__ import annotations

import hashlib
import hmac
import re

from services.messaging.records import CalleeFacts

PREFIX = "hmac-sha256:"
HASHED = re.compile(r"^hmac-sha256:[0-9a-f]{64}$")  # the migration's trigger checks the same shape


def is_hashed(phone: str) -> bool:
    return HASHED.match(phone) is not None


class Suppression:
    """Hashes phone numbers under the deployment's key."""

    def __init__(self, key: str):
        if not key:
            raise ValueError("the suppression hash needs a key (PRIVACY_HASH_KEY)")
        self._key = key.encode()

    def __repr__(self) -> str:  # never the key
        return "Suppression()"

    def hash(self, phone: str) -> str:
        """The number's suppression hash (`phone` in E.164, as every number here is kept)."""
        return PREFIX + hmac.new(self._key, phone.encode(), hashlib.sha256).hexdigest()

    def aliases(self, phones: list[str]) -> dict[str, str]:
        """{hash: phone} of each phone: what a check also asks of, and whose answers it counts as the phone's."""
        return {self.hash(phone): phone for phone in phones}


def merged(facts: list[CalleeFacts]) -> CalleeFacts:
    """What is kept of one person under their number and under its hash, as one: on the list since the earliest
    listing, their consent events together (oldest first: the latest decides), the national registry's data of the
    number (a hash has none)."""
    listed = [f.listed_since for f in facts if f.listed_since is not None]
    consent = sorted((e for f in facts for e in f.consent), key=lambda e: e.at)
    national = next((f.national for f in facts if f.national is not None), None)
    return CalleeFacts(min(listed) if listed else None, consent, national)
