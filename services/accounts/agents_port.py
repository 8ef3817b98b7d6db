"""What the accounts service needs of the agents service, as a port: the signup's intake agent and its phone
number (the provisioning saga), and the numbers each business holds (the balance). `GrpcAgents` is the adapter
over the agents service's RPCs; the use-case tests give the use cases an in-memory one instead
(tests/memory/agents_port.py), so they need neither the agents service nor the voice provider."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from google.protobuf import field_mask_pb2

from core.rpc import Client
from switchboard.v1 import agents_pb2


@dataclass(frozen=True)
class HeldNumber:
    phone_number: str
    agent_id: str | None


class AgentsPort(Protocol):
    """Each call acts for the current caller (core.tenant), as the agents service checks it; a refusal raises
    core.errors.ServiceError with the agents service's code."""

    async def create_agent(self, business_id: str, name: str, system_prompt: str, first_message: str,
                           request_id: str) -> str:
        """The new agent's id (the one made before under the same request_id, when repeated)."""

    async def numbers_of(self, business_id: str) -> list[HeldNumber]: ...

    async def free_numbers(self, country: str | None, area_code: str | None, limit: int) -> list[str]:
        """Free voice numbers of the pool, in E.164."""

    async def assign_number(self, business_id: str, phone_number: str, agent_id: str) -> None: ...

    async def forward(self, business_id: str, phone_number: str, to: str, ring_seconds: int) -> None: ...

    async def release_number(self, business_id: str, phone_number: str) -> None: ...

    async def number_counts(self) -> dict[str, int]:
        """How many numbers each of the caller's businesses holds (those holding none are left out)."""


class GrpcAgents:
    """`AgentsPort` over the agents service's RPCs."""

    def __init__(self, client: Client):
        self.client = client

    async def create_agent(self, business_id: str, name: str, system_prompt: str, first_message: str,
                           request_id: str) -> str:
        made = await self.client.CreateAgent(agents_pb2.CreateAgentRequest(
            business_id=business_id, name=name, system_prompt=system_prompt, first_message=first_message,
            request_id=request_id))
        return str(made.id)

    async def numbers_of(self, business_id: str) -> list[HeldNumber]:
        held = await self.client.ListPhoneNumbers(agents_pb2.ListPhoneNumbersRequest(business_id=business_id))
        return [HeldNumber(n.phone_number, n.agent_id or None) for n in held.phone_numbers]

    async def free_numbers(self, country: str | None, area_code: str | None, limit: int) -> list[str]:
        free = await self.client.ListAvailableNumbers(agents_pb2.ListAvailableNumbersRequest(
            capability="voice", limit=limit, country=country, area_code=area_code))
        return [n.phone_number for n in free.numbers]

    async def assign_number(self, business_id: str, phone_number: str, agent_id: str) -> None:
        await self.client.AssignPhoneNumber(agents_pb2.AssignPhoneNumberRequest(
            business_id=business_id, phone_number=phone_number, agent_id=agent_id))

    async def forward(self, business_id: str, phone_number: str, to: str, ring_seconds: int) -> None:
        await self.client.UpdatePhoneNumber(agents_pb2.UpdatePhoneNumberRequest(
            business_id=business_id, phone_number=phone_number,
            forwarding=agents_pb2.Forwarding(to=to, ring_seconds=ring_seconds),
            update_mask=field_mask_pb2.FieldMask(paths=["forwarding"])))

    async def release_number(self, business_id: str, phone_number: str) -> None:
        await self.client.ReleasePhoneNumber(agents_pb2.ReleasePhoneNumberRequest(
            business_id=business_id, phone_number=phone_number))

    async def number_counts(self) -> dict[str, int]:
        counts = await self.client.CountPhoneNumbers(agents_pb2.CountPhoneNumbersRequest())
        return {c.business_id: c.phone_numbers for c in counts.businesses}
