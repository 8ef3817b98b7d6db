"""What the accounts repositories return (services.accounts.repository, and its twins in tests/memory): frozen
records of the columns a use case reads, never the database's rows. Ids are strings whichever driver read them
(core.records.record, which builds them, makes them so)."""
from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any


@dataclasses.dataclass(frozen=True)
class ApiKeyRecord:
    id: str
    account_id: str
    business_id: str | None
    name: str
    prefix: str
    key_hash: str
    scopes: list[str]
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None
    revoked_at: datetime | None


@dataclasses.dataclass(frozen=True)
class SessionRecord:
    """A dashboard session, found by one of the hashes of its token (`token_hash`: the one it is stored under)."""

    token_hash: str
    account_id: str
    expires_at: datetime
    last_used_at: datetime


@dataclasses.dataclass(frozen=True)
class Workspace:
    """A business as its owner reads it (store.WORKSPACE_COLUMNS)."""

    id: str
    name: str
    lifecycle_state: str
    metadata: dict[str, Any]
    external_ref: str | None
    created_at: datetime
    updated_at: datetime
    subscription_status: str
    timezone: str
    plan_id: str
    paid_through: datetime | None
    trial_ends_at: datetime | None
    retention: dict[str, Any]  # the kinds it set (privacy.services.accounts.data_retention_rules.effective: every kind)
    # Torn down: when its customers' personal data is deleted, and once it was (privacy.teardown_deletion).
    data_deletion_due_at: datetime | None = None
    data_deleted_at: datetime | None = None


@dataclasses.dataclass(frozen=True)
class WorkspaceProvisioning:
    """The provisioning saga of a signup's workspace, as the workspace read answers it."""

    status: str
    step: str
    agent_id: str | None
    phone_number: str | None
    forward_to: str | None
    attempts: int
    last_error: str | None
    next_attempt_at: datetime


@dataclasses.dataclass(frozen=True)
class WorkspaceOwner:
    id: str
    name: str
    account_id: str
    email: str
    email_confirmed_at: datetime | None
    phone_forward_to: str | None


@dataclasses.dataclass(frozen=True)
class UsageRecord:
    """An entry of the usage log (fields in store.USAGE_COLUMNS order): an API request's, as a gateway recorded
    it (`api_key_id`), or a call's (`call_id`, `api_key_id` None)."""

    id: str
    account_id: str
    business_id: str | None
    api_key_id: str | None
    endpoint: str
    method: str
    status_code: int
    call_id: str | None
    cost_cents: int
    created_at: datetime


@dataclasses.dataclass(frozen=True)
class CheckoutFacts:
    """What opening a new checkout for a business needs: its billing columns and its owner's address."""

    id: str
    lifecycle_state: str
    subscription_status: str
    subscription_id: str | None
    plan_id: str
    customer_id: str | None
    checkout_session_id: str | None
    email: str


@dataclasses.dataclass(frozen=True)
class OAuthClient:
    """A client of the connector's OAuth sign-in: registered here, or known by its metadata document's URL."""

    client_id: str
    source: str
    client_name: str | None
    client_uri: str | None
    redirect_uris: list[str]
    grant_types: list[str]
    created_at: datetime
    fetched_at: datetime | None


@dataclasses.dataclass(frozen=True)
class OAuthConnection:
    """A grant in force, as the dashboard lists connected clients."""

    id: str
    client_id: str
    client_name: str | None
    scopes: list[str]
    business_ids: list[str]
    created_at: datetime
    last_used_at: datetime | None


@dataclasses.dataclass(frozen=True)
class OAuthGrant:
    """One approval by the account user: a client, the scopes and businesses approved, the resource."""

    id: str
    account_id: str
    client_id: str
    scopes: list[str]
    business_ids: list[str]
    resource: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclasses.dataclass(frozen=True)
class OneUseCredential:
    """An authorization code or a refresh token (each used once), with its grant's columns."""

    grant_id: str
    expires_at: datetime
    used_at: datetime | None
    account_id: str
    client_id: str
    scopes: list[str]
    resource: str
    revoked_at: datetime | None  # the grant's


@dataclasses.dataclass(frozen=True)
class OAuthCode(OneUseCredential):
    """An authorization code, found by one of the hashes of its secret (`code_hash`: the one it is stored under)."""

    code_hash: str
    redirect_uri: str
    code_challenge: str


@dataclasses.dataclass(frozen=True)
class OAuthRefreshToken(OneUseCredential):
    """A refresh token (`token_hash`: the hash it is stored under)."""

    token_hash: str
    created_at: datetime


@dataclasses.dataclass(frozen=True)
class BusinessName:
    """A business as the consent page lists it."""

    id: str
    name: str


@dataclasses.dataclass(frozen=True)
class Zone:
    id: str
    name: str
    timezone: str


@dataclasses.dataclass(frozen=True)
class SagaRecord:
    """A signup's provisioning saga (schema.provisionings) as its runner reads it, with the lease it runs under."""

    id: str
    business_id: str
    status: str
    step: str
    forward_to: str | None
    agent_id: str | None
    phone_number: str | None
    attempts: int
    last_error: str | None
    next_attempt_at: datetime
    lease_token: str | None


@dataclasses.dataclass(frozen=True)
class SagaBusiness:
    """What a saga reads of its business: whether it still runs, and what its intake agent is made of."""

    id: str
    name: str
    business_type: str | None
    website: str | None
    lifecycle_state: str


@dataclasses.dataclass(frozen=True)
class Business:
    """A business as signup, billing and the lifecycle read and change it (every column of schema.businesses)."""

    id: str
    account_id: str
    name: str
    lifecycle_state: str
    metadata: dict[str, Any]
    external_ref: str | None
    business_type: str | None
    website: str | None
    phone_forward_to: str | None
    plan_id: str
    subscription_status: str
    trial_ends_at: datetime | None
    created_at: datetime
    updated_at: datetime
    timezone: str
    payment_capture: str | None
    checkout_session_id: str | None
    customer_id: str | None
    subscription_id: str | None
    subscription_event_at: datetime | None
    past_due_since: datetime | None
    paid_through: datetime | None
    paused_by_billing: bool
    renewal_reminded_through: datetime | None
    billed_on: str | None
    lease_token: str | None
    lease_until: datetime | None
    retention: dict[str, Any]
    retention_next_at: datetime
    retention_lease_token: str | None
    retention_lease_until: datetime | None
    data_deletion_due_at: datetime | None = None  # the data deletion's columns a workspace read answers
    data_deleted_at: datetime | None = None


@dataclasses.dataclass(frozen=True)
class LiveWorkspace:
    """A workspace of an account not torn down, as billing counts them."""

    id: str
    billed_on: str | None
    subscription_status: str
    lease_until: datetime | None


@dataclasses.dataclass(frozen=True)
class PendingWorkspace:
    """A workspace whose request died while adding it to its payer's subscription."""

    id: str
    account_id: str


@dataclasses.dataclass(frozen=True)
class Subscription:
    id: str
    subscription_status: str


@dataclasses.dataclass(frozen=True)
class UsedSignInLink:
    """A sign-in link just redeemed: its account, and whether it was mailed (which confirms the address)."""

    account_id: str
    mailed: bool


@dataclasses.dataclass(frozen=True)
class X402Payment:
    """An x402 payment (every column of schema.x402_payments)."""

    id: str
    transaction: str | None
    business_id: str
    purpose: str
    status: str
    payer: str
    nonce: str | None
    valid_before: datetime | None
    network: str
    asset: str
    amount: str
    payload: dict[str, Any] | None
    requirements: dict[str, Any] | None
    attempts: int
    next_attempt_at: datetime | None
    last_error: str | None
    created_at: datetime
    settled_at: datetime | None


@dataclasses.dataclass(frozen=True)
class ErasureRecord:
    """An erasure of a person (schema.erasures) as its runner and its readers see it, with the lease it runs under.
    `phones`, `emails` and `request_hash` are None once it is over (completed or failed)."""

    id: str
    business_id: str
    status: str
    phones: list[str] | None
    emails: list[str] | None
    subject_key: str | None
    phone_masked: str | None
    email_masked: str | None
    suppress: bool
    reports: dict[str, list[dict[str, Any]]]
    found: dict[str, list[str]]
    idempotency_key: str | None
    request_hash: str | None
    attempts: int
    error: str | None
    next_attempt_at: datetime
    lease_token: str | None
    created_at: datetime
    completed_at: datetime | None


@dataclasses.dataclass(frozen=True)
class ReplayEntryRecord:
    """A completed erasure's replay entry (schema.erasure_replay): its subject sealed (privacy.replay)."""

    erasure_id: str
    business_id: str
    suppress: bool
    subject: str
    completed_at: datetime
    replay_requested_at: datetime | None


@dataclasses.dataclass(frozen=True)
class RetentionClaim:
    """A business whose retention job this runner claimed: its settings (the kinds it set) and the lease's token."""

    business_id: str
    retention: dict[str, Any]
    token: str


@dataclasses.dataclass(frozen=True)
class DataDeletionRecord:
    """A torn-down business's data deletion (schema.businesses' data_deletion_* columns) as its runner claims it,
    with the lease it runs under."""

    id: str  # the business's
    account_id: str
    data_deletion_due_at: datetime
    data_deletion_steps: dict[str, dict[str, Any]]
    data_deletion_attempts: int
    data_deletion_lease_token: str | None


@dataclasses.dataclass(frozen=True)
class ExportRecord:
    """An export of a business's data (schema.exports) as its runner and its readers see it, with its lease."""

    id: str
    business_id: str
    status: str
    kinds: list[dict[str, Any]]
    records: int
    bytes: int
    parts: int
    crc32: int
    raw_bytes: int
    sha256: str | None
    idempotency_key: str | None
    attempts: int
    error: str | None
    next_attempt_at: datetime
    lease_token: str | None
    created_at: datetime
    completed_at: datetime | None
    expires_at: datetime | None
