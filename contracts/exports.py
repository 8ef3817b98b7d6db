"""Export of a business's data: the kinds of record its archive holds, in the order written, each held by one service
(the accounts service writes its own; the others answer ExportPage for theirs and validation_error for a kind they do
not hold), and the archive's paths. services.accounts.privacy.export_domain has the rest of the rules."""
from __future__ import annotations

from dataclasses import dataclass

ACCOUNTS = "accounts"
DOWNLOAD_PATH = "/api/v1/exports/download"


@dataclass(frozen=True)
class Kind:
    """A kind of record: its name (the archive's folder, and what ExportPage is asked), the service holding it, and
    its page size (a page is one ExportPage answer: small enough for a gRPC message; calls carry transcripts)."""

    name: str
    service: str
    limit: int = 500


KINDS: tuple[Kind, ...] = (
    Kind("workspace", ACCOUNTS), Kind("usage", ACCOUNTS, 1000),
    Kind("agents", "agents", 200), Kind("agent_versions", "agents", 200), Kind("phone_numbers", "agents"),
    Kind("calls", "calls", 100),
    Kind("leads", "sdr"), Kind("lead_audit", "sdr", 1000), Kind("runs", "sdr"), Kind("touches", "sdr", 1000),
    Kind("bookings", "sdr"),
    Kind("texts", "messaging"), Kind("emails", "messaging", 200),
    Kind("evals", "evals", 200), Kind("eval_runs", "evals", 200),
    Kind("webhook_subscriptions", "webhooks"),
)
BY_NAME = {kind.name: kind for kind in KINDS}


def kinds_of(service: str) -> tuple[str, ...]:
    """The kinds a service answers ExportPage for."""
    return tuple(kind.name for kind in KINDS if kind.service == service)
