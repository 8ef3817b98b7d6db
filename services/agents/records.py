"""Typed records the agents repositories return (frozen dataclasses, not rows)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallerNumber:
    """An agent's first assigned number: the one its outbound calls and texts come from."""

    phone_number: str
    provider_phone_number_id: str | None
