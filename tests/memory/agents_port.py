"""The accounts service's port on the agents service (services.accounts.agents_port) in memory, for the use cases
that reach it (the provisioning saga, the balances) in either tier: the fast one (tests/unit) and the stack-backed
one (tests/service)."""
from __future__ import annotations

import uuid

from core import tenant
from core.errors import ServiceError, not_found
from services.accounts.agents_port import HeldNumber


class InMemoryAgents:
    """`AgentsPort` over a dict: a pool of free numbers, the agents made (one per request id) and the numbers held.
    `taken_first` numbers are refused as `conflict` when assigned (another signup took them first). As the agents
    service, it acts for the current caller (core.tenant): a business not the caller's is refused, and the counts
    are of the caller's businesses."""

    def __init__(self, pool: list[str], taken_first: tuple[str, ...] = ()):
        self.pool = list(pool)
        self.taken_first = set(taken_first)
        self.agents: dict[tuple[str, str], str] = {}
        self.held: dict[str, HeldNumber] = {}  # phone number -> holder
        self.owner: dict[str, str] = {}  # phone number -> business
        self.forwarding: dict[str, tuple[str, int]] = {}

    async def create_agent(self, business_id, name, system_prompt, first_message, request_id) -> str:
        tenant.require_business(tenant.current(), business_id)
        return self.agents.setdefault((business_id, request_id), str(uuid.uuid4()))

    async def numbers_of(self, business_id):
        tenant.require_business(tenant.current(), business_id)
        return [held for number, held in self.held.items() if self.owner[number] == business_id]

    async def free_numbers(self, country, area_code, limit):
        return [n for n in self.pool if area_code is None or n[2:5] == area_code][:limit]

    async def assign_number(self, business_id, phone_number, agent_id):
        tenant.require_business(tenant.current(), business_id)
        self.pool.remove(phone_number)
        if phone_number in self.taken_first:
            raise ServiceError("conflict", f"phone number {phone_number} is not available")
        self.held[phone_number], self.owner[phone_number] = HeldNumber(phone_number, agent_id), business_id

    async def forward(self, business_id, phone_number, to, ring_seconds):
        tenant.require_business(tenant.current(), business_id)
        if self.owner.get(phone_number) != business_id:
            raise not_found(f"phone number {phone_number} of this business")
        self.forwarding[phone_number] = (to, ring_seconds)

    async def release_number(self, business_id, phone_number):
        tenant.require_business(tenant.current(), business_id)
        if self.owner.pop(phone_number, None) != business_id:
            raise not_found(f"phone number {phone_number} of this business")
        del self.held[phone_number]
        self.pool.append(phone_number)

    async def number_counts(self):
        counts: dict[str, int] = {}
        for business_id in self.owner.values():
            if tenant.current().can_access(business_id):
                counts[business_id] = counts.get(business_id, 0) + 1
        return counts
