"""The replay list: completed erasures kept so that what a restored backup brings back of an erased person is erased
again (docs/privacy.md, "Backups").

The transaction that completes an erasure, and forgets its subject, stores its replay entry: the erasure's id,
business and suppress, when it completed, and the subject sealed (AES-256-GCM, `seal_subject`) under the server
secret's "erasure replay" subkey (services.accounts.secret_keys), bound to the erasure's id. An entry is kept
BACKUP_RETENTION_DAYS after its erasure completed (privacy_repository.replay_retention): no backup kept is older, so
every erasure that completed after a restorable backup was taken has its entry.

A restore (`python -m deploy.backup restore`) reads the live list, restores the dump, and writes the entries back
with `replay_requested_at` set; the erasure runner's next round queues each of those erasures again (`requeued`:
subject opened, reports cleared), and runs it over the restored data as it ran the first time. Every step is safe to
repeat, so an erasure replayed that had nothing to find completes with zero counts.
"""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from services.accounts.privacy import domain
from services.accounts.records import ReplayEntryRecord
from services.accounts.secret_keys import ERASURE_REPLAY, SecretKeys


def seal_subject(keys: SecretKeys, erasure_id: str, phones: list[str], emails: list[str]) -> str:
    """The subject as its replay entry keeps it: sealed, openable only for this erasure."""
    body = json.dumps({"phones": phones, "emails": emails}, separators=(",", ":")).encode()
    return keys.seal(ERASURE_REPLAY, body, erasure_id.encode())


def open_subject(keys: SecretKeys, entry: ReplayEntryRecord) -> domain.Subject | None:
    """The entry's subject, or None when it cannot be opened (sealed under a server secret no longer held)."""
    body = keys.open(ERASURE_REPLAY, entry.subject, entry.erasure_id.encode())
    if body is None:
        return None
    subject = json.loads(body)
    return domain.Subject(tuple(subject["phones"]), tuple(subject["emails"]))


def requeued(entry: ReplayEntryRecord, subject: domain.Subject, now: datetime) -> dict[str, Any]:
    """The erasure's row queued again to run from its first step: its subject back, reports and found ids cleared,
    attempts from zero; the Idempotency-Key and the request's fingerprint are not kept (its request is long answered)."""
    phone_masked, email_masked = subject.masked()
    return {"id": entry.erasure_id, "business_id": entry.business_id, "status": domain.QUEUED,
            "phones": list(subject.phones), "emails": list(subject.emails), "subject_key": subject.key,
            "phone_masked": phone_masked, "email_masked": email_masked, "suppress": entry.suppress,
            "reports": {}, "found": {}, "request_hash": None, "attempts": 0, "error": None, "next_attempt_at": now,
            "lease_token": None, "lease_until": None, "created_at": now, "updated_at": now, "completed_at": None}
