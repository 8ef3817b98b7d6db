"""How the accounts service's parts meet: the ports each part offers the others.

The service is one kernel and four parts. The kernel is what every part shares: the tables and their repositories
behind one unit of work (schema, store, the *_repository modules, records), the workspace lifecycle (lifecycle,
domain), the secrets' hashing (secret_keys), the agents service's port (agents_port) and these ports. The parts are
sub-packages that import the kernel and never each other (an import-linter contract in pyproject.toml keeps it so):

- identity: API keys, dashboard sessions, sign-in links and the OAuth connector (who is calling);
- billing: signup (a purchase first), card checkouts, x402 payments, workspaces on a subscription, usage and
  balances, the billing worker (what is paid and used);
- provisioning: the saga that gives a paid signup its agent and number (what a signup gets);
- workspaces: reading, creating and changing workspaces (what an account holds).
- privacy: erasures of a person across the services holding personal data, and exports of a business's data, run
  as claimed jobs (what an account may ask to be forgotten, or to take away).

A part that needs another's use case names it here as a Protocol; servicer.build hands each part the other's
implementation."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from services.accounts.records import Business, SagaRecord, UsageRecord, Workspace
from services.accounts.repository import AccountsUnit


class Invalidation(Protocol):
    """identity's: tell every gateway to forget the cached principals of an account (its standing or keys changed)."""

    async def invalidate(self, account_id: str) -> None: ...


class Welcome(Protocol):
    """identity's: mail an owner a sign-in link (`welcome` for the first, right after signup)."""

    def send(self, email: str, next_path: str, *, welcome: bool = False) -> None: ...


class Provisioner(Protocol):
    """provisioning's: the signup's saga, started waiting for its payment and moved on by billing."""

    async def start(self, work: AccountsUnit, business_id: str, forward_to: str | None) -> None:
        """A saga waiting for the payment (in the caller's unit of work)."""

    async def resume(self, work: AccountsUnit, business_id: str, *, lease: bool = False) -> str | None:
        """The payment arrived: the saga is due (leased to the caller with `lease`: the token to `run_now` with)."""

    async def cancel_waiting(self, work: AccountsUnit, business_id: str) -> None: ...

    async def run_now(self, business_id: str, token: str) -> SagaRecord | None:
        """Run a saga leased to the caller, waiting a short while for it: the saga as it stands."""

    async def run_due(self, limit: int = 5) -> int:
        """Run the sagas that are due; how many were claimed."""


@dataclass(frozen=True)
class NewWorkspace:
    name: str
    metadata: dict[str, Any]
    external_ref: str | None
    timezone: str


@dataclass(frozen=True)
class Created:
    business: Business
    payment_response: str = ""  # x402: the settlement (the PAYMENT-RESPONSE header)


class WorkspacePurchases(Protocol):
    """billing's: what adding, resuming and tearing down a workspace means for what the account pays."""

    async def create(self, account_id: str, form: NewWorkspace, payment_signature: str = "") -> Created:
        """A new workspace of the account, billed on its subscription or paid by x402 (`payment_signature`)."""

    def resume_refusal(self, business: Business) -> str | None:
        """Why the owner may not resume this business row (None: they may): billing paused it, still unpaid."""

    async def torn_down(self, account_id: str, business_id: str) -> None:
        """A workspace torn down leaves the subscription it was billed on."""


class PublicRecords(Protocol):
    """workspaces' and billing's: their records as their RPCs answer the public API, for privacy's export of a
    business's data (written as the gateway writes them: core.export_page.line)."""

    def workspace(self, workspace: Workspace) -> Message: ...

    def usage(self, entry: UsageRecord) -> Message: ...
