"""The calls of a business for its export (issue 56): `ExportPage` of kind `calls`, a page at a time
(core.export_page), each call as GET /api/v1/calls?id= shows it (summary, collected data, recording link, quality
scores, recording disclosure, tool calls) with its `transcript` as GET /api/v1/transcripts shows it (null when the
call has none); an erased call as the API shows it (its personal fields null)."""
from __future__ import annotations

from collections.abc import Callable
from itertools import groupby

from core import export_page
from core.proto_json import to_json
from core.uow import UnitOfWork
from services.calls.domain import EVERY_CALL, agent_caller_lines
from services.calls.records import Call, ToolCallRecord
from services.calls.repository import CallsUnit
from switchboard.v1 import calls_pb2, common_pb2

KINDS = ("calls",)
Render = Callable[[Call, list[ToolCallRecord]], calls_pb2.Call]


class CallsExport:
    def __init__(self, uow: UnitOfWork[CallsUnit], render: Render):
        self.uow = uow
        self.render = render  # a call and its tool calls as GetCall answers them (services.calls.servicer)

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        asked = export_page.asked(request, KINDS)
        async with self.uow.read() as work:
            paged = await work.calls.page((asked.business_id,), EVERY_CALL, asked.page)
            tools = await work.calls.tool_calls_of([c.id for c in paged.rows]) if paged.rows else []
        of_call = {call_id: list(group) for call_id, group in groupby(tools, key=lambda t: t.call_id)}
        return export_page.reply(paged.rows, paged, lambda c: {**to_json(self.render(c, of_call.get(c.id, []))),
                                                               "transcript": transcript(c)})


def transcript(call: Call) -> str | None:
    return agent_caller_lines(call.transcript) if call.transcript else None
