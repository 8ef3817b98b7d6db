"""`MessagingUnit`: the messaging use cases' unit of work (core.uow.UnitOfWork), its repositories as attributes."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.uow import Connections, Unit, UnitOfWork
from services.messaging import schema
from services.messaging.repositories.email import EmailRepository, SqlEmails
from services.messaging.repositories.spend import SpendRepository, SqlSpend


class MessagingUnit(Unit):
    """One transaction's or read's repositories (`spend_on`, `emails_on` build them: the SQL ones, or the fast
    tier's twins)."""

    def __init__(self, handle: Any, spend_on: Callable[[Any], SpendRepository] = SqlSpend,
                 emails_on: Callable[[Any], EmailRepository] = SqlEmails):
        super().__init__()
        self.spend = spend_on(handle)
        self.emails = emails_on(handle)


def messaging_uow(connections: Connections) -> UnitOfWork[MessagingUnit]:
    """The messaging unit of work over `connections` (core.uow.Database), raising events into its outbox."""
    return UnitOfWork(connections, MessagingUnit, events=schema.outbox)
