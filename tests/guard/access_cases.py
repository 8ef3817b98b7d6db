"""One request per route that addresses the first account's records, for the tenancy and scope matrices
(tests/guard/test_access_matrix.py).

A recipe gets the World (account A with an agent, a lead, a webhook and a number; account B) and returns
the request that reaches A's records: ids in the query and the body, A's business_id where the route
takes one. Recipes for destructive routes make a fresh record, so each case can also be sent by A.
"""
from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from tests.waiting import wait_until

NOT_FOUND, FORBIDDEN = "not_found", "forbidden"
_hooks = itertools.count()
_phones = itertools.count(200)
_runs = itertools.count()


def fresh_phone() -> str:
    return f"+1415555{next(_phones):04d}"


@dataclass
class World:
    api: object
    a_key: str
    a_business: str
    a_dashboard: object
    b_key: str
    b_dashboard: object
    sign_in: Callable[[str], Awaitable[object]] | None = None  # "a" or "b": another session of that account
    b_bound_key: str = ""
    agent: str = ""
    lead: str = ""
    webhook: str = ""
    number: str = ""
    call: str = ""
    keys_without: dict = field(default_factory=dict)  # scope -> a key of A with every other scope

    async def ok(self, method: str, path: str, **kwargs) -> dict:
        status, body, _ = await self.api.request(method, path, key=self.a_key, **kwargs)
        assert 200 <= status < 300, (method, path, body)
        return body

    async def erasures_over(self) -> None:
        """A's erasures are all over: one still running changes A's records (its do-not-contact list, the erasure
        itself) between a case's two snapshots."""
        await wait_until(lambda: self.ok("GET", "/api/v1/privacy/erasures", params={"business_id": self.a_business}),
                         "A's erasures to be over",
                         lambda page: all(e["status"] in ("completed", "failed") for e in page["erasures"]),
                         timeout=30)

    async def exports_over(self) -> None:
        """A's exports are all over: one still running writes its progress between a case's two snapshots."""
        await wait_until(lambda: self.ok("GET", "/api/v1/exports", params={"business_id": self.a_business}),
                         "A's exports to be over",
                         lambda page: all(e["status"] in ("completed", "failed") for e in page["exports"]),
                         timeout=60)

    async def free_number(self) -> str:
        pool = await self.ok("GET", "/api/v1/phone-numbers/available", params={"country": "US", "limit": "100"})
        return pool["numbers"][-1]["phone_number"]

    async def new_number(self) -> str:
        number = await self.free_number()
        await self.ok("POST", "/api/v1/phone-numbers", json={"business_id": self.a_business, "phone_number": number,
                                                              "agent_id": self.agent})
        return number

    async def new_webhook(self) -> str:
        made = await self.ok("POST", "/api/v1/webhooks", json={
            "business_id": self.a_business, "webhook_url": f"http://127.0.0.1:9/hooks/{next(_hooks)}",
            "events": ["dispatcher.briefing_created"]})  # only the SDR runner emits it, never triggered here
        return made["webhook"]["id"]

    async def new_key(self) -> str:
        return (await self.a_dashboard.create_key(name="to be touched", scopes=["sms:read"]))["id"]


@dataclass
class Request:
    params: dict = field(default_factory=dict)
    json: dict | None = None
    headers: dict | None = None


Recipe = Callable[[World], Awaitable[Request]]


@dataclass(frozen=True)
class Case:
    recipe: Recipe
    # What another account gets: NOT_FOUND or FORBIDDEN (the request names A's business), or, for routes
    # that take no id of A's, why tenancy has nothing to address (B's reply must still hold none of A's ids).
    other_account: str
    # Whether the caller is a dashboard session rather than a key.
    session: bool = False
    # The route ends the session it is sent with: each account sends it with a session of its own made for it.
    ends_session: bool = False


def _r(**kwargs) -> Recipe:
    async def recipe(w: World) -> Request:
        return Request(**{k: (v(w) if callable(v) else v) for k, v in kwargs.items()})
    return recipe


async def _assign(w: World) -> Request:
    return Request(json={"business_id": w.a_business, "phone_number": await w.free_number(), "agent_id": w.agent})


async def _release(w: World) -> Request:
    return Request(params={"business_id": w.a_business, "phone_number": await w.new_number()})


async def _delete_webhook(w: World) -> Request:
    return Request(params={"business_id": w.a_business, "id": await w.new_webhook()})


async def _delete_webhook_by_id(w: World) -> Request:
    return Request(params={"id": await w.new_webhook()})


def _run(w: World) -> dict:
    """A communication run of A with one call a day ahead (nothing executes while the matrix runs)."""
    at = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    return {"business_id": w.a_business, "external_ref": f"guard-{next(_runs)}", "agent_id": w.agent,
            "touches": [{"touch_id": "t1", "channel": "call", "target": {"phone": fresh_phone()}, "scheduled_at": at}]}


async def _create_run(w: World) -> Request:
    return Request(json=_run(w), headers={"Idempotency-Key": f"guard-key-{next(_runs)}"})


async def _new_run(w: World) -> str:
    made = await w.api.request("POST", "/api/v1/communication-runs", key=w.a_key, **vars(await _create_run(w)))
    assert made[0] == 201, made
    return made[1]["id"]


async def _run_by_id(w: World) -> Request:
    return Request(params={"id": await _new_run(w)})


async def _pause_run(w: World) -> Request:
    return Request(json={"id": await _new_run(w), "action": "pause"})


async def _booking(w: World) -> Request:
    """A booking of A's first free slot in the next two weeks (each case takes a fresh one)."""
    today = datetime.now(UTC).date()
    slots = await w.ok("GET", "/api/v1/availability/slots", params={
        "business_id": w.a_business, "from": (today + timedelta(days=1)).isoformat(),
        "to": (today + timedelta(days=14)).isoformat()})
    return Request(json={"business_id": w.a_business, "starts_at": slots["slots"][0]["starts_at"], "name": "Ann",
                         "phone_number": fresh_phone()})


async def _new_booking(w: World) -> str:
    return (await w.ok("POST", "/api/v1/bookings", json=(await _booking(w)).json))["id"]


async def _booking_by_id(w: World) -> Request:
    return Request(params={"id": await _new_booking(w)})


async def _cancel_booking(w: World) -> Request:
    return Request(json={"id": await _new_booking(w), "status": "canceled"})


async def _sdr_dry_run(w: World) -> Request:
    """A dry run of A's pipeline, SDR enabled first (a run of a business without it is 400); nothing is sent."""
    await w.ok("PUT", "/api/sdr/config", json={"businessId": w.a_business, "enabled": True})
    return Request(json={"businessId": w.a_business, "dryRun": True})


async def _send_sms(w: World) -> Request:
    """A text A may send: to a fresh phone that opted in, in a zone whose quiet hours are over now."""
    from tests.texting import number
    phone = number(f"{next(_phones):04d}")
    await w.ok("POST", "/api/v1/sms/consent", json={"business_id": w.a_business, "phone": phone, "state": "opted_in"})
    return Request(json={"from_agent_id": w.agent, "to": phone, "message": "Hello"})


async def _held_email(w: World) -> Request:
    """An email A held for approval, to an address A's owner approved in person before (a key may approve that; a
    stranger needs the owner)."""
    to = f"known-{next(_phones)}@example.com"
    email = {"business_id": w.a_business, "to": to, "subject": "Held", "body": "For approval."}
    first = await w.ok("POST", "/api/v1/emails", json=email)
    status, body, _ = await w.a_dashboard.request("POST", "/api/v1/emails/approve", json={"id": first["id"]})
    assert status == 200, body
    held = await w.ok("POST", "/api/v1/emails", json={**email, "approve": False})
    return Request(json={"id": held["id"]})


async def _unpaid_workspace(w: World) -> Request:
    """A workspace of A whose subscription never started (as a signup's before its checkout): it may open one. The
    provider's events of its addition to A's subscription are applied first, or a late one copies the subscription's
    status back over `incomplete`."""
    from tests.billing import provider_events_applied
    from tests.standing import set_subscription
    made = await w.ok("POST", "/api/v1/workspaces", json={"name": "Unpaid branch"})
    await provider_events_applied(w.api, w.a_business)
    await set_subscription(w.api.database_url, "incomplete", made["id"])
    return Request(json={"business_id": made["id"]})


async def _x402_renewal(w: World) -> Request:
    """A's unpaid workspace with a signed x402 payment of its terms: A's request settles it; B's is refused before
    the payment is looked at."""
    from providers.x402 import payer
    request = await _unpaid_workspace(w)
    status, body, headers = await w.api.request("POST", "/api/v1/subscription/x402", key=w.a_key, json=request.json)
    assert status == 402, body
    paid = payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])
    return Request(json=request.json, headers={"PAYMENT-SIGNATURE": paid})


async def _remove_dnc(w: World) -> Request:
    phone = fresh_phone()
    await w.ok("POST", "/api/v1/dnc", json={"business_id": w.a_business, "phone": phone, "reason": "asked"})
    return Request(params={"business_id": w.a_business, "phone": phone, "reason": "changed their mind"})


async def _patch_key(w: World) -> Request:
    return Request(json={"id": await w.new_key(), "name": "renamed", "revoke": True})


async def _delete_key(w: World) -> Request:
    return Request(params={"id": await w.new_key()}, headers={"X-Requested-With": "fetch"})


SCENARIO = [{"role": "user", "content": "Hi, are you open?"},
            {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?i)open"}}]


async def _new_eval(w: World) -> str:
    made = await w.ok("POST", "/api/v1/evals", json={"agent_id": w.agent, "business_id": w.a_business,
                                                     "name": "hours.open", "messages": SCENARIO})
    return made["id"]


async def _eval_by_id(w: World) -> Request:
    return Request(params={"id": await _new_eval(w)})


async def _erasure_by_id(w: World) -> Request:
    """An erasure of A's (of a number nobody uses: it finds nothing)."""
    made = await w.ok("POST", "/api/v1/privacy/erasures", json={"business_id": w.a_business, "phone": fresh_phone()})
    await w.erasures_over()
    return Request(params={"id": made["id"]})


async def _export_by_id(w: World) -> Request:
    """An export of A's data, over."""
    made = await w.ok("POST", "/api/v1/exports", json={"business_id": w.a_business})
    await w.exports_over()
    return Request(params={"id": made["id"]})


async def _eval_run(w: World) -> Request:
    eval_id = await _new_eval(w)
    made = await w.ok("POST", "/api/v1/evals/run", json={"eval_id": eval_id, "wait": False})
    return Request(params={"run_id": made["run_id"]})


async def _fan_out(w: World) -> Request:
    await _new_eval(w)  # the agent has a scenario to run
    return Request(json={"agent_id": w.agent, "wait": False})


async def _patch_eval(w: World) -> Request:
    return Request(json={"id": await _new_eval(w), "name": "hours.renamed"})


PERSONA = {"lead_name": "Dana", "scenario": "Her water heater leaks."}
NO_IDS = "takes no id of another account's records"
OWN_REPORTS = "reports on the caller's own businesses only"
CONNECTOR = "a tool result: isError not_found for another account's record"


def _call_status(w: World) -> dict:
    return {"name": "check_call_status", "arguments": {"call_id": w.call}}


def _rpc(method: str, params: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}

CASES: dict[tuple[str, str], Case] = {
    # accounts
    ("GET", "/api/v1/keys"): Case(_r(), "lists the session's own account's keys", session=True),
    ("POST", "/api/v1/keys"): Case(_r(json=lambda w: {"name": "x", "business_id": w.a_business}), FORBIDDEN,
                                   session=True),
    ("PATCH", "/api/v1/keys"): Case(_patch_key, NOT_FOUND, session=True),
    ("DELETE", "/api/v1/keys"): Case(_delete_key, NOT_FOUND, session=True),
    ("POST", "/api/v1/sessions/logout"): Case(_r(json={}), "ends the caller's own session; takes no id",
                                              session=True, ends_session=True),
    ("GET", "/api/v1/workspaces"): Case(_r(params=lambda w: {"id": w.a_business}), NOT_FOUND),
    ("POST", "/api/v1/workspaces"): Case(_r(json={"name": "Branch"}), "creates in the caller's own account"),
    ("PATCH", "/api/v1/workspaces"): Case(_r(json=lambda w: {"id": w.a_business, "name": "Renamed"}), NOT_FOUND),
    ("POST", "/api/v1/subscription/checkout"): Case(_unpaid_workspace, FORBIDDEN),
    ("POST", "/api/v1/subscription/x402"): Case(_x402_renewal, FORBIDDEN),
    ("GET", "/api/v1/capabilities"): Case(_r(), NO_IDS),
    ("GET", "/api/v1/health"): Case(_r(), NO_IDS),
    ("GET", "/api/v1/usage"): Case(_r(), NO_IDS),
    ("GET", "/api/v1/balance"): Case(_r(), NO_IDS),
    # agents
    ("GET", "/api/v1/agents"): Case(_r(params=lambda w: {"id": w.agent}), NOT_FOUND),
    ("POST", "/api/v1/agents"): Case(_r(json=lambda w: {"business_id": w.a_business, "name": "X",
                                                        "system_prompt": "Answer."}), FORBIDDEN),
    ("PATCH", "/api/v1/agents"): Case(_r(json=lambda w: {"id": w.agent, "name": "Renamed"}), NOT_FOUND),
    ("POST", "/api/v1/agents/persona"): Case(_r(json=lambda w: {"agent_id": w.agent, "persona": PERSONA}), NOT_FOUND),
    ("GET", "/api/v1/agents/versions"): Case(_r(params=lambda w: {"agent_id": w.agent}), NOT_FOUND),
    ("POST", "/api/v1/agents/versions/rollback"): Case(_r(json=lambda w: {"agent_id": w.agent, "version": 1}),
                                                       NOT_FOUND),
    ("POST", "/api/v1/agents/rotate-tool-secret"): Case(_r(json=lambda w: {"id": w.agent}), NOT_FOUND),
    ("POST", "/api/v1/sms/update-prompt"): Case(_r(json=lambda w: {"agent_id": w.agent, "sms_prompt": "Text back."}),
                                                NOT_FOUND),
    # phone numbers
    ("GET", "/api/v1/phone-numbers"): Case(_r(params=lambda w: {"business_id": w.a_business,
                                                                "phone_number": w.number}), FORBIDDEN),
    ("GET", "/api/v1/phone-numbers/available"): Case(_r(), "the pool belongs to no business"),
    ("POST", "/api/v1/phone-numbers"): Case(_assign, FORBIDDEN),
    ("PATCH", "/api/v1/phone-numbers"): Case(_r(json=lambda w: {"business_id": w.a_business, "phone_number": w.number,
                                                                "agent_id": w.agent}), FORBIDDEN),
    ("DELETE", "/api/v1/phone-numbers"): Case(_release, FORBIDDEN),
    ("GET", "/api/v1/numbers"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    # calls
    # A busy test number: the owner's call ends at once and makes no lead, so no snapshot sees it.
    ("POST", "/api/v1/calls"): Case(_r(json=lambda w: {"agent_id": w.agent, "to": "+14155550002"}), NOT_FOUND),
    ("GET", "/api/v1/calls"): Case(_r(params=lambda w: {"id": w.call}), NOT_FOUND),
    ("GET", "/api/v1/recordings"): Case(_r(params=lambda w: {"call_id": w.call}), NOT_FOUND),
    ("GET", "/api/v1/transcripts"): Case(_r(), "lists the caller's own businesses' transcripts"),
    # leads
    ("GET", "/api/v1/leads"): Case(_r(params=lambda w: {"id": w.lead}), NOT_FOUND),
    ("POST", "/api/v1/leads"): Case(_r(json=lambda w: {"business_id": w.a_business, "name": "Ann"}), FORBIDDEN),
    ("PATCH", "/api/v1/leads"): Case(_r(json=lambda w: {"id": w.lead, "notes": "called"}), NOT_FOUND),
    ("GET", "/api/v1/leads/audit"): Case(_r(), NO_IDS),
    # bookings
    ("GET", "/api/v1/availability"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("PUT", "/api/v1/availability"): Case(_r(json=lambda w: {"business_id": w.a_business, "slot_minutes": 30}),
                                          FORBIDDEN),
    ("GET", "/api/v1/availability/slots"): Case(_r(params=lambda w: {
        "business_id": w.a_business, "date": (datetime.now(UTC) + timedelta(days=3)).date().isoformat()}), FORBIDDEN),
    ("POST", "/api/v1/bookings"): Case(_booking, FORBIDDEN),
    ("GET", "/api/v1/bookings"): Case(_booking_by_id, NOT_FOUND),
    ("PATCH", "/api/v1/bookings"): Case(_cancel_booking, NOT_FOUND),
    # messaging
    ("POST", "/api/v1/sms/send"): Case(_send_sms, NOT_FOUND),
    ("GET", "/api/v1/sms/conversations"): Case(_r(), "lists the caller's own businesses' threads"),
    ("GET", "/api/v1/sms/messages"): Case(_r(), "lists the caller's own businesses' texts"),
    ("GET", "/api/v1/sms/consent"): Case(_r(params=lambda w: {"business_id": w.a_business,
                                                              "phone": "+14155550100"}), FORBIDDEN),
    ("POST", "/api/v1/sms/consent"): Case(_r(json=lambda w: {"business_id": w.a_business, "phone": fresh_phone(),
                                                             "state": "opted_in"}), FORBIDDEN),
    ("POST", "/api/v1/dnc"): Case(_r(json=lambda w: {"business_id": w.a_business, "phone": fresh_phone()}), FORBIDDEN),
    ("GET", "/api/v1/dnc"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("DELETE", "/api/v1/dnc"): Case(_remove_dnc, FORBIDDEN),
    ("POST", "/api/v1/emails"): Case(_r(json=lambda w: {"business_id": w.a_business, "to": "a@example.com",
                                                        "subject": "Hi", "body": "Hello.", "approve": False}),
                                     FORBIDDEN),
    ("POST", "/api/v1/emails/approve"): Case(_held_email, NOT_FOUND),
    # privacy
    ("POST", "/api/v1/privacy/erasures"): Case(_r(json=lambda w: {"business_id": w.a_business,
                                                                  "phone": fresh_phone()}), FORBIDDEN),
    ("GET", "/api/v1/privacy/erasures"): Case(_erasure_by_id, NOT_FOUND),
    ("POST", "/api/v1/exports"): Case(_r(json=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("GET", "/api/v1/exports"): Case(_export_by_id, NOT_FOUND),
    ("GET", "/api/v1/compliance/decisions"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("GET", "/api/v1/emails"): Case(_r(), "lists the caller's own businesses' emails"),
    # evals
    ("POST", "/api/v1/evals"): Case(_r(json=lambda w: {"agent_id": w.agent, "business_id": w.a_business,
                                                       "name": "hours.open", "messages": SCENARIO}), FORBIDDEN),
    ("GET", "/api/v1/evals"): Case(_eval_by_id, NOT_FOUND),
    ("PATCH", "/api/v1/evals"): Case(_patch_eval, NOT_FOUND),
    ("DELETE", "/api/v1/evals"): Case(_eval_by_id, NOT_FOUND),
    ("POST", "/api/v1/evals/run"): Case(_fan_out, NOT_FOUND),
    ("GET", "/api/v1/evals/run"): Case(_eval_run, NOT_FOUND),
    # communication runs
    ("POST", "/api/v1/communication-runs/validate"): Case(_r(json=_run), FORBIDDEN),
    ("POST", "/api/v1/communication-runs/preview"): Case(_r(json=_run), FORBIDDEN),
    ("POST", "/api/v1/communication-runs"): Case(_create_run, FORBIDDEN),
    ("GET", "/api/v1/communication-runs"): Case(_run_by_id, NOT_FOUND),
    ("PATCH", "/api/v1/communication-runs"): Case(_pause_run, NOT_FOUND),
    ("GET", "/api/v1/communication-jobs"): Case(_r(), "lists the caller's own businesses' jobs"),
    ("GET", "/api/v1/communication-attempts"): Case(_r(), "lists the caller's own businesses' attempts"),
    # the sales pipeline
    ("GET", "/api/sdr/pipeline"): Case(_r(params=lambda w: {"businessId": w.a_business}), FORBIDDEN),
    ("GET", "/api/sdr/config"): Case(_r(params=lambda w: {"businessId": w.a_business}), FORBIDDEN),
    ("PUT", "/api/sdr/config"): Case(_r(json=lambda w: {"businessId": w.a_business, "max_touches": 5}), FORBIDDEN),
    ("POST", "/api/sdr/action"): Case(_r(json=lambda w: {"businessId": w.a_business, "leadId": w.lead,
                                                         "action": "skip"}), FORBIDDEN),
    ("POST", "/api/sdr/run"): Case(_sdr_dry_run, FORBIDDEN),
    ("GET", "/api/sdr/report"): Case(_r(params=lambda w: {"businessId": w.a_business}), FORBIDDEN),
    ("GET", "/api/sdr/activity"): Case(_r(params=lambda w: {"businessId": w.a_business, "leadId": w.lead}),
                                       FORBIDDEN),
    # analytics
    ("GET", "/api/v1/analytics/dashboard"): Case(_r(), OWN_REPORTS),
    ("GET", "/api/v1/analytics/calls"): Case(_r(params=lambda w: {"agent_id": w.agent}), NOT_FOUND),
    ("GET", "/api/v1/analytics/funnel"): Case(_r(), OWN_REPORTS),
    ("GET", "/api/v1/analytics/agents"): Case(_r(params=lambda w: {"agent_id": w.agent}), NOT_FOUND),
    ("GET", "/api/v1/analytics/weekly"): Case(_r(), OWN_REPORTS),
    ("GET", "/api/v1/analytics/businesses"): Case(_r(), OWN_REPORTS),
    # webhooks and events
    ("POST", "/api/v1/webhooks"): Case(_r(json=lambda w: {"business_id": w.a_business,
                                                          "events": ["dispatcher.briefing_created"],
                                                          "webhook_url": "http://127.0.0.1:9/other"}), FORBIDDEN),
    ("GET", "/api/v1/webhooks"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("DELETE", "/api/v1/webhooks"): Case(_delete_webhook, FORBIDDEN),
    ("POST", "/api/v1/webhooks/test"): Case(_r(json=lambda w: {"business_id": w.a_business, "id": w.webhook}),
                                            FORBIDDEN),
    ("POST", "/api/v1/webhooks/rotate-secret"): Case(_r(json=lambda w: {"business_id": w.a_business,
                                                                        "id": w.webhook}), FORBIDDEN),
    ("GET", "/api/v1/webhooks/call-secret"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("POST", "/api/v1/webhooks/call-secret"): Case(_r(json=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("GET", "/api/v1/events"): Case(_r(params=lambda w: {"business_id": w.a_business}), FORBIDDEN),
    ("GET", "/api/v1/webhooks/deliveries"): Case(_r(params=lambda w: {"business_id": w.a_business,
                                                                      "webhook_id": w.webhook}), FORBIDDEN),
    ("POST", "/api/v1/events/replay"): Case(_r(json=lambda w: {"business_id": w.a_business, "webhook_id": w.webhook,
                                                               "since": "2026-01-01T00:00:00Z"}), FORBIDDEN),
    # the assistant connector: a tool that reads A's call answers another account an isError not_found result
    ("POST", "/api/mcp"): Case(_r(json=lambda w: _rpc("tools/call", _call_status(w))), CONNECTOR),
    ("POST", "/api/mcp/initialize"): Case(_r(json={}), "the handshake: no records"),
    ("POST", "/api/mcp/tools/list"): Case(_r(), "the tool list: no records"),
    ("POST", "/api/mcp/tools/call"): Case(_r(json=_call_status), CONNECTOR),
}

# Routes whose scope depends on the body (a lifecycle action, a connector tool): the body of each branch and the
# scope it needs, for the scope matrix; the JSON-RPC endpoint reports a refusal's public code in error.data.
SCOPE_BRANCHES: dict[tuple[str, str], list[tuple[dict, str]]] = {
    ("PATCH", "/api/v1/workspaces"): [({"name": "Renamed"}, "workspaces:write"), ({"action": "pause"}, "lifecycle:write")],
    ("POST", "/api/mcp/tools/call"): [({}, "calls:read"), ({"name": "list_agents", "arguments": {}}, "agents:read")],
    ("POST", "/api/mcp"): [({}, "calls:read")],
}

# The same records named by id alone (no business_id): the other account's key then addresses its own
# business, where A's ids do not exist.
BY_ID_ALONE: dict[str, tuple[str, str, Recipe]] = {
    "phone number": ("GET", "/api/v1/phone-numbers", _r(params=lambda w: {"phone_number": w.number})),
    "webhook deletion": ("DELETE", "/api/v1/webhooks", _delete_webhook_by_id),
    "webhook test": ("POST", "/api/v1/webhooks/test", _r(json=lambda w: {"id": w.webhook})),
    "webhook rotation": ("POST", "/api/v1/webhooks/rotate-secret", _r(json=lambda w: {"id": w.webhook})),
    "webhook replay": ("POST", "/api/v1/events/replay",
                       _r(json=lambda w: {"webhook_id": w.webhook, "since": "2026-01-01T00:00:00Z"})),
    "deliveries of a webhook": ("GET", "/api/v1/webhooks/deliveries", _r(params=lambda w: {"webhook_id": w.webhook})),
    "leads of an agent": ("GET", "/api/v1/leads", _r(params=lambda w: {"agent_id": w.agent})),
    "calls of an agent": ("GET", "/api/v1/calls", _r(params=lambda w: {"agent_id": w.agent})),
    "transcripts of an agent": ("GET", "/api/v1/transcripts", _r(params=lambda w: {"agent_id": w.agent})),
    "a call through the connector": ("POST", "/api/mcp/tools/call", _r(json=lambda w: _call_status(w))),
}

# Routes that need neither a key nor a session: no account's data behind them.
PUBLIC = {("POST", "/api/v1/signup"): "creates a new account", ("GET", "/api/v1/openapi.json"): "the document",
          ("GET", "/api/v1/schemas"): "the schemas",
          ("POST", "/api/v1/providers/voice/messages"): "the voice provider's messages, authenticated by signature",
          ("GET", "/api/v1/recordings/audio"): "a signed recording link: the signature is the credential",
          ("GET", "/api/v1/exports/download"): "a signed export link: the signature is the credential (another "
                                                "business's key or session sent along is refused 404)",
          ("POST", "/api/v1/providers/sms/status"): "the messaging provider's callbacks, authenticated by signature",
          ("POST", "/api/v1/providers/sms/inbound"): "the messaging provider's texts, authenticated by signature",
          ("POST", "/api/v1/providers/payments/events"): "the payment provider's events, authenticated by signature",
          ("GET", "/.well-known/oauth-protected-resource"): "the connector's sign-in metadata",
          ("GET", "/.well-known/oauth-protected-resource/api/mcp"): "the connector's sign-in metadata",
          ("GET", "/.well-known/oauth-authorization-server"): "the sign-in server's metadata",
          ("GET", "/.well-known/openid-configuration"): "the sign-in server's metadata",
          ("POST", "/oauth/register"): "registers a public OAuth client (no account's data)",
          ("POST", "/oauth/token"): "OAuth: the code or refresh token is the credential",
          ("POST", "/api/sdr/runner"): "the scheduled runner: the server secret is the credential",
          ("POST", "/oauth/revoke"): "OAuth: the token to revoke is the credential"}

