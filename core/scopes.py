"""Every scope an API key can hold, and the read-only set new keys get by default (SPEC: Authentication)."""

ALL_SCOPES = (
    "workspaces:read", "workspaces:write",
    "agents:read", "agents:write",
    "numbers:read", "numbers:write",
    "communication-runs:read", "communication-runs:write",
    "calls:read", "calls:write",
    "leads:read", "leads:write",
    "bookings:read", "bookings:write",
    "sms:read", "sms:write",
    "emails:read", "emails:write",
    "webhooks:read", "webhooks:write",
    "evals:read", "evals:write",
    "events:read", "events:replay",
    "lifecycle:write",
    "sdr:read", "sdr:write",
    # Erasure of a person (POST /api/v1/privacy/erasures): never a default, a key must be given them.
    "privacy:read", "privacy:write",
    "*",
)
DEFAULT_SCOPES = (
    "workspaces:read", "numbers:read", "agents:read", "communication-runs:read",
    "calls:read", "sms:read", "webhooks:read", "events:read",
)

# The assistant connector's tools need these (SPEC: Assistant connector); an OAuth sign-in may ask for them only,
# and gets the read-only pair when it asks for nothing.
CONNECTOR_SCOPES = ("agents:read", "calls:read", "calls:write")
CONNECTOR_DEFAULT_SCOPES = ("agents:read", "calls:read")


def has_scope(granted: tuple[str, ...] | list[str], needed: str) -> bool:
    return "*" in granted or needed in granted
