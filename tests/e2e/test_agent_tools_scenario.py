"""The issue's scenario, as a new user would try it from the README: an agent with send_sms, book_appointment and
a custom tool answers an inbound call rung at the voice simulator, whose caller (the simulator's scripted lines)
asks for a text, a Saturday slot and their order. The caller's number gets the text (at the SMS simulator and in
the business's conversation), the booking exists with the caller's number and fires its webhook, the custom tool's
URL gets one signed POST, and the call's detail lists the three tool calls; another business's key sees none of
it. The same prompt in an eval run changes nothing (tests/e2e/test_eval_test_mode.py, whose rules this reuses).
An outbound call carries the agent's tools too: its caller's line makes the agent text them."""
from stripe import WebhookSignature

from core.signing import SIGNATURE_HEADER
from tests.calling import our_call, ring, settled
from tests.e2e.test_bookings import call, open_every_day
from tests.e2e.test_eval_test_mode import BOOKED, FOUND, TEXTED, rules, saturday_at_ten
from tests.receiver import Receiver
from tests.texting import number, opt_in, texts_to
from tests.waiting import wait_until

TEXT = "Your booking link: https://example.com/book"


async def test_a_caller_asking_for_a_text_and_a_saturday_slot_gets_both(api, stack, account, calling_agent, voice,
                                                                        other_key):
    key, agent = account["key"], calling_agent
    tool_url, hooks = await Receiver().start(), await Receiver().start()
    try:
        await open_every_day(api, account)
        await call(api, account, "POST", "/api/v1/webhooks", status=201,
                   json={"webhook_url": hooks.url, "events": ["booking.created"]})
        caller = number("0241")  # a number whose quiet hours are over now: the text may go
        starts_at = saturday_at_ten("America/Chicago")
        lookup = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
                  "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
                  "url": tool_url.url}  # loopback: the stack is local (`make run`)
        status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
            "id": agent["id"], "inbound_prompt": rules({"text": TEXT}, {"starts_at": starts_at, "name": "Ann Lee"}),
            "tools": [{"type": "send_sms"}, {"type": "book_appointment"}, lookup]})
        assert status == 200, patched

        at_provider = await ring(voice, agent["phone_number"], caller, says=[
            "Can you text me the booking link?", "And this saturday at 10 please, I'm Ann Lee.",
            "Where is my order A-17?"])
        ours = await our_call(api, key, agent["id"], at_provider["id"])
        ended = await settled(api, key, ours["id"])
        assert ended["status"] == "completed", ended

        # The call's record: three tool calls, each done.
        status, detail, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": ours["id"]})
        assert status == 200
        done = [(t["name"], t["outcome"]) for t in detail["tool_calls"]]
        assert done == [("send_sms", "ok"), ("book_appointment", "ok"), ("lookup_order", "ok")], detail["tool_calls"]
        status, transcripts, _ = await api.request("GET", "/api/v1/transcripts", key=key,
                                                   params={"agent_id": agent["id"]})
        [transcript] = [t["transcript"] for t in transcripts["transcripts"] if t["call_id"] == ours["id"]]
        assert all(f"Agent: {reply}" in transcript for reply in (TEXTED, BOOKED, FOUND)), transcript

        # The text: at the provider, and in the business's conversation with the caller.
        [texted] = await texts_to(stack, caller)
        assert texted["body"] == TEXT
        status, threads, _ = await api.request("GET", "/api/v1/sms/conversations", key=key)
        [thread] = [t for t in threads["conversations"] if t["contact_number"] == caller]
        status, messages, _ = await api.request("GET", "/api/v1/sms/messages", key=key,
                                                params={"conversation_id": thread["id"]})
        assert status == 200 and [m["body"] for m in messages["messages"]] == [TEXT], messages

        # The booking, with the caller's number and name, and its webhook.
        [booking] = (await call(api, account, "GET", "/api/v1/bookings"))["bookings"]
        assert (booking["starts_at"][:16], booking["phone_number"], booking["name"], booking["call_id"]) == (
            starts_at[:16], caller, "Ann Lee", ours["id"]), booking
        [created] = (await hooks.wait_for(1, "booking.created")).values()
        assert created["json"]["data"]["id"] == booking["id"]

        # The custom tool: one signed POST.
        [request] = tool_url.requests
        assert request["json"]["arguments"] == {"order": "A-17"} and request["json"]["call"]["id"] == ours["id"]
        assert WebhookSignature.verify_header(request["body"].decode(), request["headers"][SIGNATURE_HEADER],
                                              patched["tool_secret"], tolerance=300)

        # Another business's key sees none of it.
        for path, params in (("/api/v1/calls", {"id": ours["id"]}), ("/api/v1/bookings", {"id": booking["id"]})):
            status, _, _ = await api.request("GET", path, key=other_key, params=params)
            assert status == 404, path
        status, theirs, _ = await api.request("GET", "/api/v1/sms/conversations", key=other_key)
        assert status == 200 and caller not in [t["contact_number"] for t in theirs["conversations"]]
    finally:
        await tool_url.stop()
        await hooks.stop()


async def test_an_outbound_call_carries_the_agents_tools(api, stack, account, calling_agent, voice):
    """Vapi's model override replaces the assistant's whole model: the call's model must carry the tools. The callee
    opted in: a person we called asking for a text is no consent of theirs (only an inbound caller's asking is)."""
    key, agent, callee = account["key"], calling_agent, number("0242")
    await opt_in(api, key, callee)
    status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "outbound_prompt": rules({"text": TEXT}, {}), "tools": [{"type": "send_sms"}]})
    assert status == 200, patched
    await voice.request("POST", "/_simulator/playback", json={"caller": ["Please text me the link."]})
    status, placed, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": agent["id"], "to": callee, "compliance": "skip"})
    assert status == 201, placed
    await settled(api, key, placed["id"])
    status, detail, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": placed["id"]})
    assert [(t["name"], t["outcome"]) for t in detail["tool_calls"]] == [("send_sms", "ok")], detail
    [texted] = await wait_until(lambda: texts_to(stack, callee), f"the text to {callee}")
    assert texted["body"] == TEXT
