"""Eval scenario rules (services.evals.domain): turns, judge plans and the provider's body."""
import pytest

from core.errors import ServiceError
from services.evals import domain

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
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "toolCalls": []}}], "toolCalls must be a non-empty"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": {**RUBRIC, "messages": []}}}],
     "judgePlan.model.messages must be a non-empty"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "ai", "model": {k: v for k, v in RUBRIC.items()
                                                                         if k != "model"}}}],
     "messages[1].judgePlan.model.model is required"),
    ([{"role": "user", "content": " "}, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x"}}],
     "messages[0].content is required"),
    ([ASK, {"role": "assistant", "judgePlan": {"type": "exact", "content": "x"}}] * 26, "at most 50 turns"),
])
def test_refusals_name_the_turn_and_the_field(messages, fragment):
    assert fragment in refused(messages)


def test_the_provider_body_is_a_chat_mock_conversation():
    scenario = domain.new_scenario(" booking.saturday ", None, [ASK, {"role": "assistant",
                                                                      "judgePlan": {"type": "exact", "content": "Yes"}}])
    body = domain.provider_body(scenario)
    assert body["type"] == "chat.mockConversation" and body["name"] == "booking.saturday"
    assert body["description"] == "" and body["messages"] == scenario.messages
