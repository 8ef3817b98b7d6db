"""The regular expressions the published schemas use, each with the words an error uses to say what
to send instead (a raw pattern in an error message helps nobody)."""
from __future__ import annotations

from core.contact import E164_PATTERN

# Whitespace written out: the union of ECMA-262's \s (what clients and the fuzzer read in the published
# schemas) and Python's (what str.strip trims, and what `re` means by \s when the gateway checks a pattern:
# it adds \x1c-\x1f and \x85, ECMA adds \ufeff), so a value is "visible" only where both agree.
SPACE = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# Text the services keep trimmed must hold a visible character.
NOT_BLANK = rf"[^{SPACE}]"
# An http(s) URL with an ASCII host (international domains in punycode) and no credentials; the scheme
# in any case, as URLs allow.
HTTP_URL = rf"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{{1,5}})?([/?#][^{SPACE}]*)?$"
E164_OR_EMPTY = r"^(\+[1-9][0-9]{5,14})?$"
WEBHOOK_ID = "^wh_[0-9a-f]{24}$"

HINTS = {
    E164_PATTERN: "an E.164 number: a plus sign, the country code and the number, e.g. +14155550123",
    E164_OR_EMPTY: "an E.164 number such as +14155550123, or empty to clear it",
    NOT_BLANK: "text with at least one visible character",
    HTTP_URL: "an http(s) URL with an ASCII host (punycode for international domains) and no credentials, "
              "e.g. https://example.com/hooks",
    WEBHOOK_ID: "a webhook id such as wh_0123456789abcdef01234567",
}


def must_match(field: str, pattern: str) -> str:
    """The error message for a value that does not match `pattern`."""
    return f"{field} must be {HINTS[pattern]}" if pattern in HINTS else f"{field} must match {pattern}"
