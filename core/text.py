"""Text in requests: optional free text (trimmed, None when empty, refused past its limit) and Idempotency-Key
values."""
from __future__ import annotations

import re

from core.errors import invalid

IDEMPOTENCY_KEY_MAX = 255
# An Idempotency-Key: printable ASCII (what a header carries as it is; a UUID is the usual one), not blank. The
# gateway publishes this pattern for the header, and the services check it, so the two agree.
IDEMPOTENCY_KEY_PATTERN = r"^[ -~]*[!-~][ -~]*$"


def optional_text(value: str | None, field: str, maximum: int) -> str | None:
    value = (value or "").strip() or None
    if value is not None and len(value) > maximum:
        raise invalid(f"{field} must be at most {maximum} characters")
    return value


def check_idempotency_key(key: str) -> str:
    if len(key) > IDEMPOTENCY_KEY_MAX or not re.fullmatch(IDEMPOTENCY_KEY_PATTERN, key):
        raise invalid(f"Idempotency-Key must be 1 to {IDEMPOTENCY_KEY_MAX} printable ASCII characters (e.g. a UUID), "
                      "not blank")
    return key
