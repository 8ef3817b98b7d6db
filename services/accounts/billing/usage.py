"""What each business used: the API requests the gateways log (appended in bulk), the calls' minutes and costs
(from their events, once per call) and the balance an owner reads (minutes, numbers held, subscription)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core import tenant
from core.errors import invalid
from core.ids import is_uuid, new_id
from core.pagination import Page, Paged
from core.uow import UnitOfWork
from services.accounts import domain
from services.accounts.agents_port import AgentsPort
from services.accounts.records import Subscription, UsageRecord
from services.accounts.repository import AccountsUnit, HotPath


@dataclass(frozen=True)
class CallCost:
    """A call to bill in the usage log, from its call.completed or call.failed event."""

    business_id: str
    call_id: str
    duration_seconds: int
    cost_cents: int
    at: datetime


@dataclass(frozen=True)
class Balance:
    business_id: str
    minutes_used: int
    phone_numbers: int
    subscription_status: str


class Usage:
    def __init__(self, uow: UnitOfWork[AccountsUnit], hot: HotPath, agents: AgentsPort):
        self.uow = uow
        self.hot = hot
        self.agents = agents

    async def record_usage(self, entries: list[UsageRecord]) -> int:
        """Append a gateway's batch in one statement: this runs for every API request, batched by the gateways
        (each entry with its key). An entry whose id is stored already adds nothing, so a batch resent after its
        answer was lost (accounts stopped after storing it, or the gateway's deadline passed) is answered, not
        refused for ever; returns how many entries were new."""
        if not entries:
            return 0
        records: list[tuple[Any, ...]] = []
        last_used: dict[str, datetime] = {}
        for e in entries:
            key_id = e.api_key_id or ""
            if not (is_uuid(e.account_id) and is_uuid(key_id)):
                raise invalid("usage entries need account_id and api_key_id")
            records.append((e.id if is_uuid(e.id) else new_id(), e.account_id,
                            e.business_id if is_uuid(e.business_id or "") else None, key_id,
                            e.endpoint[:500], e.method[:10], e.status_code, e.call_id, e.cost_cents, e.created_at))
            last_used[key_id] = max(e.created_at, last_used.get(key_id, e.created_at))
        return await self.hot.append_usage(records, last_used)

    async def list_usage(self, start: datetime | None, end: datetime | None, page: Page) -> Paged:
        who = tenant.require_account()
        if start and end and start >= end:
            raise invalid("start must be before end")
        async with self.uow.read() as work:
            return await work.accounts.usage_page(who.account_id, who.bound_business_id or None, start, end, page)

    async def balances(self) -> list[Balance]:
        """Each business of the caller (oldest first) with its call minutes, its phone numbers (the agents service
        holds them: asked while the database is read) and its subscription status."""
        business_ids = tenant.require_account().business_ids

        async def read() -> tuple[list[Subscription], dict[str, int]]:
            async with self.uow.read() as work:
                return (await work.accounts.subscriptions_of(list(business_ids)),
                        await work.accounts.minutes_used(list(business_ids)))
        (rows, minutes), held = await asyncio.gather(read(), self.agents.number_counts())
        return [Balance(str(r.id), minutes.get(str(r.id), 0), held.get(str(r.id), 0), r.subscription_status)
                for r in rows]

    async def record_call_usage(self, costs: list[CallCost]) -> int:
        """Calls' minutes and costs in their businesses' usage logs, once per call, in one transaction; returns how
        many were new (a call already there, or of a business that is gone, adds nothing)."""
        if not costs:
            return 0
        async with self.uow.transaction() as work:
            accounts = await work.accounts.accounts_of({c.business_id for c in costs})
            return await work.accounts.append_call_usage([dict(
                id=new_id(), account_id=accounts[c.business_id], business_id=c.business_id, call_id=c.call_id,
                minutes=domain.billed_minutes(c.duration_seconds), cost_cents=max(0, c.cost_cents), created_at=c.at)
                for c in costs if c.business_id in accounts])
