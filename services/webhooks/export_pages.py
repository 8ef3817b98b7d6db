"""The webhook subscriptions of a business for its export (issue 56): `ExportPage` of kind `webhook_subscriptions`,
a page at a time (core.export_page), each as GET /api/v1/webhooks shows it: never its signing secret (the message
holds only the masked tail)."""
from __future__ import annotations

from collections.abc import Callable

from core import export_page
from core.uow import UnitOfWork
from services.webhooks.records import Subscription
from services.webhooks.repository import WebhooksUnit
from switchboard.v1 import common_pb2, webhooks_pb2

KINDS = ("webhook_subscriptions",)


class WebhooksExport:
    def __init__(self, uow: UnitOfWork[WebhooksUnit], render: Callable[[Subscription], webhooks_pb2.Subscription]):
        self.uow = uow
        self.render = render  # a subscription as ListSubscriptions answers it (services.webhooks.servicer)

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        asked = export_page.asked(request, KINDS)
        async with self.uow.read() as work:
            paged = await work.subscriptions.page(asked.business_id, asked.page)
        return export_page.reply(paged.rows, paged, self.render)
