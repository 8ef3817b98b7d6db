"""Agents gRPC servicer: the agent RPCs and the phone-number RPCs over one runtime and one
voice-provider client."""
from __future__ import annotations

from pathlib import Path

from core.grpc_server import Runtime
from providers.voice.adapter import ProviderError, VoiceProvider
from providers.voice.client import VapiClient
from services.agents.agent_rpcs import AgentRpcs
from services.agents.number_rpcs import NumberRpcs
from services.agents.pool import PoolLoader
from switchboard.v1 import agents_pb2, agents_pb2_grpc


class AgentsServicer(AgentRpcs, NumberRpcs, agents_pb2_grpc.AgentsServicer):
    def __init__(self, runtime: Runtime, voice: VoiceProvider):
        self.rt = runtime
        self.engine = runtime.engine
        self.voice = voice
        self.sip_credential_id = runtime.settings.voice_sip_credential_id

    async def CheckVoiceProvider(self, request, context):
        try:
            await self.voice.list_assistants(limit=1)
        except ProviderError as exc:
            return agents_pb2.VoiceProviderStatus(status=provider_status(exc.status))
        return agents_pb2.VoiceProviderStatus(status="ok")


def provider_status(http_status: int | None) -> str:
    """What a failed provider call says about the provider as a whole."""
    if http_status is None or http_status >= 500 or http_status == 429:
        return "unreachable"
    if http_status in (401, 403):
        return "rejected_credentials"
    return "refused"


def build(runtime: Runtime) -> AgentsServicer:
    s = runtime.settings
    voice = VapiClient(s.voice_api_url, s.voice_api_key.reveal(), timeout=s.voice_timeout_seconds)
    runtime.on_stop.append(voice.close)
    if s.number_pool_file:
        runtime.run(PoolLoader(runtime.engine, Path(s.number_pool_file)))
    return AgentsServicer(runtime, voice)
