"""The hot routes at their cost budgets (core.costs.Budget, in tests/guard/cost_budget_table.py): one
request is sent with a cost tag and what it cost over every process is compared with its budget, so a change
that adds a statement, a transaction, an RPC, a publish or a provider call to a hot path fails here with the new
count and what was spent. Budgets are of the common case, the key's principal cached in the gateway; the cache
miss is its own test. The voice provider's messages answered while it waits are measured the same way: a
tool-calls message of each of the agent's tools (cost_budget_table.TOOL_BUDGETS) and a transfer-destination-request,
about a call of an agent with every tool on. What a request leaves to consumers (its events, a provider's message
stored for the service that owns it) is not counted as the request's."""
from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from core import costs
from core.costs import Budget
from gateway.route import PUBLIC, Route
from gateway.route_table import all_routes
from providers.messaging import signatures
from providers.messaging.webhooks import STATUS_PATH
from providers.payments import webhooks as payment_webhooks
from providers.voice.vapi.server_messages import MESSAGES_PATH, hmac_plan
from providers.voice.vapi.simulator.playback import sign
from tests.agents import create_eval
from tests.calling import agent_with_number, settled
from tests.costs import Spent, cost_of, settled_cost
from tests.e2e.test_bookings import open_every_day
from tests.guard.cost_budget_table import (
    AFTER_BUDGETS,
    KIND_BUDGETS,
    ROUTE_BUDGETS,
    TOOL_BUDGETS,
    TRANSFER_REQUEST_BUDGET,
)
from tests.receiver import Receiver
from tests.texting import number, opt_in

# A key's first request: its principal is not cached yet, so the gateway asks accounts (AuthenticateKey).
KEY_CACHE_MISS = Budget(rpc=1, sql=2)
FORWARD_TO = "+14155550177"  # A's own phone, where its agents transfer callers
ANN = "+14155550123"  # A's lead's number


@dataclass
class Hot:
    """Account A's records the hot routes address, and what signs the voice provider's messages."""

    key: str
    business: str
    agent: str
    call: dict
    lead: str
    conversation: str
    email: str
    run: str
    eval: str
    texted: str
    text: dict  # the send's answer
    open_day: str  # a local date A takes bookings on (hourly, 09:00-17:00)
    booking: str
    free: Iterator[str]  # the starts of A's free slots, each taken once (a booking's request takes one)
    voice_secret: str
    env: dict  # the stack's settings: what signs the messaging and payment providers' webhooks


@pytest.fixture(scope="module")
async def hot(api, stack):
    signup = await api.signup(business_name="Hot Paths", phone_forward_to=FORWARD_TO)
    dash = await api.dashboard(signup)
    key = (await dash.create_key(name="hot", scopes=["*"]))["key"]
    await dash.close()
    bid = signup["business_id"]
    account = {"key": key, "business_id": bid}

    async def ok(method, path, **kw):
        status, body, _ = await api.request(method, path, key=key, **kw)
        assert 200 <= status < 300, (method, path, body)
        return body
    agent = (await agent_with_number(api, account))["id"]
    lead = (await ok("POST", "/api/v1/leads", json={"business_id": bid, "name": "Ann", "phone": ANN,
                                                     "agent_id": agent}))["id"]
    call = await ok("POST", "/api/v1/calls", json={"agent_id": agent, "to": "+14155550001"})
    texted = number("0102")
    await opt_in(api, key, texted)
    text = await ok("POST", "/api/v1/sms/send", json={"to": texted, "from_agent_id": agent, "message": "Hello"})
    conversation = (await ok("GET", "/api/v1/sms/conversations"))["conversations"][0]["id"]
    email = await ok("POST", "/api/v1/emails", json={"to": "ann@example.com", "subject": "Hi", "body": "Hello",
                                                     "business_id": bid})
    run = await ok("POST", "/api/v1/communication-runs", json={
        "business_id": bid, "external_ref": "hot-1", "agent_id": agent,
        "touches": [{"touch_id": "t1", "channel": "call", "target": {"phone": "+14155550177"},
                     "scheduled_at": (datetime.now(UTC) + timedelta(days=1)).isoformat()}]},
        headers={"Idempotency-Key": "hot-run-1"})
    status, made_eval = await create_eval(api, account, agent)
    assert status == 201, made_eval
    day = await open_every_day(api, account)
    free = iter(slot["starts_at"] for slot in (await ok("GET", "/api/v1/availability/slots", params={
        "from": day.isoformat(), "to": (day + timedelta(days=6)).isoformat()}))["slots"])
    booking = await ok("POST", "/api/v1/bookings", json={"starts_at": next(free), "name": "Ann", "phone_number": ANN})
    return Hot(key=key, business=bid, agent=agent, call=call, lead=lead, conversation=conversation,
               email=email["id"], run=run["id"], eval=made_eval["id"], texted=texted, text=text,
               open_day=day.isoformat(), booking=booking["id"], free=free,
               voice_secret=stack.env()["VOICE_WEBHOOK_SECRET"], env=stack.env())


def _voice_message(h: Hot, call: dict, message: dict) -> dict:
    """The voice provider's server message about A's `call`, signed as it signs it."""
    ref = {"id": call["conversation_id"], "assistantOverrides": {"metadata": {"switchboard_call_id": call["id"]}}}
    body = json.dumps({"message": {**message, "call": ref}}).encode()
    return {"data": body, "headers": {"Content-Type": "application/json",
                                      **sign(hmac_plan(h.voice_secret), body, time.time())}}


def _status_update(h: Hot, call: dict | None = None) -> dict:
    return _voice_message(h, call or h.call, {"type": "status-update", "status": "ringing"})


def _status_callback(h: Hot, text: dict | None = None) -> dict:
    """The messaging provider's callback that A's text (`text`, the send's answer, else the hot one) was
    delivered, signed as it signs it."""
    text = text or h.text
    params = {"MessageSid": text["message_sid"], "MessageStatus": "delivered", "To": text["to"]}
    url = f"{h.env['PUBLIC_BASE_URL']}{STATUS_PATH}?message_id={text['message_id']}"
    return {"params": {"message_id": text["message_id"]}, "data": params,
            "headers": {signatures.SIGNATURE_HEADER: signatures.sign(h.env["SMS_AUTH_TOKEN"], url, params)}}


def _payment_event(h: Hot) -> dict:
    """A payment provider's event about A's business (one we acknowledge and ignore), signed as it signs it."""
    body = json.dumps({"id": f"evt_hot_{time.time_ns()}", "object": "event", "type": "invoice.upcoming",
                       "created": int(time.time()), "data": {"object": {"metadata": {"business_id": h.business}}}}
                      ).encode()
    return {"data": body, "headers": {"Content-Type": "application/json", payment_webhooks.SIGNATURE_HEADER:
                                      payment_webhooks.sign_payload(body, h.env["PAYMENTS_WEBHOOK_SECRET"],
                                                                    int(time.time()))}}


# The request each hot route is measured with: Api.request's keyword arguments.
REQUESTS: dict[tuple[str, str, str], Callable[[Hot], dict]] = {
    ("GET", "/api/v1/workspaces", "read_one"): lambda h: {"params": {"id": h.business}},
    ("GET", "/api/v1/workspaces", ""): lambda h: {},
    ("GET", "/api/v1/agents", "read_one"): lambda h: {"params": {"id": h.agent}},
    ("GET", "/api/v1/agents", ""): lambda h: {},
    ("GET", "/api/v1/calls", "read_one"): lambda h: {"params": {"id": h.call["id"]}},
    ("GET", "/api/v1/calls", ""): lambda h: {},
    ("GET", "/api/v1/leads", "read_one"): lambda h: {"params": {"id": h.lead}},
    ("GET", "/api/v1/leads", ""): lambda h: {},
    ("GET", "/api/v1/sms/conversations", "read_one"): lambda h: {"params": {"id": h.conversation}},
    ("GET", "/api/v1/sms/conversations", ""): lambda h: {},
    ("GET", "/api/v1/emails", "read_one"): lambda h: {"params": {"id": h.email}},
    ("GET", "/api/v1/emails", ""): lambda h: {},
    ("GET", "/api/v1/communication-runs", "read_one"): lambda h: {"params": {"id": h.run}},
    ("GET", "/api/v1/communication-runs", ""): lambda h: {},
    ("GET", "/api/v1/evals", "read_one"): lambda h: {"params": {"id": h.eval}},
    ("GET", "/api/v1/evals", ""): lambda h: {"params": {"agent_id": h.agent}},
    ("GET", "/api/v1/phone-numbers", ""): lambda h: {"params": {"business_id": h.business}},
    ("GET", "/api/v1/webhooks", ""): lambda h: {"params": {"business_id": h.business}},
    ("GET", "/api/v1/sms/messages", ""): lambda h: {"params": {"conversation_id": h.conversation}},
    ("POST", "/api/v1/sms/send", ""): lambda h: {"json": {"to": h.texted, "from_agent_id": h.agent,
                                                          "message": "Your quote is ready."}},
    ("POST", "/api/v1/calls", ""): lambda h: {"json": {"agent_id": h.agent, "to": "+14155550001"}},
    ("GET", "/api/v1/bookings", "read_one"): lambda h: {"params": {"id": h.booking}},
    ("GET", "/api/v1/bookings", ""): lambda h: {},
    ("POST", "/api/v1/bookings", ""): lambda h: {"json": {"starts_at": next(h.free), "name": "Ann Lee",
                                                          "phone_number": ANN}},
    (("POST", MESSAGES_PATH, "")): _status_update,
    ("POST", STATUS_PATH, ""): _status_callback,
    ("POST", payment_webhooks.EVENTS_PATH, ""): _payment_event,
}


def _route(method: str, path: str) -> Route:
    return next(r for r in all_routes() if (r.method, r.path) == (method, path))


def _budgeted() -> list[tuple[str, str, str]]:
    return sorted(ROUTE_BUDGETS)


def test_every_budget_is_of_a_route_and_has_a_request():
    routes = {(r.method, r.path, which) for r in all_routes() for which in ("", "read_one")
              if which == "" or r.read_one is not None}
    assert set(ROUTE_BUDGETS) <= routes, set(ROUTE_BUDGETS) - routes
    assert _budgeted() == sorted(REQUESTS)


def verdict(budget: Budget, spent: Spent) -> str:
    over = budget.over(spent.totals())
    return "" if not over else (
        f"over budget: {', '.join(f'{kind} {n} > {limit}' for kind, (n, limit) in over.items())}; spent:\n  "
        + "\n  ".join(spent.details()))


def assert_at(budget: Budget, spent: Spent) -> None:
    """What was spent is the budget: no more, and no less either."""
    assert not verdict(budget, spent), verdict(budget, spent)
    # A budget that is not tight hides the next regression: it is lowered with the improvement that allows it.
    assert spent.totals() == {kind: getattr(budget, kind) for kind in spent.totals()}, (
        f"it now costs less than its budget: lower it to {spent.totals()}; spent:\n  " + "\n  ".join(spent.details()))


@pytest.mark.parametrize("method,path,which", _budgeted(), ids=lambda v: v or "list")
async def test_a_hot_route_costs_no_more_than_its_budget(stack, api, hot, method, path, which):
    # Sent once first: the key's principal and what the services keep (a business's name) are cached then.
    key = None if _route(method, path).auth == PUBLIC else hot.key
    await api.request(method, path, key=key, **REQUESTS[method, path, which](hot))
    budget = ROUTE_BUDGETS[method, path, which]
    status, body, spent = await cost_of(stack, api, method, path, key=key, **REQUESTS[method, path, which](hot))
    assert 200 <= status < 300, body
    assert_at(budget, spent)


# A message of each kind the route acknowledges without storing it, as the provider sends it during a call.
KIND_MESSAGES = {
    "conversation-update": {"type": "conversation-update", "messages": [], "messagesOpenAIFormatted": []},
    "speech-update": {"type": "speech-update", "status": "started", "role": "user", "turn": 1},
    "hang": {"type": "hang"},
    "user-interrupted": {"type": "user-interrupted"},
}


def _kind_budgeted() -> list[tuple[str, str]]:
    return sorted(KIND_BUDGETS)


def test_every_kind_budget_has_a_message():
    assert [kind for _, kind in _kind_budgeted()] == sorted(KIND_MESSAGES)


@pytest.mark.parametrize("path,kind", _kind_budgeted())
async def test_a_message_acknowledged_without_storing_costs_its_kind_budget(stack, api, hot, path, kind):
    """Sent many times in every call (the provider's default server messages), it costs no statement, RPC or
    publish: answered from the gateway once its signature holds."""
    status, body, spent = await cost_of(stack, api, "POST", path, **_voice_message(hot, hot.call, KIND_MESSAGES[kind]))
    assert (status, body) == (200, {})
    budget = KIND_BUDGETS[path, kind]
    assert not verdict(budget, spent), verdict(budget, spent)


async def test_a_keys_first_request_costs_one_authentication_more(stack, api, hot):
    # Unpaid: a paid one's subscription events, applied asynchronously, could change its standing (and drop the
    # account's cached principals) between the two requests.
    signup = await api.signup(paid=False, business_name="Fresh Key")
    budget = ROUTE_BUDGETS["GET", "/api/v1/workspaces", "read_one"].plus(KEY_CACHE_MISS)
    status, body, spent = await cost_of(stack, api, "GET", "/api/v1/workspaces", key=signup["api_key"],
                                        params={"id": signup["business_id"]})
    assert status == 200, body
    assert not verdict(budget, spent), verdict(budget, spent)
    assert spent.counts["rpc:gateway: AuthenticateKey"] == 1
    status, body, spent = await cost_of(stack, api, "GET", "/api/v1/workspaces", key=signup["api_key"],
                                        params={"id": signup["business_id"]})
    assert spent.counts["rpc:gateway: AuthenticateKey"] == 0, "the second request authenticates from the cache"


# -- the agent's tools during a call ----------------------------------------------------------------------------

LOOKUP = "lookup_order"  # the custom tool's name


@pytest.fixture(scope="module")
async def tooled(api, hot):
    """An ended call of an agent of A's with every tool on (its custom tool's endpoint the test's) to a callee who
    opted in to texts."""
    endpoint = await Receiver().start()
    account = {"key": hot.key, "business_id": hot.business}
    agent = await agent_with_number(api, account)
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=hot.key, json={"id": agent["id"], "tools": [
        {"type": "send_sms"}, {"type": "send_link", "links": [{"name": "Menu", "url": "https://example.com/menu"}]},
        {"type": "check_availability"}, {"type": "book_appointment"}, {"type": "update_lead"},
        {"type": "transfer_call"}, {"type": "end_call"},
        {"type": "custom", "name": LOOKUP, "description": "Find an order by its number", "url": endpoint.url,
         "parameters": {"type": "object", "properties": {"order": {"type": "string"}}}}]})
    assert status == 200, body
    callee = number("0311")
    await opt_in(api, hot.key, callee)
    status, call, _ = await api.request("POST", "/api/v1/calls", key=hot.key,
                                        json={"agent_id": agent["id"], "to": callee})
    assert status == 201, call
    yield await settled(api, hot.key, call["id"])
    await endpoint.stop()
    await api.request("DELETE", "/api/v1/phone-numbers", key=hot.key, params={"phone_number": agent["phone_number"]})


# What the model passes each tool (by its type), a call that succeeds; each call's own where a second one would do
# less (a slot booked, a note recorded).
TOOL_ARGUMENTS: dict[str, Callable[[Hot], dict]] = {
    "end_call": lambda h: {},
    "send_sms": lambda h: {"text": "We open at 9 tomorrow."},
    "send_link": lambda h: {"name": "Menu"},
    "check_availability": lambda h: {"date": h.open_day},
    "book_appointment": lambda h: {"starts_at": next(h.free), "name": "Ann Lee", "notes": "leaking boiler"},
    "update_lead": lambda h: {"name": "Ann Lee", "notes": f"asked for a quote ({uuid.uuid4().hex[:8]})"},
    "custom": lambda h: {"order": "A-17"},
}


def _tool_call(h: Hot, call: dict, tool: str) -> tuple[str, dict]:
    """A tool-calls message about `call` with one call of `tool` (a fresh tool call id: each is run once), and its
    id."""
    tool_call_id = f"call_{uuid.uuid4().hex}"
    function = {"name": LOOKUP if tool == "custom" else tool, "arguments": json.dumps(TOOL_ARGUMENTS[tool](h))}
    return tool_call_id, _voice_message(h, call, {"type": "tool-calls", "timestamp": int(time.time() * 1000),
                                                  "toolCallList": [{"id": tool_call_id, "type": "function",
                                                                    "function": function}]})


def test_every_tool_budget_has_its_arguments():
    assert sorted(TOOL_BUDGETS) == sorted(TOOL_ARGUMENTS)


@pytest.mark.parametrize("tool", sorted(TOOL_BUDGETS))
async def test_a_tool_call_costs_its_tools_budget(stack, api, hot, tooled, tool):
    """Answered while the provider waits: what the tool does is counted as the message's."""
    _, warm_up = _tool_call(hot, tooled, tool)
    status, body, _ = await api.request("POST", MESSAGES_PATH, **warm_up)
    assert status == 200, body
    tool_call_id, message = _tool_call(hot, tooled, tool)
    status, body, spent = await cost_of(stack, api, "POST", MESSAGES_PATH, **message)
    assert status == 200 and [r["toolCallId"] for r in body["results"]] == [tool_call_id], body
    status, call, _ = await api.request("GET", "/api/v1/calls", key=hot.key, params={"id": tooled["id"]})
    assert {t["id"]: t["outcome"] for t in call["tool_calls"]}[tool_call_id] == "ok", body
    assert_at(TOOL_BUDGETS[tool], spent)


def _transfer_request(h: Hot, call: dict) -> dict:
    return _voice_message(h, call, {"type": "transfer-destination-request", "timestamp": time.time_ns() // 10**6,
                                    "artifact": {"messages": []}})


async def test_a_transfer_request_costs_its_budget(stack, api, hot, tooled):
    """The agent's transfer_call names no destination: the provider asks where the call goes, and waits."""
    status, body, _ = await api.request("POST", MESSAGES_PATH, **_transfer_request(hot, tooled))
    assert status == 200, body
    status, body, spent = await cost_of(stack, api, "POST", MESSAGES_PATH, **_transfer_request(hot, tooled))
    assert status == 200 and body["destination"]["number"] == FORWARD_TO, body
    assert_at(TRANSFER_REQUEST_BUDGET, spent)


# -- what a stored provider message sets off ------------------------------------------------------------------

def _end_of_call_report(h: Hot, call: dict) -> dict:
    """The voice provider's report that A's call was answered, with what the assistant gathered."""
    now = datetime.now(UTC)
    return _voice_message(h, call, {
        "type": "end-of-call-report", "endedReason": "customer-ended-call",
        "startedAt": (now - timedelta(minutes=2)).isoformat(), "endedAt": now.isoformat(), "cost": 0.12,
        "artifact": {"transcript": "AI: Hello!\nUser: I need a quote.", "messages": []},
        "analysis": {"summary": "A quote for a water heater.", "successEvaluation": "true",
                     "structuredData": {"name": "Jordan Lee", "email": "jordan@example.com",
                                        "intent": "Quote for a water heater"}}})


@dataclass
class Fresh:
    """A record of A's in the state a provider's message moves on (a call not yet ringing, a text not yet
    delivered), the message, and what shows its effects are all in."""

    request: dict
    done: Callable[[], Awaitable[bool]]


@pytest.fixture(scope="module")
async def receiver(api, hot):
    """A's webhook endpoint, subscribed to what the provider messages below emit."""
    endpoint = await Receiver().start()
    status, body, _ = await api.request("POST", "/api/v1/webhooks", key=hot.key, json={
        "webhook_url": endpoint.url, "events": ["call.completed", "sms.delivered"], "business_id": hot.business})
    assert status == 201, body
    yield endpoint
    await endpoint.stop()


async def _quiet_call(api, voice, h: Hot) -> dict:
    """A call of A's that the voice provider plays without telling us (the test sends its messages)."""
    await voice.playback(silent=True)
    status, call, _ = await api.request("POST", "/api/v1/calls", key=h.key,
                                        json={"agent_id": h.agent, "to": "+14155550002"})
    assert status == 201, call
    return call


async def _fresh(kind: str, api, voice, sms, h: Hot, receiver: Receiver) -> Fresh:
    def delivered(event: str, field: str, value: str) -> Callable[[], Awaitable[bool]]:
        async def done() -> bool:
            return any(r["json"]["data"].get(field) == value for r in receiver.events(event).values())
        return done
    if kind == "status-update":
        call = await _quiet_call(api, voice, h)

        async def ringing() -> bool:
            _, read, _ = await api.request("GET", "/api/v1/calls", key=h.key, params={"id": call["id"]})
            return read["status"] == "ringing"
        return Fresh(_status_update(h, call), ringing)
    if kind == "end-of-call-report":
        call = await _quiet_call(api, voice, h)
        return Fresh(_end_of_call_report(h, call), delivered("call.completed", "call_id", call["id"]))
    assert kind == "delivered", kind
    status, _ = await sms.control("POST", "/callbacks", {"bad_signature": True})  # its own callbacks are refused
    assert status == 201
    status, text, _ = await api.request("POST", "/api/v1/sms/send", key=h.key, json={
        "to": h.texted, "from_agent_id": h.agent, "message": "Your booking is confirmed."})
    assert status == 200, text
    return Fresh(_status_callback(h, text), delivered("sms.delivered", "message_id", text["message_id"]))


def _after_budgeted() -> list[tuple[str, str]]:
    return sorted(AFTER_BUDGETS)


@pytest.mark.parametrize("path,kind", _after_budgeted())
async def test_a_stored_provider_message_costs_downstream_no_more_than_its_budget(stack, api, voice, sms, hot,
                                                                                  receiver, path, kind):
    """Its owner applies it and the events it adds are consumed, a webhook delivered among them: all that is
    counted under the message's after-tag and compared with the route's budget for that kind of message."""
    fresh = await _fresh(kind, api, voice, sms, hot, receiver)
    tag = uuid.uuid4().hex
    status, body, spent = await cost_of(stack, api, "POST", path, tag=tag, **fresh.request)
    assert 200 <= status < 300, body
    assert not verdict(ROUTE_BUDGETS["POST", path, ""], spent), verdict(ROUTE_BUDGETS["POST", path, ""], spent)
    after = await settled_cost(stack, api, costs.after(tag), fresh.done)
    budget = AFTER_BUDGETS[path, kind]
    assert not verdict(budget, after), verdict(budget, after)
