"""SMS end to end: every refusal of a send, consent by API, keyword and conversation (the keywords answered by the
provider, as by default, or by us), a STOP the provider holds, the provider's callbacks (late, reordered, forged),
inbound texts threading and becoming leads, and the do-not-call list."""
import asyncio
import uuid

import aiohttp
import asyncpg
import pytest

from deploy.local.servers import free_port, wait_for_port
from deploy.local.stack import Process
from providers.messaging.webhooks import INBOUND_PATH
from tests.calling import our_call, ring
from tests.leads import leads_with
from tests.texting import events_of, number, opt_in, send, settled_message
from tests.waiting import wait_until


async def test_a_cold_number_is_refused_until_it_opts_in_then_the_text_is_delivered(
        api, account, calling_agent):
    key, agent, to = account["key"], calling_agent, number("0150")
    status, body, _ = await send(api, key, agent, to)
    assert status == 400 and body["error"]["code"] == "number_opted_out"
    assert "POST /api/v1/sms/consent" in body["error"]["message"]
    consent = await opt_in(api, key, to)
    assert (consent["state"], consent["can_text"], consent["history"][0]["source"]) == ("opted_in", True, "api")

    status, sent, _ = await send(api, key, agent, to)
    assert status == 200, sent
    assert sent["success"] is True and sent["to"] == to and sent["from"] == agent["phone_number"]
    assert sent["message_sid"].startswith("SM")
    delivered = await settled_message(api, key, sent["message_sid"])
    assert delivered["status"] == "delivered" and delivered["direction"] == "outbound"
    assert [e["type"] for e in await events_of(api, key, "sms.sent", sent["message_id"])] == ["sms.sent"]
    assert await events_of(api, key, "sms.delivered", sent["message_id"])
    status, threads, _ = await api.request("GET", "/api/v1/sms/conversations", key=key)
    [thread] = [t for t in threads["conversations"] if t["id"] == sent["conversation_id"]]
    assert (thread["business_number"], thread["contact_number"], thread["outbound_count"]) == (
        agent["phone_number"], to, 1)
    status, one, _ = await api.request("GET", "/api/v1/sms/conversations", key=key,
                                       params={"id": sent["conversation_id"]})
    assert status == 200 and one["id"] == sent["conversation_id"] and one["last_message_status"] == "delivered"


async def test_stop_refuses_then_start_allows_and_help_is_answered_by_the_provider(api, account, calling_agent, sms):
    """Twilio's default opt-out handling (SMS_PROVIDER_OPT_OUT=twilio, the default): the provider answers STOP, START
    and HELP itself, so our TwiML answers them with nothing (a reply of ours to STOP would be refused, to START or
    HELP a second answer), and each keyword is recorded as consent evidence."""
    key, agent, contact = account["key"], calling_agent, number("0151")
    await opt_in(api, key, contact)
    stop = await sms.answered(contact, agent["phone_number"], "  Stop ")
    assert stop["auto_reply"].startswith("You have successfully been unsubscribed"), stop
    assert stop["replies"] == stop["refused"] == []  # nothing of ours: the texter is answered once
    status, body, _ = await send(api, key, agent, contact)
    assert status == 400 and body["error"]["code"] == "number_opted_out" and "STOP" in body["error"]["message"]
    help_ = await sms.answered(contact, agent["phone_number"], "help")
    assert help_["auto_reply"] is None and help_["replies"] == []  # Twilio says nothing while they are blocked
    start = await sms.answered(contact, agent["phone_number"], "START")
    assert start["auto_reply"].startswith("You have successfully been re-subscribed") and start["replies"] == []
    status, sent, _ = await send(api, key, agent, contact)
    assert status == 200, sent
    status, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": contact})
    assert [(c["kind"], c["source"]) for c in consent["history"]] == [
        ("opt_in", "api"), ("opt_out", "keyword"), ("conversational", "inbound_text"), ("opt_in", "keyword")]
    assert consent["state"] == "opted_in"


@pytest.fixture
async def answered_by_us(stack):
    """The inbound URL of a gateway replica whose texts go to a messaging replica with SMS_PROVIDER_OPT_OUT=ours (its
    public URL is its own address, which the provider signs its requests over)."""
    messaging = stack.add_replica("messaging", f"messaging-ours-{uuid.uuid4().hex[:6]}", {"SMS_PROVIDER_OPT_OUT": "ours"})
    port, first = free_port(), stack.process("gateway")
    gateway = Process(f"gateway-ours-{uuid.uuid4().hex[:6]}", first.module, port, first.secrets, env={
        "PORT": str(port), "PUBLIC_BASE_URL": f"http://127.0.0.1:{port}", "MESSAGING_ADDR": f"127.0.0.1:{messaging.port}"})
    stack.processes.append(gateway)
    stack.spawn(gateway)
    try:
        wait_for_port(port, 30, gateway.proc, gateway.name, gateway.log)
        yield f"http://127.0.0.1:{port}{INBOUND_PATH}"
    finally:
        for process in (gateway, messaging):
            stack.stop_process(process)
            stack.processes.remove(process)


async def test_with_the_providers_handling_off_our_replies_answer_the_keywords(api, account, calling_agent, sms,
                                                                            answered_by_us):
    """SMS_PROVIDER_OPT_OUT=ours, for an account whose built-in opt-out handling Twilio turned off: the provider
    passes the keywords on untouched and our TwiML is the only answer (an opt-out confirmed once, then silence)."""
    key, agent, contact = account["key"], calling_agent, number("0169")
    ours = agent["phone_number"]
    status, handling = await sms.control("POST", "/opt-out", {"handling": "off", "number": ours})
    assert status == 201, handling
    await opt_in(api, key, contact)
    stop = await sms.answered(contact, ours, "  Stop ", url=answered_by_us)
    assert stop["auto_reply"] is None and stop["refused"] == []
    [confirmation] = stop["replies"]
    assert "unsubscribed" in confirmation and "Reply START" in confirmation
    assert (await sms.answered(contact, ours, "STOP", url=answered_by_us))["replies"] == []  # confirmed once
    status, body, _ = await send(api, key, agent, contact)
    assert status == 400 and body["error"]["code"] == "number_opted_out" and "STOP" in body["error"]["message"]
    [help_text] = (await sms.answered(contact, ours, "help", url=answered_by_us))["replies"]
    assert "Reply STOP" in help_text
    [resubscribed] = (await sms.answered(contact, ours, "START", url=answered_by_us))["replies"]
    assert "resubscribed" in resubscribed
    status, sent, _ = await send(api, key, agent, contact)
    assert status == 200, sent
    status, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": contact})
    assert [(c["kind"], c["source"]) for c in consent["history"]] == [
        ("opt_in", "api"), ("opt_out", "keyword"), ("opt_out", "keyword"), ("conversational", "inbound_text"),
        ("opt_in", "keyword")]


async def test_a_stop_the_provider_holds_is_recorded_when_it_refuses_a_text(api, account, calling_agent, sms):
    """The recipient replied STOP to the agent's number, then the business recorded an opt-in through the API (a web
    form): our history allows the text, but the provider still holds the STOP and refuses it (21610). The text is
    failed, the opt-out is recorded (source provider) and the answer is number_opted_out; the next send is refused
    by our own check without asking the provider."""
    key, agent, contact = account["key"], calling_agent, number("0177")
    await sms.answered(contact, agent["phone_number"], "STOP")
    await opt_in(api, key, contact)
    status, body, _ = await send(api, key, agent, contact)
    assert status == 400 and body["error"]["code"] == "number_opted_out", body
    assert "replied STOP" in body["error"]["message"] and "START" in body["error"]["message"]
    [failed] = [m for m in (await api.request("GET", "/api/v1/sms/messages", key=key,
                                              params={"direction": "outbound"}))[1]["messages"] if m["to"] == contact]
    assert (failed["status"], failed["error_code"], failed["message_sid"]) == ("failed", "21610", None)
    assert await events_of(api, key, "sms.failed", failed["id"])
    status, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": contact})
    assert [(c["kind"], c["source"]) for c in consent["history"]] == [
        ("opt_out", "keyword"), ("opt_in", "api"), ("opt_out", "provider")]
    assert (consent["state"], consent["history"][-1]["reference"]) == ("opted_out", failed["id"])
    status, body, _ = await send(api, key, agent, contact)  # refused by the decision: no message, no provider
    assert status == 400 and body["error"]["code"] == "number_opted_out"
    assert "opted out of messages from this business" in body["error"]["message"]
    assert [m["id"] for m in (await api.request("GET", "/api/v1/sms/messages", key=key, params={
        "direction": "outbound"}))[1]["messages"] if m["to"] == contact] == [failed["id"]]
    # Their START lifts the provider's block and opts them in here.
    assert (await sms.answered(contact, agent["phone_number"], "START"))["auto_reply"]
    assert (await send(api, key, agent, contact))[0] == 200


async def test_an_inbound_text_threads_becomes_a_lead_and_allows_a_reply(api, account, calling_agent,
                                                                         sms):
    key, agent, sender = account["key"], calling_agent, number("0152")
    assert await sms.text_in(sender, agent["phone_number"], "Do you do weekend appointments?") == []
    [lead] = await wait_until(lambda: leads_with(api, key, sender), f"a lead of {sender} with one interaction",
                              lambda leads: bool(leads) and leads[0]["interaction_count"] == 1)
    assert lead["source"] == "inbound_sms"
    status, threads, _ = await api.request("GET", "/api/v1/sms/conversations", key=key)
    [thread] = [t for t in threads["conversations"] if t["contact_number"] == sender]
    assert (thread["unread_count"], thread["inbound_count"], thread["last_message_direction"]) == (1, 1, "inbound")
    status, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key,
                                        params={"conversation_id": thread["id"], "direction": "inbound"})
    [received] = page["messages"]
    assert (received["body"], received["status"]) == ("Do you do weekend appointments?", "received")
    status, again, _ = await api.request("GET", "/api/v1/sms/conversations", key=key, params={"id": thread["id"]})
    assert again["unread_count"] == 0  # listing the thread's messages read it
    status, events, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": "sms.received"})
    assert [e for e in events["events"] if e["data"]["message_id"] == received["id"]]
    # They texted first: a reply goes out without a recorded opt-in (conversational consent).
    status, sent, _ = await send(api, key, agent, sender, "Yes, Saturdays 9-1.")
    assert status == 200 and sent["conversation_id"] == thread["id"], sent


async def test_a_caller_may_be_texted_back(api, account, calling_agent, voice):
    key, agent, caller = account["key"], calling_agent, number("0153")
    at_provider = await ring(voice, agent["phone_number"], caller)
    await our_call(api, key, agent["id"], at_provider["id"])

    async def consent() -> dict:
        status, body, _ = await api.request("GET", "/api/v1/sms/consent", key=key, params={"phone": caller})
        return body
    conversational = await wait_until(consent, f"{caller}'s conversational consent",
                                      lambda c: c["state"] == "conversational")
    assert conversational["history"][0]["source"] == "inbound_call" and conversational["conversational_until"]
    status, sent, _ = await send(api, key, agent, caller, "Thanks for calling! Here is the link we mentioned.")
    assert status == 200, sent


@pytest.mark.parametrize("message, rule", [
    ("See https://bit.ly/abc123", "link_shortener"), ("", "empty"), ("x" * 1601, "too_long"),
    ("Our dispensary has THC gummies", "prohibited_cannabis")])
async def test_content_rules_refuse_with_the_rule(api, account, calling_agent, message, rule):
    to = number("0154")
    await opt_in(api, account["key"], to)
    status, body, _ = await send(api, account["key"], calling_agent, to, message)
    assert status == 400 and body["error"]["code"] == "content_blocked"
    assert body["error"]["message"].startswith(f"rule {rule}:")


async def test_quiet_hours_refuse_and_say_when(api, account, calling_agent):
    to = number("0155", open_now=False)
    await opt_in(api, account["key"], to)
    status, body, _ = await send(api, account["key"], calling_agent, to)
    assert status == 400 and body["error"]["code"] == "tcpa_violation"
    assert "08:00-21:00" in body["error"]["message"] and "next at 20" in body["error"]["message"]


async def test_the_do_not_call_lists(api, account, calling_agent):
    key, agent, to = account["key"], calling_agent, number("0156")
    await opt_in(api, key, to)
    status, entry, _ = await api.request("POST", "/api/v1/dnc", key=key, json={"phone": to, "reason": "asked"})
    assert status == 201 and entry["phone"] == to and entry["reason"] == "asked"
    status, again, _ = await api.request("POST", "/api/v1/dnc", key=key, json={"phone": to})
    assert status == 201 and again["id"] == entry["id"]
    status, body, _ = await send(api, key, agent, to)
    assert status == 400 and body["error"]["code"] == "number_on_dnc"
    status, check, _ = await api.request("GET", "/api/v1/dnc", key=key, params={"phone": to})
    assert check["listed"] is True and check["entry"]["id"] == entry["id"] and check["platform"] is False
    status, listed, _ = await api.request("GET", "/api/v1/dnc", key=key)
    assert [e["phone"] for e in listed["entries"]] == [to]
    status, body, _ = await api.request("DELETE", "/api/v1/dnc", key=key, params={"phone": to})
    assert status == 400 and body["error"]["code"] == "bad_request"
    status, removed, _ = await api.request("DELETE", "/api/v1/dnc", key=key,
                                           params={"phone": to, "reason": "opted back in by phone"})
    assert status == 200 and removed["removed_at"] and removed["removed_reason"] == "opted back in by phone"
    assert (await send(api, key, agent, to))[0] == 200
    status, body, _ = await api.request("DELETE", "/api/v1/dnc", key=key, params={"phone": to, "reason": "x"})
    assert status == 404
    # The platform's list (PLATFORM_DNC in the tests' stack).
    await opt_in(api, key, "+14155550166")
    status, body, _ = await send(api, key, agent, "+14155550166")
    assert status == 400 and body["error"]["code"] == "number_on_dnc" and "platform" in body["error"]["message"]


async def test_a_provider_refusal_is_sms_send_failed_and_logged(api, account, calling_agent, sms):
    key, to = account["key"], number("0167")
    await opt_in(api, key, to)
    status, fault = await sms.control("POST", "/faults", {"method": "POST", "path": "/2010-04-01/Accounts",
                                                          "status": 400, "times": 1})
    assert status == 201, fault
    status, body, _ = await send(api, key, calling_agent, to)
    assert status == 500 and body["error"]["code"] == "sms_send_failed", body
    status, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key, params={"direction": "outbound"})
    [failed] = [m for m in page["messages"] if m["to"] == to]
    assert (failed["status"], failed["message_sid"]) == ("failed", None)
    assert await events_of(api, key, "sms.failed", failed["id"])


async def test_an_undelivered_text_reports_the_carrier_error(api, account, calling_agent, sms):
    key, to = account["key"], number("0168")
    await opt_in(api, key, to)
    await sms.delivery_fails(to, 30006)
    status, sent, _ = await send(api, key, calling_agent, to)
    assert status == 200
    undelivered = await settled_message(api, key, sent["message_sid"])
    assert (undelivered["status"], undelivered["error_code"]) == ("undelivered", "30006")
    assert undelivered["error_message"] == "Landline or unreachable carrier (30006)"
    [failed] = await events_of(api, key, "sms.failed", sent["message_id"])
    assert failed["data"]["status"] == "undelivered"


async def test_reordered_and_repeated_callbacks_never_move_a_text_back(api, account, calling_agent, sms):
    key, to = account["key"], number("0157")
    await opt_in(api, key, to)
    assert (await sms.control("POST", "/callbacks", {"reorder": True, "duplicate": True}))[0] == 201
    status, sent, _ = await send(api, key, calling_agent, to)
    assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
    await asyncio.sleep(0.5)  # the late "sent" and the duplicates
    assert (await settled_message(api, key, sent["message_sid"]))["status"] == "delivered"
    assert len(await events_of(api, key, "sms.delivered", sent["message_id"])) == 1


async def test_forged_callbacks_and_texts_are_refused(api, account, calling_agent, sms, stack):
    key, to = account["key"], number("0158")
    await opt_in(api, key, to)
    assert (await sms.control("POST", "/callbacks", {"bad_signature": True}))[0] == 201
    status, sent, _ = await send(api, key, calling_agent, to)
    await asyncio.sleep(1)
    status, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key)
    [message] = [m for m in page["messages"] if m["message_sid"] == sent["message_sid"]]
    assert message["status"] == "queued"  # no forged callback moved it
    async with aiohttp.ClientSession() as session:
        for path in ("/api/v1/providers/sms/status", "/api/v1/providers/sms/inbound"):
            async with session.post(stack.base_url + path, data={"MessageSid": "SMx", "MessageStatus": "delivered",
                                                                 "From": to, "To": calling_agent["phone_number"],
                                                                 "Body": "STOP"}) as r:
                assert r.status == 401 and (await r.json())["error"]["code"] == "unauthorized"


async def test_agents_of_other_businesses_or_without_numbers_are_not_found(
        api, account, other_key, calling_agent):
    status, body, _ = await send(api, other_key, calling_agent, number("0159"))
    assert status == 404 and body["error"]["code"] == "not_found"
    status, bare, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
        "business_id": account["business_id"], "name": "No number", "system_prompt": "Hi."})
    status, body, _ = await send(api, account["key"], bare, number("0159"))
    assert status == 404 and "phone number" in body["error"]["message"]


async def test_health_reports_the_messaging_provider(api, account):
    status, health, _ = await api.request("GET", "/api/v1/health", key=account["key"])
    assert status == 200 and health["providers"]["messaging"] == "ok"


async def test_consent_history_cannot_be_rewritten(api, account, db):
    phone = number("0160")
    await opt_in(api, account["key"], phone)
    for statement in ("UPDATE messaging.consent_events SET kind = 'opt_out' WHERE phone = $1",
                      "DELETE FROM messaging.consent_events WHERE phone = $1"):
        with pytest.raises(asyncpg.RaiseError, match="append-only"):
            await db.execute(statement, phone)
    status, consent, _ = await api.request("GET", "/api/v1/sms/consent", key=account["key"], params={"phone": phone})
    assert [c["kind"] for c in consent["history"]] == ["opt_in"]


async def test_the_number_an_agent_texts_from_follows_a_re_point_at_once(api, account, other_key, calling_agent):
    """Messaging keeps each agent's number (services/messaging/senders.py) for up to a minute, but a re-point is
    heard as its event: the next sends go out from the agent's number as it now is, well inside that minute, and a
    kept number is never answered to another business."""
    key, agent, to = account["key"], calling_agent, number("0160")
    await opt_in(api, key, to)
    status, sent, _ = await send(api, key, agent, to)
    assert status == 200 and sent["from"] == agent["phone_number"], sent
    status, body, _ = await send(api, other_key, agent, to)  # kept now, and still not another business's
    assert status == 404 and body["error"]["code"] == "not_found"
    status, other, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Evening desk", "system_prompt": "Answer the phone."})
    assert status == 201, other

    async def point_at(agent_id: str) -> None:
        status, body, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key, json={
            "phone_number": agent["phone_number"], "agent_id": agent_id})
        assert status == 200 and body["agent_id"] == agent_id, body

    async def sent_from(by: dict):
        status, body, _ = await send(api, key, by, to)
        return body["from"] if status == 200 else body["error"]["message"]

    await point_at(other["id"])
    assert "phone number of agent" in await wait_until(lambda: sent_from(agent), "the old agent to have no number",
                                                       lambda found: "phone number of agent" in found, timeout=5)
    assert await sent_from(other) == agent["phone_number"]
    await point_at(agent["id"])
    await wait_until(lambda: sent_from(agent), "the agent to text from its number again",
                     lambda found: found == agent["phone_number"], timeout=5)
