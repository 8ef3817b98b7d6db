"""Compensating a provider call after our own write failed (the saga step every provider-backed write shares)."""
from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger(__name__)


async def undo_at_provider(step: Awaitable[Any], what: str) -> None:
    """Run a compensating provider call after our own write failed; if it fails too, log it for
    reconciliation by hand (the caller still gets the original error)."""
    try:
        await step
    except Exception:  # noqa: BLE001 - logged; the original error is what the caller sees
        log.error("%s could not be undone at the provider; fix it by hand", what)
