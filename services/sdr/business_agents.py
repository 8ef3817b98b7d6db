"""The agents of a business and their numbers, as the runs and the pipeline pick the agent that calls and texts."""
from __future__ import annotations

from core.errors import invalid
from core.rpc import Client
from switchboard.v1 import agents_pb2, common_pb2


async def agent_numbers(agents: Client, business_id: str) -> dict[str, str | None]:
    """Each of the business's agents (the first 100) with its phone number (None without one)."""
    reply = await agents.ListAgents(agents_pb2.ListAgentsRequest(business_id=business_id,
                                                                 page=common_pb2.PageRequest(limit=100)))
    return {a.id: a.phone_number if a.HasField("phone_number") else None for a in reply.agents}


def only_agent_with_number(numbers: dict[str, str | None], setting: str) -> str:
    """The business's one agent with a number; a 400 naming `setting` when it has none or several."""
    with_numbers = sorted(a for a, n in numbers.items() if n)
    if len(with_numbers) != 1:
        raise invalid("the business has no agent with a phone number: assign one a number" if not with_numbers else
                      f"the business has {len(with_numbers)} agents with numbers: name the one to use in {setting}")
    return with_numbers[0]
