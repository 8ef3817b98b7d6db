"""Running an agent's custom tool for a call (RunCustomTool): the calls service asks, this service sends, as it
holds the tool secret (sealed under WEBHOOK_SECRETS_KEY, opened here only).

The request is a POST of `{tool_call_id, name, arguments, call: {id, business_id, agent_id, direction, from, to}}`
signed exactly as webhooks are (core.signing: every secret in force, the previous one during a rotation's
overlap), through the SSRF-guarded client (core.outbound) after the URL's host is checked again (core.destinations),
within the tool's timeout_ms. Whatever happens is an outcome with words for the model, never an error of the RPC:
a 2xx gives its body (cut at RESULT_MAX_BYTES, with a note), an error status, a redirect, a timeout or no answer
give `failed`, a URL that may not be called gives `refused`."""
from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from contracts.agents import CUSTOM_TOOL, TIMEOUT_MS
from core import destinations, signing
from core.errors import ServiceError
from core.ids import utcnow
from core.outbound import GuardedClient, RefusedAddress
from core.sealing import SecretBox
from core.uow import UnitOfWork
from services.agents.repository import AgentsUnit
from services.agents.service import config_of, found

log = logging.getLogger(__name__)

RESULT_MAX_BYTES = 16 * 1024
USER_AGENT = "Switchboard-Tools/1"


@dataclass(frozen=True)
class ToolRun:
    outcome: str  # ok, failed, refused
    result: str


class CustomTools:
    def __init__(self, uow: UnitOfWork[AgentsUnit], box: SecretBox, allow_loopback: bool):
        self.uow = uow  # the agents, their tools and sealed tool secrets (services.agents.repository)
        self.box = box
        self.allow_loopback = allow_loopback  # custom tools may call loopback URLs (core.destinations)
        self.http = GuardedClient(allow_loopback, timeout=aiohttp.ClientTimeout(total=TIMEOUT_MS[2] / 1000),
                                  max_bytes=RESULT_MAX_BYTES, headers={"User-Agent": USER_AGENT})

    async def close(self) -> None:
        await self.http.close()

    async def run(self, agent_id: str, name: str, tool_call_id: str, arguments: dict[str, Any],
                  call: dict[str, Any]) -> ToolRun:
        """Run the caller's agent's custom tool `name` (not_found for an agent of another business)."""
        async with self.uow.read() as work:
            row = await found(work.agents, agent_id, "agent_id")
        tool = next((t for t in config_of(row).tools if t["type"] == CUSTOM_TOOL and t["name"] == name), None)
        if tool is None or row.tool_secret_sealed is None:
            return ToolRun("refused", f"The tool {name} is not available to this agent. Please tell the caller "
                           "that this can't be done on this call.")
        try:
            await destinations.check_destination(tool["url"], self.allow_loopback, "url", "tool calls")
        except ServiceError as exc:
            log.warning("custom tool %s of agent %s refused: %s", name, agent_id, exc.message)
            return ToolRun("refused", f"The tool {name} may not be called: {exc.message}. Please tell the caller "
                           "that this can't be done right now.")
        body = json.dumps({"tool_call_id": tool_call_id, "name": name, "arguments": arguments, "call": call}).encode()
        secrets = self.box.in_force(row.tool_secret_sealed, row.tool_secret_previous_sealed,
                                    row.tool_secret_previous_expires_at, utcnow())
        header = signing.signature_header(secrets, int(time.time()), body)
        return await self._post(name, tool["url"], tool["timeout_ms"], body, header)

    async def _post(self, name: str, url: str, timeout_ms: int, body: bytes, header: str) -> ToolRun:
        seconds = timeout_ms / 1000
        headers = {"Content-Type": "application/json", signing.SIGNATURE_HEADER: header}
        try:
            async with asyncio.timeout(seconds), self.http.request(
                    "POST", url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=seconds)) as r:
                answer, cut = await _capped(r)
                status = r.status
        except RefusedAddress as exc:
            return ToolRun("refused", f"The tool {name} may not be called ({exc}). Please tell the caller that this "
                           "can't be done right now.")
        except TimeoutError:
            return ToolRun("failed", f"The tool {name} did not answer within {seconds:g} seconds. Please tell the "
                           "caller that this can't be done right now.")
        except aiohttp.ClientError as exc:
            log.warning("custom tool %s not reached: %s", name, type(exc).__name__)
            return ToolRun("failed", f"The tool {name} could not be reached. Please tell the caller that this "
                           "can't be done right now.")
        if not 200 <= status < 300:
            return ToolRun("failed", f"The tool {name} answered with an error (HTTP {status}). Please tell the "
                           "caller that this can't be done right now.")
        text = answer.decode("utf-8", errors="replace")
        if cut:
            text += f"\n[the tool's answer was cut at {RESULT_MAX_BYTES} bytes]"
        return ToolRun("ok", text or "The tool answered with no content.")


async def _capped(response: aiohttp.ClientResponse) -> tuple[bytes, bool]:
    """The body's first RESULT_MAX_BYTES, and whether there was more (the rest is not read)."""
    kept = bytearray()
    async for chunk in response.content.iter_any():
        kept += chunk
        if len(kept) > RESULT_MAX_BYTES:
            return bytes(kept[:RESULT_MAX_BYTES]), True
    return bytes(kept), False
