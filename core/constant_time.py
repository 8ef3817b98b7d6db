"""Checking a secret someone presents (a header, a form field) against ours, in constant time.

`hmac.compare_digest` raises TypeError on a `str` that is not ASCII, and aiohttp keeps the bytes of a header that are
not UTF-8 as surrogates, which `.encode()` refuses: either would turn a stranger's request into a 500. Our secrets are
ASCII (hex, base64url), so a value that is not cannot match: it is refused before comparing, and the comparison is of
bytes.
"""
from __future__ import annotations

import hmac


def same_secret(presented: str, ours: str) -> bool:
    return presented.isascii() and hmac.compare_digest(presented.encode(), ours.encode())
