"""Identifiers and timestamps."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone

from core.errors import invalid


def new_id() -> str:
    return str(uuid.uuid4())


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def require_uuid(value: str, field: str) -> str:
    """The value, or 400 invalid_request naming the field."""
    if not is_uuid(value):
        raise invalid(f"{field} must be a UUID")
    return value


def utcnow() -> datetime:
    return datetime.now(timezone.utc)
