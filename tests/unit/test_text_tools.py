"""send_sms and send_link during a call (services/calls/text_tools.py) in the fast tier: the calls service's tool
calls on the in-memory database, texting through messaging's own send use case in this process (the one
compliance decision, the consent history, the idempotency keys) and the messaging simulator served here. Who is
texted, the caller's asking recorded as their consent (an opt-out still wins), each refusal as a sentence the model
can say, and one text however often a tool call is delivered."""
from datetime import UTC, datetime

import pytest

from core.compliance import decision as compliance
from core.errors import ServiceError
from core.ids import new_id
from core.tenant import Tenant, acting_as
from services.calls import text_tools
from services.calls.ports import AgentTool
from services.calls.repository import calls_units
from services.calls.tools_service import ToolCalls
from services.messaging.compliance_service import Compliance
from services.messaging.consent_service import Consents
from services.messaging.ports import Sender
from services.messaging.repositories.unit import messaging_uow
from services.messaging.schema import compliance_decisions
from services.messaging.service import NewText, Texts
from tests.memory.calls import MemoryCalls
from tests.memory.messaging import MEMORY
from tests.service.fakes import MessagingNeighbours, MessagingTexts, accounts_saying, idle_builtins
from tests.storage_contracts import call_values
from tests.unit.conftest import MIDDAY
from tests.unit.test_tool_calls import ToolAgents, tool_calls

SENDER, CALLER, FRIEND = "+14155550100", "+14155550123", "+14155550177"
NIGHT = datetime(2026, 11, 18, 7, 0, tzinfo=UTC)  # 23:00 in California
MENU = "https://example.com/menu"
TOOLS = (AgentTool("send_sms", "send_sms"),
         AgentTool("send_link", "send_link", {"type": "send_link", "links": [
             {"name": "Menu", "url": MENU}, {"name": "Directions", "url": "https://example.com/map"}]}))


@pytest.fixture
def agent_id() -> str:
    return new_id()


@pytest.fixture
def owner(business_id):
    """The business's owner, through the API (recording consent)."""
    return Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "active"),),
                  api_key_id="fast")


@pytest.fixture
def consents(database, clock) -> Consents:
    return Consents(messaging_uow(database, MEMORY), frozenset())


@pytest.fixture
def texts(database, sms, business_id, agent_id, clock) -> MessagingTexts:
    uow = messaging_uow(database, MEMORY)
    others = MessagingNeighbours(senders={agent_id: Sender(business_id, SENDER)})
    return MessagingTexts(Texts(uow, sms.client, Compliance(uow, frozenset(), compliance.Policy()), others.ports,
                                "http://127.0.0.1:9", standings=accounts_saying({business_id: "active"})))


async def a_call(database, business_id, agent_id, **values):
    async with calls_units(database, MemoryCalls).transaction() as work:
        return await work.calls.add(**call_values(business_id, agent_id=agent_id, provider_call_id=f"pc-{new_id()}",
                                                  **values))


@pytest.fixture
async def inbound(database, business_id, agent_id):
    return await a_call(database, business_id, agent_id, direction="inbound", from_number=CALLER, to_number=SENDER)


@pytest.fixture
def tools(database, business_id, agent_id, texts) -> ToolCalls:
    return ToolCalls(calls_units(database, MemoryCalls), ToolAgents(business_id, agent_id, TOOLS), texts=texts,
                     **idle_builtins(),
                     wait_seconds=2, poll_seconds=0.01)


async def outcomes(database, call) -> dict:
    async with calls_units(database, MemoryCalls).read() as work:
        return {r.tool_call_id: (r.outcome, r.result) for r in (await work.calls.with_tool_calls(
            [call.business_id], call.id))[1]}


async def history(consents, owner, phone) -> list[tuple]:
    with acting_as(owner):
        _, _, events = await consents.get(phone, None)
    return [(e.kind, e.source, e.reference) for e in events]


async def decisions(database) -> list[dict]:
    async with database.read() as conn:
        return sorted(conn.rows(compliance_decisions).values(), key=lambda row: row["decided_at"])


async def test_an_inbound_caller_who_asks_is_texted_once_from_the_agent_with_their_asking_as_consent(
        tools, texts, sms, database, consents, owner, inbound):
    message = tool_calls(inbound.provider_call_id, inbound.id, ("tc-1", "send_sms", {"text": "Our hours: 9-5."}))
    [first] = await tools.answer(message)
    assert first.result == "Text sent to +14155550123."
    assert await tools.answer(message) == [first]  # the provider's retry: answered from the record
    [taken] = sms.texts
    assert (taken["to"], taken["from"], taken["body"]) == (CALLER, SENDER, "Our hours: 9-5.")
    [asked] = texts.asked
    assert (asked.agent_id, asked.reference, asked.requested_on_call) == (inbound.agent_id, "tc-1", inbound.id)
    assert asked.idempotency_key == text_tools.idempotency_key(inbound, message.calls[0])
    assert await history(consents, owner, CALLER) == [("conversational", "call_request", inbound.id)]
    [decision] = await decisions(database)
    assert (decision["outcome"], decision["actor"], decision["reference"]) == ("allow", "agent_tool", "tc-1")
    assert decision["inputs"]["consent_basis"] == "inbound_contact"  # the caller's asking
    assert await outcomes(database, inbound) == {"tc-1": ("ok", first.result)}


async def test_a_tool_call_run_again_after_a_lost_answer_texts_once(tools, texts, sms, inbound):
    """The messaging send's key is the tool call's: a second send of it (the record lost) answers the first text."""
    message = tool_calls(inbound.provider_call_id, inbound.id, ("tc-1", "send_sms", {"text": "Hi"}))
    [tool_call] = message.calls
    with acting_as(Tenant(account_id="service:calls-tools", business_ids=(inbound.business_id,))):
        twice = [await text_tools.run(texts, inbound, TOOLS[0], tool_call) for _ in range(2)]
    assert twice == [("ok", "Text sent to +14155550123.")] * 2 and len(sms.texts) == 1


async def test_a_caller_who_opted_out_is_refused_with_a_sentence_and_not_texted(tools, sms, consents, owner,
                                                                                inbound):
    with acting_as(owner):
        await consents.record(CALLER, None, "opted_out", "replied STOP")
    [answer] = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-1", "send_sms", {"text": "Hi"})))
    assert answer.result == text_tools.UNTEXTABLE.format(to=CALLER)
    assert sms.texts == []
    assert [kind for kind, _, _ in await history(consents, owner, CALLER)] == ["opt_out", "conversational"]


async def test_send_link_texts_a_saved_link_by_its_name_in_any_case_and_lists_the_names_for_another(
        tools, texts, sms, database, consents, owner, inbound):
    answered = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-1", "send_link", {"name": "menu"}),
                                             ("tc-2", "send_link", {"name": "Prices"})))
    assert answered[0].result == "Text sent to +14155550123."
    [taken] = sms.texts
    assert taken["body"] == text_tools.link_text("Menu", MENU) and MENU in taken["body"]
    assert answered[1].result == text_tools.unknown_link("Prices", {"Menu": MENU, "Directions": ""})
    assert "The saved links are: Menu, Directions." in answered[1].result
    assert await outcomes(database, inbound) == {"tc-1": ("ok", answered[0].result),
                                                 "tc-2": ("refused", answered[1].result)}


async def test_a_number_the_caller_says_is_decided_on_its_own_consent(tools, texts, sms, consents, owner, inbound):
    """Another number than the caller's gets no consent from the caller's asking: it is texted once it opted in."""
    said = ("send_sms", {"text": "Hi", "to": FRIEND})
    [refused] = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-1", *said)))
    assert refused.result == text_tools.UNTEXTABLE.format(to=FRIEND) and sms.texts == []
    with acting_as(owner):
        await consents.record(FRIEND, None, "opted_in", "web form")
    answer, unreadable = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-2", *said),
                                                       ("tc-3", "send_sms", {"text": "Hi", "to": "415 555 0177"})))
    assert answer.result == "Text sent to +14155550177."
    assert "415 555 0177 is not a phone number I can text" in unreadable.result
    assert [t["to"] for t in sms.texts] == [FRIEND]
    assert [a.requested_on_call for a in texts.asked] == [None, None]  # the bad number never reached messaging
    assert await history(consents, owner, FRIEND) == [("opt_in", "api", None)]


async def test_a_bad_number_no_text_quiet_hours_and_messaging_down_are_sentences(tools, texts, sms, clock, inbound,
                                                                                 database):
    answered = await tools.answer(tool_calls(
        inbound.provider_call_id, None, ("tc-1", "send_sms", {"text": "Hi", "to": "555 0177"}),
        ("tc-2", "send_sms", {"text": "  "})))
    assert "555 0177 is not a phone number I can text" in answered[0].result
    assert answered[1].result == text_tools.NO_TEXT and texts.asked == []
    clock.now = NIGHT
    [night] = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-3", "send_sms", {"text": "Hi"})))
    assert night.result == text_tools.REFUSALS["tcpa_violation"].format(to=CALLER)
    clock.now, texts.down = MIDDAY, True
    [down] = await tools.answer(tool_calls(inbound.provider_call_id, None, ("tc-4", "send_sms", {"text": "Hi"})))
    assert down.result == text_tools.FAILED and sms.texts == []
    assert {i: o for i, (o, _) in (await outcomes(database, inbound)).items()} == {
        "tc-1": "refused", "tc-2": "refused", "tc-3": "refused", "tc-4": "failed"}


async def test_an_outbound_call_texts_its_callee_and_a_withheld_caller_is_asked_for_a_number(
        tools, texts, consents, owner, database, business_id, agent_id):
    outbound = await a_call(database, business_id, agent_id, direction="outbound", to_number=CALLER,
                            from_number=SENDER)
    with acting_as(owner):
        await consents.record(CALLER, None, "opted_in", None)
    [answer] = await tools.answer(tool_calls(outbound.provider_call_id, None, ("tc-1", "send_sms", {"text": "Hi"})))
    assert answer.result == "Text sent to +14155550123."
    assert texts.asked[0].requested_on_call is None  # the callee of our call gave no consent by asking
    withheld = await a_call(database, business_id, agent_id, direction="inbound", from_number=None,
                            to_number=SENDER)
    [answer] = await tools.answer(tool_calls(withheld.provider_call_id, None, ("tc-1", "send_sms", {"text": "Hi"})))
    assert "withheld" in answer.result and len(texts.asked) == 1


async def test_only_an_agents_tool_may_name_the_call_a_text_was_asked_on(texts, business_id, agent_id, owner):
    with acting_as(owner), pytest.raises(ServiceError) as refused:
        await texts.texts.place(NewText(to=CALLER, agent_id=agent_id, body="Hi", requested_on_call=new_id()))
    assert refused.value.code == "invalid_request" and "agent_tool" in refused.value.message
