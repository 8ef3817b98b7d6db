"""The voice simulator's scripted caller (`dialogue`) and its tool calls in the provider's shapes (`tool_calls`): the
control plane's `caller` checked, each line answered by the stand-in's rules, a function tool asked (after what was
said so far is on the timeline) and its result said when the rule has no answer, endCall ending the call, a tool the
assistant does not carry never called, and a server's answer read as the provider reads it."""
import json

import pytest

from providers.voice.vapi.simulator.conversation import Timeline, transcript
from providers.voice.vapi.simulator.dialogue import caller_errors, converse
from providers.voice.vapi.simulator.standin import FALLBACK_REPLY, StandIn
from providers.voice.vapi.simulator.tool_calls import NO_RESULT, result_of, timeout_of

RULES = "\n".join([
    'When the caller says "order", call lookup_order with {"order": "A-17"}.',
    'When the caller says "book", call book_slot with {"day": "Saturday"} and answer "Booked for Saturday."',
    'When the caller says "text me", call sms and answer "Texting you now."',
    'When the caller says "transfer", call transferCall and answer "Putting you through."',
    'When the caller says "bye", call endCall and answer "Goodbye!"'])


def function(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


def standin(*tools: dict, **assistant) -> StandIn:
    return StandIn({"firstMessage": "Hi!", "model": {"messages": [{"role": "system", "content": RULES}],
                                                     "tools": list(tools)}, **assistant})


class Server:
    """The function tools' server: answers each call, noting what the timeline held when it was asked."""

    def __init__(self, timeline: Timeline):
        self.timeline, self.asked = timeline, []

    async def __call__(self, tool: dict, call: dict) -> str:
        self.asked.append((tool, call, [m["role"] for m in self.timeline.said]))
        return f"{call['function']['name']}: {call['function']['arguments']}"


async def play(caller: list[str], assistant: StandIn, opening: str | None = "Hi!") -> tuple[Timeline, Server, str]:
    timeline = Timeline()
    server = Server(timeline)
    ended = await converse(timeline, assistant, caller, opening, 1_700_000_000.0, server)
    return timeline, server, ended


@pytest.mark.parametrize("caller", [["Hello"], ["a"] * 50, ["x" * 1000]])
def test_a_caller_of_1_to_50_non_empty_lines_is_accepted(caller):
    assert caller_errors(caller) == []


@pytest.mark.parametrize("caller, errors", [
    (None, ["caller must be a list of 1 to 50 lines, each a non-empty string"]),
    ({"line": "hi"}, ["caller must be a list of 1 to 50 lines, each a non-empty string"]),
    ([], ["caller must be a list of 1 to 50 lines, each a non-empty string"]),
    (["a"] * 51, ["caller must hold at most 50 lines"]),
    (["ok", "", None, "x" * 1001], ["caller[1] must be a non-empty string", "caller[2] must be a non-empty string",
                                    "caller[3] must be at most 1000 characters"])])
def test_a_bad_caller_says_why(caller, errors):
    assert caller_errors(caller) == errors


async def test_a_function_tool_is_asked_after_the_call_so_far_and_its_result_is_said_without_an_answer():
    timeline, server, ended = await play(["Where is my order?"], standin(function("lookup_order")))
    [(tool, call, seen)] = server.asked
    assert tool == function("lookup_order") and seen == ["bot", "user", "tool_calls"]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"order": "A-17"}
    roles = [m["role"] for m in timeline.said]
    assert roles == ["bot", "user", "tool_calls", "tool_call_result", "bot"] and ended is None
    assert timeline.said[3]["result"] == timeline.said[4]["message"] == 'lookup_order: {"order": "A-17"}'
    assert transcript(timeline.said) == 'AI: Hi!\nUser: Where is my order?\nAI: lookup_order: {"order": "A-17"}'


async def test_the_rules_answer_is_said_rather_than_the_tools_result():
    timeline, server, _ = await play(["I want to book"], standin(function("book_slot")))
    assert len(server.asked) == 1 and timeline.said[-1]["message"] == "Booked for Saturday."


async def test_a_tool_the_assistant_does_not_carry_is_not_called():
    timeline, server, _ = await play(["book please", "text me"], standin({"type": "sms"}))
    assert server.asked == []  # book_slot: not carried; sms: the provider's own, not executed by the simulator
    assert [m["role"] for m in timeline.said] == ["bot", "user", "bot", "user", "tool_calls", "bot"]
    assert timeline.said[2]["message"] == "Booked for Saturday." and timeline.said[-1]["message"] == "Texting you now."


@pytest.mark.parametrize("line, tool, reason", [("bye", "endCall", "assistant-ended-call"),
                                                ("transfer me", "transferCall", "assistant-forwarded-call")])
async def test_end_call_and_transfer_call_end_the_call_once_the_answer_is_said(line, tool, reason):
    timeline, server, ended = await play([line, "Are you there?"], standin({"type": tool}))
    assert ended == reason and server.asked == []
    assert [m["role"] for m in timeline.said] == ["bot", "user", "tool_calls", "bot"]


async def test_an_assistant_that_waits_for_the_caller_does_not_open():
    timeline, _, _ = await play(["hmm"], standin(), opening=None)
    assert [(m["role"], m["message"]) for m in timeline.said] == [("user", "hmm"), ("bot", "Hi!")]
    timeline, _, _ = await play(["hmm", "still there?"], standin())
    assert timeline.said[-1]["message"] == FALLBACK_REPLY


def test_each_line_and_tool_entry_is_a_conversation_update_and_take_hands_over_what_is_new():
    timeline = Timeline()
    timeline.say(("bot", "Hi!", None), 3.0, 0.0)
    first = timeline.take()
    assert [m["type"] for _, m in first] == ["speech-update", "speech-update", "conversation-update"]
    timeline.note({"role": "tool_calls", "toolCalls": [], "message": "", **timeline.stamp(0.0)})
    [(_, update)] = timeline.take()
    assert update["messages"][-1]["secondsFromStart"] == 3.0 and timeline.take() == []


@pytest.mark.parametrize("answer, result", [
    ({"results": [{"toolCallId": "other", "result": "no"}, {"toolCallId": "c1", "result": "Booked."}]}, "Booked."),
    ({"results": [{"toolCallId": "c1", "result": {"slot": "9:00"}}]}, '{"slot": "9:00"}'),
    ({"results": [{"toolCallId": "c1", "error": "No slot left."}]}, "No slot left."),
    ({"results": []}, NO_RESULT), ({}, NO_RESULT), (None, NO_RESULT), ([], NO_RESULT)])
def test_a_servers_answer_gives_the_calls_result_or_its_error(answer, result):
    assert result_of(answer, "c1") == result


@pytest.mark.parametrize("server, seconds", [({}, 20.0), ({"timeoutSeconds": 5}, 5.0), ({"timeoutSeconds": True}, 20.0),
                                             ({"timeoutSeconds": 0}, 20.0)])
def test_a_server_has_its_timeout_seconds_default_20(server, seconds):
    assert timeout_of(server) == seconds
