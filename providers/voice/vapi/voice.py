"""`VoiceProvider` over Vapi: our types in, Vapi's REST API (`VapiClient`) behind, our types out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from providers.voice.port import (
    AssistantSpec,
    CallMessage,
    CallReport,
    Conversation,
    EvalRun,
    EvalSpec,
    Forwarding,
    InboundAnswer,
    LiveAssistant,
    OutboundCall,
    ToolResult,
    TransferAnswer,
)
from providers.voice.vapi import assistants, calls, evals, numbers
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import ServerConfig, WebhookAuth


class VapiVoice:
    """The port over one `VapiClient`. `server` is where Vapi sends each call's messages (with the webhook
    credential that signs them, found or registered on first use), for a process given that credential's secret
    (`auth`; None: a process that places no call and imports no number, as the evals service);
    `sip_credential_id` the SIP trunk our numbers are imported over."""

    kept_settings = assistants.KEPT

    def __init__(self, client: VapiClient, auth: WebhookAuth | None, base_url: str, sip_credential_id: str):
        self.client = client
        self.server = ServerConfig(client, auth, base_url) if auth is not None else None
        self.sip_credential_id = sip_credential_id

    def __repr__(self) -> str:  # never the key
        return f"VapiVoice({self.client!r})"

    async def _server(self) -> dict[str, Any]:
        if self.server is None:
            raise RuntimeError("this process's voice provider has no webhook credential: build it with "
                               "providers.configured.voice(settings, server_messages=True)")
        return await self.server.get()

    async def check(self) -> None:
        await self.client.list_assistants(limit=1)

    # -- assistants ---------------------------------------------------------------------------------------------

    async def _tools_server(self, spec: AssistantSpec) -> dict[str, Any] | None:
        """Where the spec's function tools are answered (our messages URL and credential), if it has some."""
        return await self._server() if assistants.needs_server(spec) else None

    async def create_assistant(self, spec: AssistantSpec) -> str:
        body = assistants.create_body(spec, await self._tools_server(spec))
        return str((await self.client.create_assistant(body))["id"])

    async def update_assistant(self, assistant_id: str, spec: AssistantSpec, previous: AssistantSpec) -> None:
        body = assistants.update_body(spec, previous, await self._tools_server(spec))
        if body:
            await self.client.update_assistant(assistant_id, body)

    async def live_assistant(self, assistant_id: str) -> LiveAssistant:
        return assistants.live(await self.client.get_assistant(assistant_id))

    async def delete_assistant(self, assistant_id: str) -> None:
        await self.client.delete_assistant(assistant_id)

    # -- phone numbers ------------------------------------------------------------------------------------------

    async def import_number(self, e164: str) -> str:
        body = numbers.import_body(e164, self.sip_credential_id, await self._server())
        return str((await self.client.import_phone_number(body))["id"])

    async def forward_first(self, number_id: str, forwarding: Forwarding | None) -> None:
        await self.client.update_phone_number(number_id, {"hooks": numbers.ringing_hooks(forwarding)})

    async def delete_number(self, number_id: str) -> None:
        await self.client.delete_phone_number(number_id)

    # -- calls --------------------------------------------------------------------------------------------------

    async def place_call(self, call: OutboundCall) -> str:
        return str((await self.client.create_call(calls.call_body(call, await self._server())))["id"])

    async def placed_call(self, assistant_id: str, our_call_id: str) -> str | None:
        listed = await self.client.list_calls(assistant_id=assistant_id, limit=calls.RECENT_CALLS)
        return next((ref.provider_call_id for ref in map(calls.call_ref, listed) if ref.our_call_id == our_call_id),
                    None)

    async def ended_call(self, provider_call_id: str) -> CallReport | None:
        found = await self.client.get_call(provider_call_id)
        return calls.report(calls.call_ref(found), found) if calls.is_ended(found) else None

    async def delete_call(self, provider_call_id: str) -> None:
        await self.client.delete_call(provider_call_id, calls.DELETE_CALL_BODY)

    async def inbound_calls_since(self, since: datetime) -> list[CallReport]:
        listed: list[dict[str, Any]] = []
        before: str | None = None
        while True:  # newest first, RECENT_CALLS a page: the next page is the calls created before the oldest seen
            page = await self.client.list_calls(limit=calls.RECENT_CALLS, created_at_ge=calls.iso(since),
                                                created_at_lt=before)
            listed += page
            if len(page) < calls.RECENT_CALLS:
                break
            before = min(str(c.get("createdAt") or "") for c in page)
        numbers: dict[str, str] = {}
        if calls.without_number(listed):
            numbers = {str(n.get("id")): str(n.get("number")) for n in await self.client.list_phone_numbers()}
        return calls.ended_inbound(listed, numbers)

    def read_message(self, payload: object) -> CallMessage:
        return calls.read_message(payload)

    async def answer(self, answer: InboundAnswer | str) -> dict[str, Any]:
        if isinstance(answer, str):
            return calls.spoken_refusal(answer)
        return calls.inbound_answer(answer, await self._server())

    def tool_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        return calls.tool_results(results)

    def transfer_answer(self, answer: TransferAnswer) -> dict[str, Any]:
        return calls.transfer_answer(answer)

    # -- evals --------------------------------------------------------------------------------------------------

    async def create_eval(self, spec: EvalSpec) -> str:
        return str((await self.client.create_eval(evals.eval_body(spec)))["id"])

    async def update_eval(self, eval_id: str, spec: EvalSpec) -> None:
        await self.client.update_eval(eval_id, evals.update_body(spec))

    async def delete_eval(self, eval_id: str) -> None:
        await self.client.delete_eval(eval_id)

    async def run_eval(self, eval_id: str, assistant_id: str, conversation: Conversation | None = None) -> EvalRun:
        return evals.run_of(await self.client.run_eval(evals.run_body(eval_id, assistant_id, conversation)))

    async def eval_run(self, run_id: str) -> EvalRun:
        return evals.run_of(await self.client.get_eval_run(run_id))

    async def eval_runs_since(self, eval_id: str, assistant_id: str, since: datetime) -> list[EvalRun]:
        found: list[EvalRun] = []
        page = 1
        while True:  # newest first: the pages stop at the first run created before `since`
            listed = await self.client.list_eval_runs(limit=evals.RUNS_PAGE, page=page)
            matches, older = evals.runs_since(listed.get("results") or [], eval_id, assistant_id, since)
            found += matches
            if older or not (listed.get("metadata") or {}).get("hasNextPage"):
                return list(reversed(found))
            page += 1

    async def close(self) -> None:
        await self.client.close()
