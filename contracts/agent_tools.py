"""An agent's saved tools (services.agents.tools checks them) as the provider assistant gets them: one reading for
the assistant the agents service keeps at the provider and for the model an outbound call overrides it with (the
calls service), so a call placed carries the same tools as the assistant that answers."""
from __future__ import annotations

import json
from typing import Any

from contracts.agents import AGENT_TOOLS, BUILTIN_PARAMETERS, CUSTOM_TOOL
from providers.voice.port import AssistantTool, EndCallTool, FunctionTool, TransferDestination, TransferTool


def _parameters(tool: dict[str, Any]) -> dict[str, Any]:
    if tool["type"] == CUSTOM_TOOL:
        parameters: dict[str, Any] = tool["parameters"]
        return parameters
    parameters = json.loads(json.dumps(BUILTIN_PARAMETERS[tool["type"]]))
    if tool["type"] == "send_link":
        parameters["properties"]["name"]["enum"] = [link["name"] for link in tool["links"]]
    return parameters


def provider_tools(tools: list[dict[str, Any]]) -> tuple[AssistantTool, ...]:
    """What the provider assistant gets: a function per tool that runs on our side (the built-ins we execute and
    the custom tools, whose calls we forward), the transfer and the hang-up as the provider's own."""
    out: list[AssistantTool] = []
    for tool in tools:
        if tool["type"] == "transfer_call":
            out.append(TransferTool(tuple(
                TransferDestination(d["name"], d["phone_number"], d["mode"] == "warm", d.get("message"))
                for d in tool["destinations"])))
        elif tool["type"] == "end_call":
            out.append(EndCallTool())
        else:
            name = tool["name"] if tool["type"] == CUSTOM_TOOL else tool["type"]
            description = tool["description"] if tool["type"] == CUSTOM_TOOL else AGENT_TOOLS[tool["type"]]
            out.append(FunctionTool(name, description, _parameters(tool)))
    return tuple(out)
