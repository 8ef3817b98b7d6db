"""`MessagingUnit`: the messaging use cases' unit of work (core.uow.UnitOfWork), its repositories as attributes."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.uow import Connections, Unit, UnitOfWork
from services.messaging import schema
from services.messaging.repositories.spend import SpendRepository, SqlSpend


class MessagingUnit(Unit):
    """One transaction's or read's repositories (`spend_on` builds them: the SQL one, or a fast-tier twin)."""

    def __init__(self, handle: Any, spend_on: Callable[[Any], SpendRepository] = SqlSpend):
        super().__init__()
        self.spend = spend_on(handle)


def messaging_uow(connections: Connections) -> UnitOfWork[MessagingUnit]:
    """The messaging unit of work over `connections` (core.uow.Database), raising events into its outbox."""
    return UnitOfWork(connections, MessagingUnit, events=schema.outbox)
