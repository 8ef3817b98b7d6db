"""Identifiers and timestamps."""
from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

from core.errors import invalid


def new_id() -> str:
    return str(uuid.uuid4())


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_uuid(value: str) -> bool:
    """The hyphenated form only, as JSON Schema's uuid format (uuid.UUID also takes braces and urn: forms)."""
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def require_uuid(value: str, field: str) -> str:
    """The value, or 400 invalid_request naming the field."""
    if not is_uuid(value):
        raise invalid(f"{field} must be a UUID")
    return value


def utcnow() -> datetime:
    return datetime.now(UTC)


def rfc3339(at: datetime) -> str:
    """An aware instant as RFC 3339 in UTC with a Z, as the API writes timestamps."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
