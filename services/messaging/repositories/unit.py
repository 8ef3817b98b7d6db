"""`MessagingUnit`: the messaging use cases' unit of work (core.uow.UnitOfWork), its repositories as attributes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.uow import Connections, Unit, UnitOfWork
from services.messaging import schema
from services.messaging.repositories.compliance import ComplianceRepository, SqlCompliance
from services.messaging.repositories.consent import ConsentRepository, SqlConsent
from services.messaging.repositories.data_retention import DataRetentionRepository, SqlDataRetention
from services.messaging.repositories.email import EmailRepository, SqlEmails
from services.messaging.repositories.erasure import ErasureRepository, SqlErasure
from services.messaging.repositories.messages import MessagesRepository, SqlMessages
from services.messaging.repositories.spend import SpendRepository, SqlSpend


@dataclass(frozen=True)
class Repositories:
    """What builds each repository on a handle: the SQL ones (`SQL`), or the fast tier's twins."""

    messages: Callable[[Any], MessagesRepository] = SqlMessages
    compliance: Callable[[Any], ComplianceRepository] = SqlCompliance
    consent: Callable[[Any], ConsentRepository] = SqlConsent
    spend: Callable[[Any], SpendRepository] = SqlSpend
    emails: Callable[[Any], EmailRepository] = SqlEmails
    erasure: Callable[[Any], ErasureRepository] = SqlErasure  # SQL in every tier: its statements are the point
    data_retention: Callable[[Any], DataRetentionRepository] = SqlDataRetention  # SQL in every tier, as erasure


SQL = Repositories()


class MessagingUnit(Unit):
    """One transaction's or read's repositories."""

    def __init__(self, handle: Any, repositories: Repositories = SQL):
        super().__init__()
        self.messages = repositories.messages(handle)
        self.compliance = repositories.compliance(handle)
        self.consent = repositories.consent(handle)
        self.spend = repositories.spend(handle)
        self.emails = repositories.emails(handle)
        self.erasure = repositories.erasure(handle)
        self.data_retention = repositories.data_retention(handle)


def messaging_uow(connections: Connections, repositories: Repositories = SQL) -> UnitOfWork[MessagingUnit]:
    """The messaging unit of work over `connections` (core.uow.Database), raising events into its outbox."""
    return UnitOfWork(connections, lambda handle: MessagingUnit(handle, repositories), events=schema.outbox)
