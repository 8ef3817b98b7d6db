"""What never reaches a log in the clear: phone numbers (all but their last 4 digits), email addresses (all but their
domain), and secrets.

`mask(text)` rewrites:
- phone numbers: E.164 (`+14155550123` -> `+*******0123`, also with spaces, dots, dashes or brackets between the
  digits, or URL-encoded `%2B...`) and the North American national forms (`(415) 555-0123`, `415-555-0123`,
  `415.555.0123`); a bare run of digits is left alone (ids, timestamps and ports look the same);
- email addresses, also URL-encoded (`dana.reyes@example.com`, `dana%40example.com` -> `***@example.com`,
  `***%40example.com`): the domain kept, so a reader still sees which mail server was concerned (and so the
  password of a `scheme://user:password@host` URL is hidden too);
- our API keys (`svc_live_...`), webhook and tool signing secrets (`whsec_...`, `tsec_...`), Stripe-style keys
  (`sk_`/`rk_`/`pk_` `test`/`live`), bearer and basic credentials, signed tokens (JWTs: the caller context,
  x402 payloads), and the value after `token`, `secret`, `password`, `session`, `key`, `signature` or
  `authorization` as `name=value`, `name: value` or `"name": "value"` (magic links, cookies, form fields).

Masking is for log lines (core.logs), not a sanitizer for other output.
"""
from __future__ import annotations

import re
from typing import Any

MASK = "***"

_E164 = re.compile(r"(?<![\w+%])(\+|%2[Bb])(\d(?:[\s().-]{0,2}\d){7,14})(?!\d)")
_EMAIL = re.compile(r"[\w.!#$%&'*+/?^`{|}~-]+(@|%40)(?=[a-z0-9-]+(?:\.[a-z0-9-]+)+)", re.IGNORECASE)
_NATIONAL = re.compile(r"(?<![\w+.-])(?:\(\d{3}\)\s?|\d{3}[.-])\d{3}[.-]\d{4}(?![\w-])")
_SECRETS = (
    # prefixed keys and secrets: the prefix kept, so a reader knows what was there
    (re.compile(r"\b(svc_live_|whsec_|tsec_|(?:sk|rk|pk)_(?:test|live)_)[\w-]+"), rf"\1{MASK}"),
    (re.compile(r"\b(Bearer|Basic)\s+[\w.~+/=-]+", re.IGNORECASE), rf"\1 {MASK}"),
    (re.compile(r"\beyJ[\w-]*\.[\w-]+\.[\w-]*"), MASK),  # a JWT (its header is base64url JSON: '{"')
    (re.compile(r"""(?ix)\b([\w-]*(?:token|secret|password|passwd|session|api[_-]?key|signature|authorization)
                    ["']?\s*[=:]\s*["']?)(?!\*\*\*|Bearer\b|Basic\b)[^\s"'&;,]+"""), rf"\1{MASK}"),
)


def _hide_digits(match: re.Match[str]) -> str:
    """All digits but the last 4 as `*`, the separators kept."""
    text = match.group(0)
    keep = len(text)
    for _ in range(4):
        keep = max(i for i, c in enumerate(text[:keep]) if c.isdigit())
    start = 3 if text.startswith("%") else 1 if text.startswith("+") else 0
    return text[:start] + re.sub(r"\d", "*", text[start:keep]) + text[keep:]


def mask(text: str) -> str:
    """`text` with every phone number, email address and secret it holds masked."""
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    text = _EMAIL.sub(rf"{MASK}\1", text)
    text = _E164.sub(_hide_digits, text)
    return _NATIONAL.sub(_hide_digits, text)


def mask_value(value: Any) -> Any:
    """A logged value masked: strings, and the strings inside dicts, lists and tuples; other values as they are,
    except that an object is masked as its text (its repr may hold anything)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v) for v in value]
    if value is None or isinstance(value, int | float | bool):
        return value
    return mask(str(value))
