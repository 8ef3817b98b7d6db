"""The texts and emails of a business for its export (issue 56): `ExportPage` of the kinds `texts` (each as GET
/api/v1/sms/messages shows it) and `emails` (as GET /api/v1/emails shows it), a page at a time (core.export_page),
newest first, with the lists' own reads and messages (an erased text as the API shows it: redacted)."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from core import export_page
from core.uow import UnitOfWork
from services.messaging.repositories.unit import MessagingUnit
from switchboard.v1 import common_pb2

KINDS = ("texts", "emails")


class MessagingExport:
    def __init__(self, uow: UnitOfWork[MessagingUnit], text: Callable[[Any], Message], email: Callable[[Any], Message]):
        self.uow = uow
        self.render = {"texts": text, "emails": email}  # as ListMessages and ListEmails answer (the servicer's)

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        asked = export_page.asked(request, KINDS)
        businesses = (asked.business_id,)
        async with self.uow.read() as work:
            if asked.kind == "texts":
                paged = await work.messages.messages_page(businesses, None, None, asked.page)
            else:
                paged = await work.emails.page(businesses, None, asked.page)
        return export_page.reply(paged.rows, paged, self.render[asked.kind])
