"""send_sms and send_link: the texts an agent sends during a call, through messaging's one send path (PlaceSms), so
the one compliance decision (do-not-call, consent, quiet hours, state rules, caps) decides each of them.

A text goes to the caller (an inbound call's from number, an outbound call's to number) unless the model passes a
number the caller said (`to`, E.164). It is sent from the call's agent, keyed by the call and the tool call so a
retried tool call never texts twice. An inbound caller who asks for a text to their own number gives consent to
it: the send names the call (requested_on_call) and messaging records it before deciding (an earlier STOP still
wins); a number they merely say is decided on its own consent. send_link texts one of the tool's saved links
(settings `links`: [{name, url}]) by name, so the model never supplies a URL. Every answer is a sentence the model
can say: sent (ok), held back by a rule or a bad argument (refused), or messaging out of reach (failed); a
refusal never tells the model the rule's internals."""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import Any

from core.contact import normalize_e164
from core.errors import ServiceError
from providers.voice.port import ToolCall
from services.calls.domain import other_party
from services.calls.ports import AgentTool, Text, Texts
from services.calls.records import Call

log = logging.getLogger(__name__)

INBOUND = "inbound"
FAILED = "The text could not be sent right now. Please tell the caller it failed and offer another way to help."
NO_TEXT = "No text was sent: say what the text should say (text)."
# A refusal's words by the code messaging refused (or deferred) the text with.
UNTEXTABLE = ("No text was sent: {to} cannot receive texts from this business. Please tell the caller the text "
              "can't be sent and offer another way to help.")
REFUSALS = {
    "number_on_dnc": UNTEXTABLE, "dnc_registry_stale": UNTEXTABLE, "number_opted_out": UNTEXTABLE,
    "tcpa_violation": ("No text was sent: it is outside the hours when texts may be sent to {to}. Please tell the "
                       "caller the text can't be sent right now."),
    "content_blocked": ("No text was sent: the message breaks the rules for texts (no link shorteners or restricted "
                        "topics, at most 1600 characters). Reword it, or tell the caller it can't be sent."),
    "rate_limited": ("No text was sent: this business has sent all the texts it may today. Please tell the caller "
                     "the text can't be sent today."),
    "forbidden": ("No text was sent: this business cannot send texts at the moment. Please tell the caller the text "
                  "can't be sent."),
    "not_found": ("No text was sent: this agent has no phone number to text from. Please tell the caller the text "
                  "can't be sent."),
}


class Refused(Exception):
    """A tool call refused, with the sentence for the model."""


def sent(to: str) -> str:
    return f"Text sent to {to}."


def link_text(name: str, url: str) -> str:
    return f"Here is the link you asked for ({name}): {url}"


def unknown_link(asked: str, links: Mapping[str, str]) -> str:
    return (f"There is no saved link named \"{asked}\". The saved links are: {', '.join(links)}. Send one of those, "
            "or tell the caller that link can't be sent.")


def recipient(call: Call, said: object) -> str:
    """Who the text goes to: the number the caller said (E.164), else the caller."""
    if said not in (None, ""):
        try:
            return normalize_e164(str(said), "to")
        except ServiceError:
            raise Refused(f"No text was sent: {said} is not a phone number I can text. Ask the caller for the full "
                          "number with its country code (e.g. +14155550123).") from None
    caller = other_party(call)
    if not caller:
        raise Refused("No text was sent: the caller's number is withheld. Ask them for a number to text.")
    return caller


def idempotency_key(call: Call, tool_call: ToolCall) -> str:
    """The same for every delivery of one tool call of one call, and short whatever the provider's id is."""
    return f"tool-call:{call.id}:{hashlib.sha256(tool_call.id.encode()).hexdigest()[:32]}"


def link_body(tool: AgentTool, arguments: Mapping[str, Any]) -> str:
    """The text of send_link: the saved link the model named (its case aside)."""
    links = {str(link["name"]): str(link["url"]) for link in tool.settings.get("links") or ()}
    asked = str(arguments.get("name") or "").strip()
    name = next((n for n in links if n.casefold() == asked.casefold()), None)
    if name is None:
        raise Refused(unknown_link(asked, links))
    return link_text(name, links[name])


def sms_body(arguments: Mapping[str, Any]) -> str:
    text = arguments.get("text")
    if not isinstance(text, str) or not text.strip():
        raise Refused(NO_TEXT)
    return text.strip()


async def run(texts: Texts, call: Call, tool: AgentTool, tool_call: ToolCall) -> tuple[str, str]:
    """(outcome, result) of a send_sms or send_link tool call."""
    arguments = tool_call.arguments
    try:
        body = link_body(tool, arguments) if tool.type == "send_link" else sms_body(arguments)
        to = recipient(call, arguments.get("to"))
    except Refused as refused:
        return "refused", str(refused)
    asked_here = call.direction == INBOUND and to == call.from_number
    text = Text(agent_id=call.agent_id, to=to, body=body, idempotency_key=idempotency_key(call, tool_call),
                reference=tool_call.id, requested_on_call=call.id if asked_here else None)
    try:
        placed = await texts.place_text(text)
    except ServiceError as exc:
        if exc.code in REFUSALS:
            return "refused", REFUSALS[exc.code].format(to=to)
        log.warning("the %s text of call %s was not sent: %s", tool.type, call.id, exc.code)
        return "failed", FAILED
    if not placed.sent:
        return "refused", REFUSALS.get(placed.code or "", REFUSALS["tcpa_violation"]).format(to=to)
    return "ok", sent(placed.to)
