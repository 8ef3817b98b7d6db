"""A URL a user gave, read without surprises: the one place that parses one.

urllib raises ValueError on some malformed input (a bracketed host that is no IP address, a netloc that NFKC
normalization turns into a separator, an unclosed bracket), in `urlsplit` itself or later in `.port` (not a number,
out of range); and yarl, which aiohttp sends with, refuses some URLs urllib reads (`http://[::1]x/`). A URL is
read here only when both can, and every part of the result is then safe to use.
"""
from __future__ import annotations

from collections.abc import Callable
from urllib.parse import SplitResult, urlsplit

from yarl import URL

from core.errors import invalid


def split_url(value: str, field: str, error: Callable[[str], Exception] = invalid) -> SplitResult:
    """`value` split into its parts, or `error` naming the field and why (400 invalid_request by default)."""
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises on a port that is no number or out of range
        URL(value)
    except ValueError as exc:
        raise error(f"{field} is not a valid URL: {exc}") from None
    return parts


def url_parts(value: str) -> SplitResult | None:
    """`value` split into its parts, or None when it cannot be read as a URL (for a rule that has its own answer)."""
    try:
        return split_url(value, "url", ValueError)
    except ValueError:
        return None
