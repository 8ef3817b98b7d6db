"""An agent's tools (services/agents/tools.py): each refusal names its field, the stored form has the defaults,
the provider assistant gets them in Vapi's documented `model.tools` shape (providers/voice/vapi/assistants.py),
and the simulator accepts exactly that shape and refuses malformed ones (providers/voice/vapi/simulator)."""
import pytest

from contracts.agent_tools import provider_tools
from contracts.agents import AGENT_TOOLS, BUILTIN_PARAMETERS
from core import destinations
from core.errors import ServiceError
from providers.voice.port import AssistantSpec, EndCallTool, FunctionTool, TransferDestination, TransferTool
from providers.voice.vapi import assistants
from providers.voice.vapi.simulator import validation
from services.agents import domain
from services.agents.tools import check_tools

LOOKUP = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
          "parameters": {"type": "object", "properties": {"order": {"type": "string", "description": "Its number"}},
                         "required": ["order"]},
          "url": "https://tools.example.com/orders"}
SERVER = {"url": "https://switchboard.example.com/api/v1/providers/voice/messages", "credentialId": "cred-1"}


def refused(tools, allow_loopback: bool = False) -> str:
    with pytest.raises(ServiceError) as caught:
        check_tools(tools, allow_loopback)
    assert caught.value.code == "invalid_request"
    return caught.value.message


def test_the_stored_tools_have_their_defaults():
    tools = check_tools([{"type": "send_sms"}, {"type": "end_call"},
                         {"type": "send_link", "links": [{"name": "Menu", "url": "https://example.com/menu"}]},
                         {"type": "transfer_call", "destinations": [
                             {"name": "Sales", "phone_number": "+14155550123"},
                             {"name": "Owner", "phone_number": "+14155550124", "mode": "blind",
                              "message": "Putting you through to the owner."}]},
                         LOOKUP], False)
    assert tools[3]["destinations"] == [
        {"name": "Sales", "phone_number": "+14155550123", "mode": "warm"},
        {"name": "Owner", "phone_number": "+14155550124", "mode": "blind", "message": "Putting you through to the owner."}]
    assert tools[4] == {**LOOKUP, "timeout_ms": 5000}
    assert check_tools([{"type": "transfer_call"}], False) == [
        {"type": "transfer_call", "destinations": [], "mode": "warm"}]
    assert check_tools([{"type": "transfer_call", "mode": "blind"}], False)[0]["mode"] == "blind"
    assert check_tools([{**LOOKUP, "timeout_ms": 15000.0}], False)[0]["timeout_ms"] == 15000  # as a Struct carries it


@pytest.mark.parametrize(("tools", "message"), [
    ({"type": "send_sms"}, "tools must be an array"),
    ([{"type": "end_call"}] * 21, "at most 20 tools"),
    (["send_sms"], "tools[0] must be an object"),
    ([{"type": "send_sms"}, {"type": "fax"}], "tools[1].type must be one of send_sms"),
    ([{"type": "send_sms", "to": "+14155550123"}], "tools[0] (send_sms) does not take to"),
    ([{"type": "end_call"}, {"type": "end_call"}], "tools[1].type: end_call is already in tools"),
    ([{"type": "send_link"}], "tools[0].links must be an array of 1 to 20 objects"),
    ([{"type": "send_link", "links": []}], "tools[0].links must be an array of 1 to 20 objects"),
    ([{"type": "send_link", "links": [{"name": "Menu", "url": "https://a.example/m"}] * 21}], "1 to 20"),
    ([{"type": "send_link", "links": [{"name": "Menu", "url": "http://example.com/menu"}]}],
     "tools[0].links[0].url must be an https URL"),
    ([{"type": "send_link", "links": [{"name": "Menu", "url": "https://a.example/1"},
                                      {"name": "Menu", "url": "https://a.example/2"}]}],
     "tools[0].links[1].name: another one is named Menu"),
    ([{"type": "send_link", "links": [{"name": "x" * 81, "url": "https://a.example/1"}]}],
     "tools[0].links[0].name must be at most 80 characters"),
    ([{"type": "send_link", "links": [{"name": "Menu"}]}], "tools[0].links[0].url is required"),
    ([{"type": "transfer_call", "destinations": [{"name": "Sales", "phone_number": "+1415555"}]}],
     "tools[0].destinations[0].phone_number must be a valid phone number in E.164"),
    ([{"type": "transfer_call", "destinations": [{"name": "Sales", "phone_number": "+14155550123",
                                                  "mode": "cold"}]}],
     "tools[0].destinations[0].mode must be one of warm, blind"),
    ([{"type": "transfer_call", "mode": "cold"}], "tools[0].mode must be one of warm, blind"),
    ([{"type": "transfer_call", "mode": "blind", "destinations": [{"name": "Sales", "phone_number": "+14155550123"}]}],
     "tools[0].mode is the mode of a transfer to the business's phone_forward_to"),
    ([{"type": "transfer_call", "destinations": [{"name": "Sales", "phone_number": "+14155550123",
                                                  "message": "x" * 501}]}],
     "tools[0].destinations[0].message must be at most 500 characters"),
    ([{"type": "transfer_call", "destinations": [{"name": f"D{i}", "phone_number": "+14155550123"}
                                                 for i in range(11)]}], "tools[0].destinations must be an array of 1 to 10"),
    ([{k: v for k, v in LOOKUP.items() if k != "url"}], "tools[0].url is required for a custom tool"),
    ([{**LOOKUP, "name": "look up"}], "tools[0].name must be 1 to 64 letters"),
    ([{**LOOKUP, "name": "x" * 65}], "tools[0].name must be 1 to 64 letters"),
    ([{**LOOKUP, "name": "send_sms"}], "tools[0].name must not be the name of a built-in tool"),
    ([LOOKUP, {**LOOKUP}], "tools[1].name: another custom tool is named lookup_order"),
    ([{**LOOKUP, "description": " "}], "tools[0].description must be a non-empty string"),
    ([{**LOOKUP, "description": "x" * 1001}], "tools[0].description must be at most 1000 characters"),
    ([{**LOOKUP, "timeout_ms": 499}], "tools[0].timeout_ms must be an integer from 500 to 15000"),
    ([{**LOOKUP, "timeout_ms": 15001}], "tools[0].timeout_ms must be an integer from 500 to 15000"),
    ([{**LOOKUP, "parameters": {"type": "string"}}], "tools[0].parameters must be a JSON Schema of an object"),
    ([{**LOOKUP, "parameters": {"type": "object", "properties": {"n": {"type": "strin"}}}}],
     "tools[0].parameters.properties.n.type is not a valid JSON Schema"),
    ([{**LOOKUP, "parameters": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}}],
     "tools[0].parameters.properties.n uses minimum"),
    ([{**LOOKUP, "parameters": {"type": "object"}}], "tools[0].parameters takes type, properties"),
    ([{**LOOKUP, "parameters": {"type": "object", "properties": {
        f"p{i}": {"type": "string", "description": "x" * 100} for i in range(80)}}}],
     "tools[0].parameters must be at most 8192 bytes"),
    ([{**LOOKUP, "url": "http://tools.example.com/orders"}], "tools[0].url must be an https URL"),
    ([{**LOOKUP, "url": "https://93.184.216.34/orders"}], "tools[0].url must name a host, not an IP address"),
    ([{**LOOKUP, "url": "https://10.0.0.7/orders"}], "tools[0].url must name a host, not an IP address"),
    ([{**LOOKUP, "url": "https://127.0.0.1:8080/orders"}], "tools[0].url must name a host, not an IP address"),
    ([{**LOOKUP, "url": "https://user:pw@tools.example.com/x"}], "tools[0].url must be an https URL with a host and no"),
])
def test_each_bad_tool_is_refused_naming_its_field(tools, message):
    assert message in refused(tools)


def test_loopback_urls_are_for_the_local_stack():
    for url in ("http://127.0.0.1:8080/orders", "https://127.0.0.1/orders", "http://localhost/orders"):
        assert check_tools([{**LOOKUP, "url": url}], True)[0]["url"] == url
        assert "tools[0].url" in refused([{**LOOKUP, "url": url}])
    # https://localhost names a host: where it resolves is checked next (test_where_a_host_resolves...)
    assert check_tools([{**LOOKUP, "url": "https://localhost/orders"}], False)
    assert "tools[0].url must name a host" in refused([{**LOOKUP, "url": "https://10.0.0.7/x"}], True)


@pytest.mark.parametrize(("url", "why"), [
    ("https://localhost/orders", "a loopback address"),
    ("https://10.1.2.3/orders", "a private or reserved address"),
    ("https://169.254.169.254/latest", "a cloud metadata address"),
    ("https://[fe80::1]/x", "a link-local address"),
])
async def test_where_a_host_resolves_is_checked_as_for_webhooks(url, why):
    with pytest.raises(ServiceError) as caught:
        await destinations.check_destination(url, False, "tools[0].url", "tool requests")
    assert caught.value.message.startswith("tools[0].url host ") and why in caught.value.message
    assert "tool requests go to public addresses only" in caught.value.message


def test_the_catalogue_and_a_change_of_tools():
    assert set(AGENT_TOOLS) == {"send_sms", "send_link", "check_availability", "book_appointment", "update_lead",
                                "transfer_call", "end_call", "custom"}
    config = domain.new_config("Desk", "Answer.", None, {}, {}, tools=[{"type": "end_call"}])
    assert domain.initial_change(config).changed[-1] == "tools"
    assert "tools" not in domain.initial_change(domain.new_config("Desk", "Answer.", None, {}, {})).changed
    change = domain.apply_update(config, texts={}, tools=[LOOKUP])
    assert change.changed == ["tools"] and change.provider_changed == ["tools"]
    assert domain.apply_update(change.config, texts={}, tools=[LOOKUP]).changed == []
    assert domain.apply_update(change.config, texts={}, tools=[]).config.tools == []
    snapshot = domain.snapshot(change.config)
    assert snapshot["tools"] == [{**LOOKUP, "timeout_ms": 5000}]  # a version holds the tools, never a secret


def test_the_provider_gets_our_tools_as_vapis_documented_shapes():
    tools = check_tools([{"type": "send_link", "links": [{"name": "Menu", "url": "https://example.com/menu"}]},
                         {"type": "transfer_call", "destinations": [
                             {"name": "Sales", "phone_number": "+14155550123", "message": "One moment."},
                             {"name": "Owner", "phone_number": "+14155550124", "mode": "blind"}]},
                         {"type": "end_call"}, {"type": "update_lead"},
                         LOOKUP], False)
    ours = provider_tools(tools)
    assert ours[1] == TransferTool((TransferDestination("Sales", "+14155550123", True, "One moment."),
                                    TransferDestination("Owner", "+14155550124", False)))
    assert ours[2] == EndCallTool()
    assert isinstance(ours[4], FunctionTool) and ours[4].name == "lookup_order"
    spec = AssistantSpec(name="Desk", prompt="Answer.", first_message="Hi", model={"provider": "openai",
                         "model": "gpt-4.1"}, voice=None, settings={}, collect=domain.COLLECTED, agent_id="a",
                         business_id="b", tools=ours)
    assert assistants.needs_server(spec)
    body = assistants.create_body(spec, SERVER)
    send_link, transfer, end, update_lead, custom = body["model"]["tools"]
    assert send_link == {"type": "function", "server": SERVER, "function": {
        "name": "send_link", "description": AGENT_TOOLS["send_link"],
        "parameters": {"type": "object", "properties": {"name": {"type": "string", "enum": ["Menu"],
                                                                 "description": "The name of the link to send"},
                                                        "to": BUILTIN_PARAMETERS["send_link"]["properties"]["to"]},
                       "required": ["name"]}}}
    # A failed transfer comes back to the assistant with a sentence said (the plan's fallback), and a transfer tool
    # call that fails has the model answer from the failure with a hint (request-failed, role system).
    fallback = {"message": assistants.TRANSFER_FAILED, "endCallEnabled": False}
    assert transfer == {"type": "transferCall", "destinations": [
        {"type": "number", "number": "+14155550123", "description": "Sales",
         "transferPlan": {"mode": "warm-transfer-experimental", "fallbackPlan": fallback}, "message": "One moment."},
        {"type": "number", "number": "+14155550124", "description": "Owner",
         "transferPlan": {"mode": "blind-transfer", "fallbackPlan": fallback}}],
        "messages": [{"type": "request-failed", "role": "system", "content": assistants.FAILED_TRANSFER_HINT}]}
    assert end == {"type": "endCall"}
    assert update_lead["function"]["parameters"] == BUILTIN_PARAMETERS["update_lead"]
    assert custom == {"type": "function", "server": SERVER, "function": {
        "name": "lookup_order", "description": "Find an order by its number", "parameters": LOOKUP["parameters"]}}
    assert validation.assistant(body) == []
    # A change of tools sends the whole model (the provider replaces it whole); removing them sends none.
    without = AssistantSpec(**{**spec.__dict__, "tools": ()})
    assert "tools" not in assistants.update_body(without, spec)["model"]
    assert assistants.update_body(spec, without, SERVER)["model"]["tools"] == body["model"]["tools"]
    assert assistants.update_body(spec, spec, SERVER) == {}
    with pytest.raises(RuntimeError):
        assistants.create_body(spec)  # a function tool needs our server


def test_every_built_in_tool_is_accepted_by_the_provider():
    tools = check_tools([{"type": t} for t in ("send_sms", "check_availability", "book_appointment", "update_lead",
                                               "end_call", "transfer_call")], False)
    spec = domain.assistant_spec(domain.new_config("Desk", "Answer.", None, {}, {}), "a", "b")
    body = assistants.create_body(AssistantSpec(**{**spec.__dict__, "tools": provider_tools(tools)}), SERVER)
    assert validation.assistant(body) == []
    transfer = body["model"]["tools"][-1]
    assert (transfer["type"], transfer["destinations"]) == ("transferCall", [])  # asks our server


@pytest.mark.parametrize(("tool", "message"), [
    ({"type": "fax"}, "model.tools.0.type must be one of the following values: apiRequest, bash"),
    ({"type": "endCall", "server": SERVER}, "property model.tools.0.server should not exist"),
    ({"type": "function", "function": {"name": "look up"}}, "model.tools.0.function.name must match"),
    ({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
     "model.tools.0.function.parameters.properties must be an object"),
    ({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1}}}}},
     "model.tools.0.function.parameters.properties.n.property minimum should not exist"),
    ({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "n": {"type": "string", "format": "phone"}}}}}, "properties.n.format must be one of the following values"),
    ({"type": "function", "function": {"name": "f"}, "server": {"uri": "https://x"}},
     "property model.tools.0.server.uri should not exist"),
    ({"type": "transferCall", "destinations": [{"type": "number", "number": "+1415"}]},
     "model.tools.0.destinations.0.number must be a valid phone number in the E.164 format"),
    ({"type": "transferCall", "destinations": [{"type": "number", "number": "+14155550123",
                                                "transferPlan": {"mode": "warm"}}]},
     "model.tools.0.destinations.0.transferPlan.mode must be one of the following values"),
    ({"type": "transferCall", "destinations": [{"type": "number", "number": "+14155550123", "name": "Sales"}]},
     "property model.tools.0.destinations.0.name should not exist"),
    ({"type": "transferCall", "destinations": [{"type": "number", "number": "+14155550123", "transferPlan": {
        "mode": "blind-transfer", "fallbackPlan": {"endCallEnabled": False}}}]},
     "model.tools.0.destinations.0.transferPlan.fallbackPlan.message must be a string"),
    ({"type": "transferCall", "messages": [{"type": "request-failed", "role": "caller", "content": "No."}]},
     "model.tools.0.messages.0.role must be one of the following values: assistant, system"),
    ({"type": "transferCall", "messages": [{"type": "request-failed", "content": "x" * 1001}]},
     "model.tools.0.messages.0.content must be shorter than or equal to 1000 characters"),
    ({"type": "transferCall", "messages": [{"type": "request-end"}]},
     "model.tools.0.messages.0.type must be one of the following values: request-start"),
    ({"type": "transferCall", "messages": [{"type": "request-failed", "blocking": True}]},
     "property model.tools.0.messages.0.blocking should not exist"),
])
def test_the_simulator_refuses_malformed_tools(tool, message):
    assert validation.assistant({"model": {"provider": "openai", "model": "gpt-4.1", "tools": [{"type": "sms"}]}}) == []
    errors = validation.assistant({"model": {"provider": "openai", "model": "gpt-4.1", "tools": [tool]}})
    assert any(message in e for e in errors), errors
