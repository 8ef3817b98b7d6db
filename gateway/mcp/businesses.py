"""What the connector's get_business_info reads of the services, as the caller: the key's businesses with their
time zones (accounts), every agent of them (agents) and their calls counted per group (calls, core.aggregates)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core import aggregates
from core.ids import utcnow
from gateway.routes import RequestContext
from switchboard.v1 import accounts_pb2, agents_pb2


@dataclass(frozen=True)
class Reach:
    """The key's businesses (a key bound to one business: that one), with names and time zones, and the instant
    the call counts' windows end at."""

    businesses: list
    now: datetime


async def reach_of(ctx: RequestContext) -> Reach:
    reply = await ctx.rpc("accounts").BusinessZones(accounts_pb2.BusinessZonesRequest())
    return Reach(list(reply.businesses), utcnow())


async def call_counts(ctx: RequestContext, reach: Reach, *, days: int, group_by: tuple[str, ...]) -> list:
    """The calls of the reach's businesses in their last `days` local days, counted per group."""
    query = aggregates.Query([(b.business_id, b.timezone) for b in reach.businesses], aggregates.Window(days=days),
                             group_by, as_of=reach.now)
    return list((await ctx.rpc("calls").AggregateCalls(aggregates.request_of(query))).rows)


async def agents_of(ctx: RequestContext) -> list:
    """Every agent of the key's businesses."""
    return list((await ctx.rpc("agents").AgentDirectory(agents_pb2.AgentDirectoryRequest())).agents)
