"""Optional free text in requests: trimmed, None when empty, refused past its limit."""
from __future__ import annotations

from core.errors import invalid


def optional_text(value: str | None, field: str, maximum: int) -> str | None:
    value = (value or "").strip() or None
    if value is not None and len(value) > maximum:
        raise invalid(f"{field} must be at most {maximum} characters")
    return value
