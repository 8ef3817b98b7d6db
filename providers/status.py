"""What a failed provider call says about the provider as a whole (for health reports), whichever provider."""
from __future__ import annotations

PROVIDER_STATES = ("ok", "unreachable", "rejected_credentials", "refused")


def provider_status(http_status: int | None) -> str:
    if http_status is None or http_status >= 500 or http_status == 429:
        return "unreachable"
    if http_status in (401, 403):
        return "rejected_credentials"
    return "refused"
