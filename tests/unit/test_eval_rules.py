"""Eval scenario rules (services.evals.domain): turns, judge plans, and the provider's body and runs as the Vapi
adapter writes and reads them."""
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from google.protobuf import json_format

from core.errors import ServiceError
from providers.voice.vapi import evals as vapi_evals
from services.evals import domain, test_mode
from services.evals.records import Run
from services.evals.servicer import run_message

ASK = {"role": "user", "content": "Are you open?"}
RUBRIC = {"provider": "openai", "model": "gpt-4o",
          "messages": [{"role": "system", "content": "Answer pass if {{messages[-1]}} is polite, else fail."}]}


def refused(messages) -> str:
    with pytest.raises(ServiceError) as err:
        domain.check_messages(messages)
    assert err.value.code == "invalid_request"
    return err.value.message


def test_valid_turns_of_each_judge_type_are_kept_as_given():
    turns = [ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "Yes."}},
             ASK, {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?i)open",
                                                       "toolCalls": [{"name": "book", "arguments": {"day": "sat"}}]}},
             ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": RUBRIC}}]
    assert domain.check_messages(turns) is turns
    # An assistant may speak first (its greeting is graded).
    assert domain.check_messages([{"role": "assistant", "judgePlan": {"type": "exact", "content": "Hi"}}, ASK])


@pytest.mark.parametrize("messages, fragment", [
    (None, "messages is required"),
    ([ASK] * 2, "messages[1].role"),
    ([ASK, {"role": "system", "content": "x"}], "messages[1].role must be user or assistant"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "fuzzy"}}], "messages[1].judgePlan.type"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x", "toolCalls": []}}],
     "toolCalls must be a non-empty"),
    # The provider requires content in exact and regex plans (AssistantMessageJudgePlanExact, ...Regex).
    ([ASK, {"role": "assistant", "judgePlan": {"type": "regex", "toolCalls": [{"name": "sms"}]}}],
     "messages[1].judgePlan.content is required"),
    # Its limits: 1000 characters of a turn's or a plan's content.
    ([{"role": "user", "content": "x" * 1001}, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x"}}],
     "messages[0].content must be at most 1000"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x" * 1001}}],
     "messages[1].judgePlan.content must be at most 1000"),
    # Its judge models: openai, anthropic, google (custom-llm needs a url a rubric does not carry); no groq.
    ([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": {**RUBRIC, "provider": "groq"}}}],
     "judgePlan.model.provider must be one of openai, anthropic, google"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": {**RUBRIC, "messages": []}}}],
     "judgePlan.model.messages must be a non-empty"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": {k: v for k, v in RUBRIC.items()
                                                                         if k != "model"}}}],
     "messages[1].judgePlan.model.model is required"),
    ([{"role": "user", "content": " "}, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x"}}],
     "messages[0].content is required"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x"}}] * 26, "at most 50 turns"),
    # A judge of tool calls: names and arguments as objects; a regex plan's arguments are patterns.
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x", "toolCalls": [{"arguments": {}}]}}],
     "messages[1].judgePlan.toolCalls[0].name is required"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x",
                                               "toolCalls": [{"name": "send_sms", "arguments": ["hi"]}]}}],
     "messages[1].judgePlan.toolCalls[0].arguments must be an object"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x",
                                               "toolCalls": [{"name": "send_sms", "result": "sent"}]}}],
     "messages[1].judgePlan.toolCalls[0] has unknown field(s) result"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "regex", "content": "x",
                                               "toolCalls": [{"name": "send_sms", "arguments": {"to": "(+1"}}]}}],
     "messages[1].judgePlan.toolCalls[0].arguments.to is not a valid regular expression"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "regex", "content": "x",
                                               "toolCalls": [{"name": "send_sms", "arguments": {"to": 5}}]}}],
     "messages[1].judgePlan.toolCalls[0].arguments.to is required: a non-empty string"),
])
def test_refusals_name_the_turn_and_the_field(messages, fragment):
    assert fragment in refused(messages)


def test_the_provider_body_is_a_chat_mock_conversation():
    scenario = domain.new_scenario(" booking.saturday ", None, [ASK, {"role": "assistant",
                                                                      "judgePlan": {"type": "exact", "content": "Yes"}}])
    body = vapi_evals.eval_body(domain.eval_spec(scenario))
    assert body["type"] == "chat.mockConversation" and body["name"] == "booking.saturday"
    assert body["description"] == "" and body["messages"] == scenario.messages


def test_each_expected_tool_call_is_answered_in_the_mirror_by_a_stub_and_nothing_else():
    """Test mode: the turn whose plan expects calls is followed by one mock tool response per call, our stub (an
    exact plan's arguments in it; a regex plan's are patterns, left out); our stored turns stay as given."""
    turns = [{"role": "user", "content": "Text me and book Saturday"},
             {"role": "assistant", "judgePlan": {"type": "exact", "content": "Done.", "toolCalls": [
                 {"name": "send_sms", "arguments": {"text": "Your booking link"}},
                 {"name": "book_appointment", "arguments": {"starts_at": "2026-12-05T10:00:00", "name": "Ann Lee"}}]}},
             {"role": "user", "content": "Thanks"},
             {"role": "assistant", "judgePlan": {"type": "regex", "content": ".*",
                                                 "toolCalls": [{"name": "lookup_order", "arguments": {"order": "A-.*"}}]}},
             {"role": "user", "content": "Bye"},
             {"role": "assistant", "judgePlan": {"type": "exact", "content": "Bye."}}]
    scenario = domain.new_scenario("booking.texts_and_books", None, turns)
    body = vapi_evals.eval_body(domain.eval_spec(scenario))
    assert scenario.messages == turns
    assert body["messages"] == [*turns[:2],
                                {"role": "tool", "content": '(test mode) A text would be sent to the caller: "Your '
                                                            'booking link". Nothing was sent.'},
                                {"role": "tool", "content": "(test mode) An appointment at 2026-12-05T10:00:00 for Ann "
                                                            "Lee would be booked. Nothing was booked."},
                                *turns[2:4],
                                {"role": "tool", "content": "(test mode) The tool lookup_order would be called. Nothing "
                                                            "was sent to it."},
                                *turns[4:]]
    assert vapi_evals.update_body(domain.eval_spec(scenario))["messages"] == body["messages"]


@pytest.mark.parametrize("name, arguments, said", [
    ("send_sms", {"to": "+14155550100", "text": "Hi"}, 'A text would be sent to +14155550100: "Hi". Nothing was sent.'),
    ("send_link", {"name": "Booking page"}, "The link Booking page would be texted to the caller. Nothing was sent."),
    ("check_availability", {"date": "2026-12-05"},
     "The free slots on 2026-12-05 would be looked up. Nothing was read."),
    ("book_appointment", {}, "An appointment would be booked. Nothing was booked."),
    ("update_lead", {"name": "Ann", "status": "qualified", "n": 3},
     "The caller's lead would be updated (name: Ann, status: qualified). Nothing was written."),
    ("transfer_call", {"destination": "Sales"}, "The call would be transferred to a person. Nothing was transferred."),
    ("end_call", {}, "The call would end here."),
    ("lookup_order", {"order": "A-17"}, "The tool lookup_order would be called. Nothing was sent to it."),
])
def test_a_stub_says_what_a_live_call_would_have_done_and_that_nothing_was(name, arguments, said):
    assert test_mode.stub_result(name, arguments) == f"(test mode) {said}"


def test_a_rubric_may_be_longer_than_a_turn():
    long_rubric = {**RUBRIC, "messages": [{"role": "system", "content": "Answer pass or fail. " + "x" * 2000}]}
    assert domain.check_messages([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": long_rubric}}])


def test_the_mirror_fits_the_providers_name_and_description():
    scenario = domain.new_scenario("n" * 200, "d" * 2000, [ASK, {"role": "assistant",
                                                                 "judgePlan": {"type": "exact", "content": "Yes"}}])
    body = vapi_evals.eval_body(domain.eval_spec(scenario))
    assert (len(body["name"]), len(body["description"])) == (80, 500) and len(scenario.description) == 2000


def _run(status: str, passed: bool | None = None):
    return SimpleNamespace(status=status, passed=passed)


@pytest.mark.parametrize("runs, status, counts", [
    ([], "no_scenarios", (0, 0, 0, 0)),
    ([_run("ended", True), _run("ended", True)], "passed", (2, 2, 2, 0)),
    ([_run("ended", True), _run("in-progress")], "unfinished", (2, 1, 1, 0)),
    ([_run("queued"), _run("ended", False), _run("ended", True)], "failed", (3, 2, 1, 1)),
])
def test_the_gate_refuses_on_a_failure_first_then_on_an_unfinished_run(runs, status, counts):
    verdict = domain.gate_verdict(runs)
    assert verdict.status == status and (verdict.total, verdict.completed, verdict.passed, verdict.failed) == counts
    assert verdict.shown == [r for r in runs if r.passed is False] + [r for r in runs if r.status != "ended"]


def test_a_runs_tool_calls_are_read_from_its_result_messages():
    """The provider's EvalRun has no list of tool calls: its result messages carry them."""
    messages = [ASK, {"role": "assistant", "content": "Texted.", "toolCalls": [{"name": "sms", "arguments": {"a": 1}},
                                                                            {"name": "book"}]},
                {"role": "tool", "content": "ok"}]
    assert vapi_evals.run_of({"status": "running", "results": []}).tool_calls == ()
    ended = vapi_evals.run_of({"status": "ended", "endedReason": "mockConversation.done",
                               "results": [{"status": "pass", "messages": messages}]})
    # Each call's result: the tool response that answered it (the k-th tool message after its message), if any.
    assert ended.passed is True and ended.tool_calls == [
        {"turn": 1, "name": "sms", "arguments": {"a": 1}, "result": "ok"},
        {"turn": 1, "name": "book", "arguments": {}, "result": None}]
    later = [*messages, {"role": "tool", "content": "booked"}, ASK,
             {"role": "assistant", "content": "Done.", "toolCalls": [{"name": "end_call"}]}, ASK]
    ended = vapi_evals.run_of({"status": "ended", "endedReason": "mockConversation.done",
                               "results": [{"status": "pass", "messages": later}]})
    assert [(c["turn"], c["name"], c["result"]) for c in ended.tool_calls] == [
        (1, "sms", "ok"), (1, "book", "booked"), (5, "end_call", None)]


def test_a_runs_tool_calls_always_show_a_result():
    """A run recorded before its calls carried their stub reads with result null, as a call given none does."""
    now = datetime.now(UTC)
    row = Run("r", "b", "a", "e", "n", None, "p", "ended", True, [], "mockConversation.done", now, now, now,
              "request", None, [{"turn": 1, "name": "send_sms", "arguments": {}},
                                {"turn": 3, "name": "end_call", "arguments": {}, "result": "(test mode) x"}])
    shown = json_format.MessageToDict(run_message(row))["stubbedToolCalls"]
    assert [c["result"] for c in shown] == [None, "(test mode) x"]
