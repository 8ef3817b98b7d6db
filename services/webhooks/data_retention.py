"""The retention a business set, applied to its webhook event history (ApplyRetention: the accounts service's
retention job asks it, again while the report says `more`; core.registry lets no other process ask). Issue 56.

The business's events that occurred before `webhook_events_before` are deleted with their deliveries and the
deliveries' attempts (an unset cutoff keeps them), at most `batch` events a call, oldest first. An event with a
delivery still pending (being sent, or waiting for a retry) is kept until that delivery ends: deleting it would
leave the retry nothing to send (its body is made from the stored event at each attempt), and a partner would miss
an event it was promised; a later round deletes it. Once deleted, GET /api/v1/events, the deliveries' list and a
replay know the event no more. Platform events without a business are not a business's, and are not touched.

The finished deliveries are pruned anyway by the platform's own retention (RETENTION_WEBHOOK_DELIVERIES_DAYS,
core.retention); the events are the businesses' data and go only by this (or by a person's erasure, which redacts
them: services.webhooks.erasure). A repeated call finds nothing and answers zeros."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from core import data_retention
from core.data_retention import Asked
from core.uow import UnitOfWork
from services.webhooks.repository import WebhooksUnit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Applied:
    events: int
    deliveries: int
    more: bool

    def items(self) -> list[tuple[str, str, int]]:
        return [("webhooks.event", "deleted", self.events), ("webhooks.delivery", "deleted", self.deliveries)]


class DataRetention:
    def __init__(self, uow: UnitOfWork[WebhooksUnit]):
        self.uow = uow

    async def apply(self, asked: Asked) -> Applied:
        before = asked.webhook_events_before
        if before is None:
            return Applied(0, 0, False)
        async with self.uow.transaction() as work:
            found = await work.events.expired(asked.business_id, before, asked.batch + 1)
            events, deliveries = await work.events.delete(asked.business_id, found[:asked.batch]) if found else (0, 0)
        applied = Applied(events, deliveries, len(found) > asked.batch)
        log.info("retention %s of business %s in webhooks: %s%s", asked.run_id or "-", asked.business_id,
                 data_retention.summary(applied.items()), " (more to do)" if applied.more else "")
        return applied
