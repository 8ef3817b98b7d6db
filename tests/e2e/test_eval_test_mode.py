"""Test mode, proven end to end: an agent with send_sms, book_appointment and a custom tool, whose prompt calls
them, passes an eval scenario where the caller asks for a text and a Saturday booking, its judges asserting each
tool call and its arguments; the run lists the calls with the stubs the assistant got, and nothing happened: no
text reached the messaging provider, no booking is stored, the custom tool's URL got no request, and the calls
service has no call and no tool call of the agent; were the provider to post such tool calls to our server, they
would be refused and run nothing. Dates come from the business's today."""
import json
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import aiohttp

from tests.agents import create_agent, create_eval
from tests.e2e.test_bookings import call, open_every_day
from tests.e2e.test_call_lifecycle import MESSAGES, signed
from tests.receiver import Receiver
from tests.texting import texts_to

TO = "+14155550193"
TEXT = "Your booking link: https://example.com/book"
TEXTED, BOOKED, FOUND = "I have texted you the link.", "You are booked for Saturday at 10.", "Order A-17 is on its way."


def saturday_at_ten(zone: str) -> str:
    """10:00 on the next Saturday at least two days ahead, in the business's zone."""
    day = datetime.now(ZoneInfo(zone)).date() + timedelta(days=2)
    day += timedelta(days=(5 - day.weekday()) % 7)
    return datetime(day.year, day.month, day.day, 10, tzinfo=ZoneInfo(zone)).isoformat()


def rules(sms: dict, booking: dict) -> str:
    """The stand-in assistant's prompt: a rule per tool (providers/voice/vapi/simulator/standin.py)."""
    return "\n".join([
        "You answer for Bright Dental.",
        f'When the caller says "text me", call send_sms with {json.dumps(sms)} and answer "{TEXTED}"',
        f'When the caller says "saturday", call book_appointment with {json.dumps(booking)} and answer "{BOOKED}"',
        f'When the caller says "order", call lookup_order with {{"order": "A-17"}} and answer "{FOUND}"'])


async def posted(stack, call_ref: dict | None) -> tuple[int, dict]:
    """A signed tool-calls server message for the three tools, about `call_ref` (None: no call), posted as the voice
    provider posts one."""
    calls = [{"id": f"tc-{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
             for name, arguments in (("send_sms", {"to": TO, "text": TEXT}), ("book_appointment", {"name": "Ann"}),
                                     ("lookup_order", {"order": "A-17"}))]
    message = {"type": "tool-calls", "timestamp": int(time.time() * 1000), "toolCallList": calls}
    body = json.dumps({"message": {**message, **({"call": call_ref} if call_ref else {})}}).encode()
    async with aiohttp.ClientSession() as session, session.post(
            stack.base_url + MESSAGES, data=body,
            headers=signed(body, stack.env()["VOICE_WEBHOOK_SECRET"], time.time())) as r:
        return r.status, await r.json()


async def test_an_eval_run_stubs_every_tool_call_and_changes_nothing(api, account, stack, db, other_key):
    key, receiver = account["key"], await Receiver().start()
    try:
        await open_every_day(api, account)  # a live booking of the slot would succeed
        sms = {"to": TO, "text": TEXT}
        booking = {"starts_at": saturday_at_ten("America/Chicago"), "name": "Ann Lee"}
        lookup = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
                  "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
                  "url": receiver.url}  # loopback: the stack is local (`make run`)
        agent = await create_agent(api, account, system_prompt=rules(sms, booking),
                                   tools=[{"type": "send_sms"}, {"type": "book_appointment"}, lookup])
        status, scenario = await create_eval(api, account, agent["id"], name="booking.texts_and_books", messages=[
            {"role": "user", "content": "Can you text me the booking link?"},
            {"role": "assistant", "judgePlan": {"type": "exact", "content": TEXTED,
                                                "toolCalls": [{"name": "send_sms", "arguments": sms}]}},
            {"role": "user", "content": "And book me this Saturday at 10, I'm Ann Lee."},
            {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?i)booked", "toolCalls": [
                {"name": "book_appointment", "arguments": {"name": "^Ann Lee$", "starts_at": "T10:00"}}]}},
            {"role": "user", "content": "Where is my order A-17?"},
            {"role": "assistant", "judgePlan": {"type": "exact", "content": FOUND,
                                                "toolCalls": [{"name": "lookup_order"}]}}])
        assert status == 201, scenario

        status, ran, _ = await api.request("POST", "/api/v1/evals/run", key=key, json={"eval_id": scenario["id"]})
        assert status == 200 and ran["status"] == "ended" and ran["passed"] is True, ran
        status, run, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"run_id": ran["run_id"]})
        assert status == 200, run
        # Each call with the stub it got, which the provider played as the scenario's mock tool response.
        assert run["stubbed_tool_calls"] == [
            {"turn": 1, "name": "send_sms", "arguments": sms,
             "result": f'(test mode) A text would be sent to {TO}: "{TEXT}". Nothing was sent.'},
            {"turn": 4, "name": "book_appointment", "arguments": booking,
             "result": "(test mode) An appointment would be booked. Nothing was booked."},  # a regex plan's patterns
            {"turn": 7, "name": "lookup_order", "arguments": {"order": "A-17"},
             "result": "(test mode) The tool lookup_order would be called. Nothing was sent to it."}]
        played = run["results"][0]["messages"]
        assert [m["role"] for m in played] == ["user", "assistant", "tool"] * 3
        assert all(m["judge"]["status"] == "pass" for m in played if m["role"] == "assistant")

        # Were the provider to post the run's tool calls to our server (it documents no such thing; the simulator
        # never does), they would run nothing: a message naming no call is refused, one naming no call of ours is
        # answered with a refusal and recorded nowhere.
        for call_ref in (None, {"id": run["provider_run_id"]}):
            status, answer = await posted(stack, call_ref)
            assert status == (400 if call_ref is None else 200), answer
            if call_ref:
                assert ["can't use tools on this call" in r["result"] for r in answer["results"]] == [True] * 3

        # Nothing happened anywhere.
        assert await texts_to(stack, TO) == []
        assert (await call(api, account, "GET", "/api/v1/bookings"))["bookings"] == []
        assert receiver.requests == []
        status, calls, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
        assert status == 200 and calls["calls"] == [], calls
        assert await db.fetchval("SELECT count(*) FROM calls.tool_calls t JOIN calls.calls c ON c.id = t.call_id "
                                 "WHERE c.agent_id = $1", agent["id"]) == 0

        # Another business's key does not see the run.
        status, _, _ = await api.request("GET", "/api/v1/evals/run", key=other_key, params={"run_id": ran["run_id"]})
        assert status == 404
    finally:
        await receiver.stop()


async def test_a_judge_of_tool_calls_fails_a_run_whose_arguments_differ(api, account):
    """The same judge fails the assistant that texts other words, and says why."""
    sms = {"to": TO, "text": TEXT}
    agent = await create_agent(api, account, system_prompt=rules({**sms, "text": "Hello"}, {}),
                               tools=[{"type": "send_sms"}])
    status, scenario = await create_eval(api, account, agent["id"], name="texts.link", messages=[
        {"role": "user", "content": "Text me the link"},
        {"role": "assistant", "judgePlan": {"type": "exact", "content": TEXTED,
                                            "toolCalls": [{"name": "send_sms", "arguments": sms}]}}])
    assert status == 201, scenario
    status, ran, _ = await api.request("POST", "/api/v1/evals/run", key=account["key"],
                                       json={"eval_id": scenario["id"]})
    assert status == 200 and ran["passed"] is False, ran
    judge = ran["results"][0]["messages"][1]["judge"]
    assert judge["status"] == "fail" and "expected send_sms arguments" in judge["failureReason"], judge

    # A judge the API cannot apply is refused with the turn and the field.
    status, refused = await create_eval(api, account, agent["id"], name="texts.bad", messages=[
        {"role": "user", "content": "Text me the link"},
        {"role": "assistant", "judgePlan": {"type": "regex", "content": ".*",
                                            "toolCalls": [{"name": "send_sms", "arguments": {"to": "(+1"}}]}}])
    assert status == 400 and refused["error"]["code"] == "invalid_request", refused
    assert "messages[1].judgePlan.toolCalls[0].arguments.to is not a valid regular expression" in \
        refused["error"]["message"]
