"""What the agents service needs of the evals service, as a port: the eval gate's verdict on a configuration change
(the agent's scenarios run against each changed channel's configuration, on the live assistant).
`GrpcEvalGate` is the adapter over the evals service's GateEval; its answer is the evals service's
EvalGateOutcome, which the agents API passes on as its own reply's `eval_gate`."""
from __future__ import annotations

import dataclasses
from typing import Protocol

from core.messages import struct
from core.rpc import Client
from providers.voice.port import Conversation
from switchboard.v1 import evals_pb2

# The gate's outcome as the agents service keeps and answers it.
GateOutcome = evals_pb2.EvalGateOutcome


class EvalGate(Protocol):
    async def verdict(self, agent_id: str, assistant_id: str, targets: list[tuple[str, Conversation]],
                      wait_seconds: float) -> GateOutcome:
        """Run the agent's scenarios against each (channel, configuration), waiting up to `wait_seconds` for them."""


def forced(api_key_id: str) -> GateOutcome:
    """The outcome recorded when a write skips the gate (`force`)."""
    return evals_pb2.EvalGateOutcome(status="forced", forced_by=api_key_id)


class GrpcEvalGate:
    def __init__(self, client: Client):
        self.client = client

    async def verdict(self, agent_id: str, assistant_id: str, targets: list[tuple[str, Conversation]],
                      wait_seconds: float) -> GateOutcome:
        request = evals_pb2.GateEvalRequest(
            agent_id=agent_id, provider_assistant_id=assistant_id, max_wait_ms=int(wait_seconds * 1000),
            targets=[evals_pb2.GateTarget(channel=channel, overrides=struct(dataclasses.asdict(conversation)))
                     for channel, conversation in targets])
        outcome: GateOutcome = await self.client.GateEval(request, timeout=wait_seconds + 10)
        return outcome
