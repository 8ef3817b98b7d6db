"""The retention a business set, applied by the messaging service (ApplyRetention: the accounts service's retention
job asks it, again while the report says `more`; core.registry lets no other process ask). Issue 56.

What is past its cutoff becomes (an unset cutoff keeps that kind; at most `batch` records of each kind a call):

- texts, inbound and outbound, created before `message_bodies_before` and settled (one the provider has not settled
  keeps its body until it has): redacted at the provider first, as the erasure redacts (its body emptied, its media
  deleted: services.messaging.erasure.redact_at_provider), then here: the body "" and the text marked redacted
  (messages.redacted_at). Numbers, status, times and the provider's sid stay (the thread, billing). At most
  TEXTS_PER_CALL texts a call, fewer than a large batch, so the provider's round trips end within the deadline;
- emails sent or failed before `message_bodies_before`: subject and body "" (the address, status and times stay);
- the evidence before `evidence_before`, the consent history and the compliance decision log (of calls and texts
  alike: it is kept here, not in the sdr service) keep their rows with the minimum that proves what happened: the
  kind of consent, its source, its reference and when; the decision, its rule, code, actor, inputs and when. What
  else they hold of the person goes as an erasure takes it: the number becomes its suppression hash
  (services.messaging.suppression, in a decision's message too, as the actor of a consent event that was the
  number), a consent event's note is dropped. That is the one change the tables' append-only triggers let through
  (schema.CONSENT_ERASURE, DECISION_ERASURE); every check asks of a number and of its hash, so an old opt-out
  still holds.

What this does not touch: the outbox's sms.* events (published and pruned within RETENTION_OUTBOX_DAYS: the
platform's own records, core.retention) and their copies in the webhook event history (the webhooks service's
ApplyRetention, `webhook_events_before`); the touch ledger (counted_touches: numbers and times, no content).

No connection is held while the provider is asked: the texts are read, redacted at the provider, then written here.
A text redacted at the provider whose write here is lost is found again and redacted there again (harmless); one
redacted here is found no more, so a call repeated changes nothing and answers zeros.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from core import data_retention
from core.data_retention import Asked
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.messaging.adapter import MessagingProvider
from services.messaging.erasure import redact_at_provider
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.suppression import Suppression

log = logging.getLogger(__name__)

# The report's lines, in order: (what, action). Every line is reported, zeros too.
ITEMS = (("provider.message", "redacted"), ("messaging.message_body", "redacted"), ("messaging.email", "redacted"),
         ("messaging.consent_events", "redacted"), ("messaging.compliance_decisions", "redacted"))
T = TypeVar("T")
# Texts one call redacts at most, whatever the batch: each is a round trip (or more, with media) to the provider, and
# the call must end within its deadline (ApplyRetention's, 30 s); the report says `more` for the rest.
TEXTS_PER_CALL = 200


def page(found: Sequence[T], batch: int) -> tuple[list[T], bool]:
    """A batch of what was found (read with one more than `batch`), and whether there is more."""
    return list(found[:batch]), len(found) > batch


@dataclass
class Applied:
    """What one call redacted: counts per line of ITEMS, and whether a kind has more past its cutoff."""

    counts: dict[tuple[str, str], int] = field(default_factory=lambda: dict.fromkeys(ITEMS, 0))
    more: bool = False

    def items(self) -> list[tuple[str, str, int]]:
        return [(what, action, self.counts[(what, action)]) for what, action in ITEMS]


class DataRetention:
    def __init__(self, uow: UnitOfWork[MessagingUnit], sms: MessagingProvider, suppression: Suppression):
        self.uow, self.sms, self.suppression = uow, sms, suppression

    async def apply(self, asked: Asked) -> Applied:
        applied = Applied()
        if asked.message_bodies_before is not None:
            await self._texts(asked, asked.message_bodies_before, applied)
            await self._emails(asked, asked.message_bodies_before, applied)
        if asked.evidence_before is not None:
            await self._evidence(asked, asked.evidence_before, applied)
        log.info("retention %s of business %s in messaging: %s%s", asked.run_id or "-", asked.business_id,
                 data_retention.summary(applied.items()), " (more to do)" if applied.more else "")
        return applied

    async def _texts(self, asked: Asked, before: datetime, applied: Applied) -> None:
        batch = min(asked.batch, TEXTS_PER_CALL)
        async with self.uow.read() as work:
            texts, more = page(await work.data_retention.texts(asked.business_id, before, batch + 1), batch)
        applied.more |= more
        if not texts:
            return
        applied.counts[("provider.message", "redacted")] += await redact_at_provider(
            self.sms, [sid for _, sid in texts if sid], f"nothing was redacted here yet; ask again (retention "
            f"{asked.run_id or '-'})")
        async with self.uow.transaction() as work:
            applied.counts[("messaging.message_body", "redacted")] += await work.data_retention.redact_texts(
                asked.business_id, [message_id for message_id, _ in texts], utcnow())

    async def _emails(self, asked: Asked, before: datetime, applied: Applied) -> None:
        async with self.uow.transaction() as work:
            ids, more = page(await work.data_retention.emails(asked.business_id, before, asked.batch + 1),
                             asked.batch)
            if ids:
                applied.counts[("messaging.email", "redacted")] += await work.data_retention.redact_emails(
                    asked.business_id, ids, utcnow())
        applied.more |= more

    async def _evidence(self, asked: Asked, before: datetime, applied: Applied) -> None:
        hashed = self.suppression.hash
        async with self.uow.transaction() as work:
            repo = work.data_retention
            consent, more_consent = page(await repo.consent(asked.business_id, before, asked.batch + 1), asked.batch)
            decisions, more_decisions = page(await repo.decisions(asked.business_id, before, asked.batch + 1),
                                             asked.batch)
            if consent:
                applied.counts[("messaging.consent_events", "redacted")] += await repo.redact_consent(
                    [(row_id, hashed(phone)) for row_id, phone in consent])
            if decisions:
                applied.counts[("messaging.compliance_decisions", "redacted")] += await repo.redact_decisions(
                    [(row_id, hashed(phone)) for row_id, phone in decisions])
        applied.more |= more_consent or more_decisions
