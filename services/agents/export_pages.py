"""The agents service's records of a business for its export (issue 56): `ExportPage` of the kinds
- `agents`: as GET /api/v1/agents lists them (with each one's first number; the configuration is in its versions);
- `agent_versions`: every version of each agent with its configuration snapshot (redacted, as stored), as GET
  /api/v1/agents/versions?version= shows one, with the agent's id (`agent_id`, which that route's reply names);
  agent by agent, newest agent first, each agent's newest version first;
- `phone_numbers`: as GET /api/v1/phone-numbers lists them,
a page at a time (core.export_page), with the lists' own reads and messages; no provider is asked."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import export_page
from core.errors import ServiceError
from core.pagination import Paged, encode_cursor
from core.proto_json import to_json
from core.uow import UnitOfWork
from services.agents.records import Agent, Version
from services.agents.repository import AgentsUnit
from switchboard.v1 import agents_pb2, common_pb2

KINDS = ("agents", "agent_versions", "phone_numbers")


@dataclass(frozen=True)
class Messages:
    """The servicer's messages of each kind, as the routes' RPCs answer them (services.agents.servicer)."""

    agent: Callable[[Agent, str | None], agents_pb2.AgentSummary]
    version: Callable[[Version, bool], agents_pb2.AgentVersion]
    number: Callable[[Any], agents_pb2.PhoneNumber]


class AgentsExport:
    def __init__(self, uow: UnitOfWork[AgentsUnit], messages: Messages):
        self.uow = uow
        self.messages = messages

    async def page(self, request: common_pb2.ExportPageRequest) -> common_pb2.ExportPageReply:
        m = self.messages
        asked = export_page.asked(request, KINDS)
        after = version_key(asked.page.cursor) if asked.kind == "agent_versions" else None
        businesses = [asked.business_id]
        async with self.uow.read() as work:
            if asked.kind == "agents":
                paged = await work.agents.page(businesses, asked.page)
                numbers = await work.agents.first_numbers([str(r.id) for r in paged.rows]) if paged.rows else {}
                return export_page.reply(paged.rows, paged, lambda r: m.agent(r, numbers.get(str(r.id))))
            if asked.kind == "phone_numbers":
                paged = await work.numbers.page(businesses, None, asked.page)
                return export_page.reply(paged.rows, paged, m.number,
                                         lambda n: encode_cursor(n.assigned_at, n.id))
            found = await work.agents.business_versions(asked.business_id, after, asked.page.limit + 1)
        rows, more = found[:asked.page.limit], len(found) > asked.page.limit
        paged = Paged(rows, more, version_cursor(rows[-1]) if more else "")
        return export_page.reply(rows, paged, lambda found: {"agent_id": found[0].agent_id,
                                                              **to_json(m.version(found[0], True))}, version_cursor)


def version_cursor(found: tuple[Version, datetime]) -> str:
    version, agent_created_at = found
    return export_page.key_cursor(agent_created_at.isoformat(), version.agent_id, version.version)


def version_key(cursor: str) -> tuple[datetime, str, int] | None:
    """The (agent_created_at, agent_id, version) after which a page of versions starts, or validation_error."""
    key = export_page.key_of(cursor, (str, str, int))
    if key is None:
        return None
    try:
        return datetime.fromisoformat(key[0]), key[1], key[2]
    except ValueError:
        raise ServiceError("validation_error", export_page.BAD_CURSOR) from None
