"""The dashboard's tools: the agent page's forms made into the agent's `tools` (checked by the agents service, as
the API's are), what the page shows again after a refusal, and the call page's timeline with its tool calls."""
import pytest
from multidict import MultiDict

from core.errors import ServiceError
from core.messages import struct
from gateway.dashboard.agent_tools import view, with_builtins, with_custom, without_custom
from gateway.dashboard.calls_page import timeline
from services.agents.tools import check_tools
from switchboard.v1 import calls_pb2

LOOKUP = {"type": "custom", "name": "lookup", "description": "Find an order",
          "parameters": {"type": "object", "properties": {}}, "url": "https://tools.example.com/l", "timeout_ms": 5000}
SAVED = [{"type": "end_call"}, LOOKUP, {"type": "send_link", "links": [{"name": "menu", "url": "https://e.com/m"}]}]


def builtins_form(*on: str, links=(("menu", "https://e.com/m"), ("", "")), destinations=()) -> MultiDict:
    form = MultiDict([("tools_form", "builtins"), *(("tool", t) for t in on)])
    for name, url in links:
        form.extend([("link_name", name), ("link_url", url)])
    for row in [*destinations, ("", "", "warm", "")]:
        form.extend(zip(("destination_name", "destination_phone", "destination_mode", "destination_message"), row,
                        strict=True))
    return form


def test_an_unchanged_form_gives_the_saved_tools_in_their_order():
    assert with_builtins(SAVED, builtins_form("end_call", "send_link")) == SAVED


def test_built_ins_turned_on_and_off_keep_the_custom_tools_and_read_the_rows():
    form = builtins_form("send_link", "transfer_call", "send_sms", links=(("menu", "https://e.com/m"), ("", ""),
                                                                        (" hours ", "https://e.com/h")),
                         destinations=(("Front desk", "+14155550100", "blind", ""),
                                       ("Sales", "+14155550101", "warm", "A caller about pricing")))
    tools = with_builtins(SAVED, form)
    assert tools == [LOOKUP, {"type": "send_link", "links": [{"name": "menu", "url": "https://e.com/m"},
                                                              {"name": "hours", "url": "https://e.com/h"}]},
                     {"type": "send_sms"},
                     {"type": "transfer_call", "destinations": [
                         {"name": "Front desk", "phone_number": "+14155550100", "mode": "blind"},
                         {"name": "Sales", "phone_number": "+14155550101", "mode": "warm",
                          "message": "A caller about pricing"}]}]
    assert check_tools(tools, allow_loopback=False)[1:] == tools[1:]


def test_a_custom_tool_is_added_after_the_others_and_removed_by_name():
    form = MultiDict(custom_name="book", custom_description="Book it", custom_url="https://t.example.com/b",
                     custom_parameters='{"type": "object",\r\n "properties": {"day": {"type": "string"}}}',
                     custom_timeout_ms="8000")
    tools = with_custom(SAVED, form)
    assert tools[-1] == {"type": "custom", "name": "book", "description": "Book it", "url": "https://t.example.com/b",
                         "parameters": {"type": "object", "properties": {"day": {"type": "string"}}},
                         "timeout_ms": 8000}
    assert without_custom(tools, "lookup") == [SAVED[0], SAVED[2], tools[-1]]


def test_parameters_that_are_not_json_are_refused_with_where():
    with pytest.raises(ServiceError) as refused:
        with_custom(SAVED, MultiDict(custom_name="x", custom_parameters='{"type": "object",'))
    assert refused.value.code == "invalid_request" and "must be JSON" in refused.value.message
    assert "line 1" in refused.value.message


def test_the_page_shows_the_saved_tools_with_blank_rows_or_what_a_refused_form_had():
    shown = view(SAVED)
    assert [b["type"] for b in shown["builtins"] if b["on"]] == ["send_link", "end_call"]
    assert shown["links"] == [{"name": "menu", "url": "https://e.com/m"}, {"name": "", "url": ""},
                              {"name": "", "url": ""}]
    assert len(shown["destinations"]) == 2 and shown["destinations"][0]["mode"] == "warm"
    assert [c["name"] for c in shown["custom"]] == ["lookup"] and shown["custom"][0]["parameters"].startswith("{")
    assert shown["new_custom"]["custom_parameters"] == '{"type": "object", "properties": {}}'

    refused = view(SAVED, builtins_form("send_sms", links=(("menu", "http://e.com/m"),)))
    assert [b["type"] for b in refused["builtins"] if b["on"]] == ["send_sms"]
    assert refused["links"][0] == {"name": "menu", "url": "http://e.com/m"}
    typed = view(SAVED, MultiDict(tools_form="custom", custom_name="mine", custom_url="http://x.example.com",
                                  custom_parameters="{", custom_description="d", custom_timeout_ms=""))
    assert typed["new_custom"]["custom_url"] == "http://x.example.com"
    assert typed["new_custom"]["custom_parameters"] == "{"


def test_the_timeline_lists_the_tool_calls_in_time_among_the_calls_changes():
    call = calls_pb2.Call(direction="outbound", status="completed")
    for field, seconds in (("created_at", 100), ("started_at", 110), ("ended_at", 200), ("updated_at", 201)):
        getattr(call, field).FromSeconds(seconds)
    late = call.tool_calls.add(id="t2", name="end_call", arguments=struct({}), outcome="running")
    late.created_at.FromSeconds(190)
    early = call.tool_calls.add(id="t1", name="lookup", arguments=struct({"order": "A-17", "count": 2}), result="ok",
                                outcome="ok", duration_ms=42)
    early.created_at.FromSeconds(150)
    entries = timeline(call)
    assert [e.get("said") or e["tool"]["name"] for e in entries] == [
        "placed (queued)", "the conversation started", "lookup", "end_call", "the call ended",
        "completed (last change)"]
    assert entries[2]["tool"] == {"name": "lookup", "outcome": "ok", "duration_ms": 42, "result": "ok",
                                  "arguments": '{"count": 2, "order": "A-17"}'}
    assert entries[3]["tool"] == {"name": "end_call", "outcome": "running", "duration_ms": None, "result": None,
                                  "arguments": ""}
