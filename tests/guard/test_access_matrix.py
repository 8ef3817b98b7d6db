"""Tenancy and scope matrices generated from the route table (cases in tests/guard/access_cases.py).

- Tenancy: another account's key (or dashboard session) sent with account A's ids gets 404 not_found, or
  403 forbidden where the request names A's business; its reply holds none of A's ids and A's records do
  not change. A's own key then succeeds with the same request, which proves the request addressed real
  records.
- Scopes: a key of A holding every scope but the route's gets 403 forbidden naming the scope, and changes
  nothing.
- Coverage: a route missing from the cases (or a case whose route is gone) fails, so no route can be
  added without its entry.
"""
from __future__ import annotations

import json
import uuid

import pytest

from core.scopes import ALL_SCOPES
from gateway.route import KEY, PUBLIC, SESSION
from gateway.route_table import all_routes
from tests.billing import change_plan, provider_events_applied
from tests.guard.access_cases import BY_ID_ALONE, CASES, FORBIDDEN, NOT_FOUND, SCOPE_BRANCHES, World
from tests.guard.access_cases import PUBLIC as PUBLIC_ROUTES
from tests.waiting import wait_until

ROUTES = {(r.method, r.path): r for r in all_routes()}


def test_every_route_has_a_matrix_entry():
    missing = [f"{m} {p}" for (m, p), r in ROUTES.items() if r.auth != PUBLIC and (m, p) not in CASES]
    assert not missing, f"routes without a tenancy/scope case in tests/guard/access_cases.py: {missing}"
    public = {k for k, r in ROUTES.items() if r.auth == PUBLIC}
    assert public == set(PUBLIC_ROUTES), "public routes must be listed (and only they) in access_cases.PUBLIC"
    stale = [f"{m} {p}" for m, p in CASES if (m, p) not in ROUTES]
    assert not stale, f"cases for routes that no longer exist: {stale}"
    sessions = {k for k, r in ROUTES.items() if r.auth == SESSION}
    assert sessions == {k for k, c in CASES.items() if c.session}
    by_body = {k for k, r in ROUTES.items() if callable(r.scope)}
    assert by_body <= set(SCOPE_BRANCHES), "a route whose scope depends on the body needs its SCOPE_BRANCHES"


@pytest.fixture(scope="module")
async def world(api, stack):
    emails = {n: f"tenant-{n}-{uuid.uuid4().hex[:8]}@example.com" for n in "ab"}
    a = await api.signup(business_name="Tenant A", email=emails["a"])
    b = await api.signup(business_name="Tenant B", email=emails["b"])
    a_dash, b_dash = await api.dashboard(a), await api.dashboard(b)
    w = World(api=api, a_key=(await a_dash.create_key(name="a", scopes=["*"]))["key"], a_business=a["business_id"],
              a_dashboard=a_dash, b_key=(await b_dash.create_key(name="b", scopes=["*"]))["key"], b_dashboard=b_dash,
              sign_in=lambda which: api.sign_in_by_mail(stack, emails[which]))
    # A's cases create several workspaces: more than the starter plan allows one account.
    await change_plan(api, w.a_key, w.a_business, "growth")
    w.agent = (await w.ok("POST", "/api/v1/agents", json={"business_id": w.a_business, "name": "Desk",
                                                          "system_prompt": "Answer the phone."}))["id"]
    w.lead = (await w.ok("POST", "/api/v1/leads", json={"business_id": w.a_business, "name": "Ann",
                                                         "phone": "+14155550123", "agent_id": w.agent}))["id"]
    w.webhook = await w.new_webhook()
    w.number = await w.new_number()
    # A call that nobody answers: it settles at once, so the snapshots below never see it move.
    w.call = (await w.ok("POST", "/api/v1/calls", json={"agent_id": w.agent, "to": "+14155550001"}))["id"]
    await wait_until(lambda: w.ok("GET", "/api/v1/calls", params={"id": w.call}), "A's unanswered call to end",
                     lambda call: call["ended_reason"])
    # B's key limited to its first business: ids sent alone then address that business.
    w.b_bound_key = (await b_dash.create_key(name="b1", scopes=["*"], business_id=b["business_id"]))["key"]
    await provider_events_applied(api, w.a_business)  # the trial's and the plan change's: A's records quiet
    yield w
    await a_dash.close()
    await b_dash.close()


async def snapshot(w: World) -> str:
    """A's records as A's own key reads them (volatile fields left out)."""
    reads = [("/api/v1/workspaces", {}), ("/api/v1/agents", {"id": w.agent}),
             ("/api/v1/agents/versions", {"agent_id": w.agent}), ("/api/v1/leads", {}),
             ("/api/v1/phone-numbers", {"business_id": w.a_business}),
             ("/api/v1/webhooks", {"business_id": w.a_business}), ("/api/v1/calls", {"id": w.call}),
             ("/api/v1/sms/conversations", {}), ("/api/v1/dnc", {"business_id": w.a_business}),
             ("/api/v1/sms/consent", {"business_id": w.a_business, "phone": "+14155550100"}),
             ("/api/v1/emails", {"limit": "100"}), ("/api/v1/evals", {"agent_id": w.agent, "limit": "100"})]
    state = {path: await w.ok("GET", path, params=params) for path, params in reads}
    for thread in state["/api/v1/sms/conversations"]["conversations"]:
        thread.pop("last_message_status")  # the positive control's text moves on to delivered by itself
    # An approved email goes out by itself: its identity is what must not change. The owner's notifications of
    # the positive controls' agent changes arrive later by themselves, so only callers' emails count.
    state["/api/v1/emails"] = sorted((e["id"], e["to"], e["subject"]) for e in state["/api/v1/emails"]["emails"]
                                     if e["kind"] == "api")
    status, keys, _ = await w.a_dashboard.request("GET", "/api/v1/keys")
    state["keys"] = [{k: v for k, v in key.items() if k != "last_used_at"} for key in keys["keys"]]
    return json.dumps(state, sort_keys=True)


def a_ids(w: World) -> list[str]:
    return [w.a_business, w.agent, w.lead, w.webhook, w.call]


async def send(w: World, method: str, path: str, request, *, key: str | None = None, session=None):
    client = session or w.api
    return await client.request(method, path, key=None if session else key, params=request.params,
                                json=request.json, headers=request.headers)


@pytest.mark.parametrize("route", sorted(CASES), ids=lambda r: f"{r[0]} {r[1]}")
async def test_another_account_reaches_none_of_the_records(world, route):
    case = CASES[route]
    request = await case.recipe(world)
    a_session, b_session = world.a_dashboard, world.b_dashboard
    if case.ends_session:
        a_session, b_session = await world.sign_in("a"), await world.sign_in("b")
    before = await snapshot(world)
    status, body, _ = await send(world, *route, request, key=world.b_key,
                                 session=b_session if case.session else None)
    assert not any(i in json.dumps(body) for i in a_ids(world)), (route, body)
    if case.other_account in (NOT_FOUND, FORBIDDEN):
        expected = {NOT_FOUND: 404, FORBIDDEN: 403}[case.other_account]
        assert (status, body["error"]["code"]) == (expected, case.other_account), (route, body)
    else:
        assert 200 <= status < 300, (route, body)  # the other account's own view, without A's records
    assert await snapshot(world) == before, f"{route} changed the first account's records"
    # The positive control: the owner's own request succeeds.
    status, body, _ = await send(world, *route, request, key=world.a_key,
                                 session=a_session if case.session else None)
    assert 200 <= status < 300, (route, body)
    # A workspace it made is a unit more on A's subscription: the provider's events of it move A's workspaces
    # after the answer, so they are applied before the next case snapshots A's records.
    await provider_events_applied(world.api, world.a_business)
    await world.erasures_over()  # an erasure it started runs after the answer, as the provider's events are applied
    if case.ends_session:
        await a_session.close()
        await b_session.close()


@pytest.mark.parametrize("name", sorted(BY_ID_ALONE))
async def test_ids_alone_do_not_cross_accounts(world, name):
    method, path, recipe = BY_ID_ALONE[name]
    request = await recipe(world)
    before = await snapshot(world)
    status, body, _ = await send(world, method, path, request, key=world.b_bound_key)
    assert not any(i in json.dumps(body) for i in a_ids(world)), (name, body)
    listing = isinstance(body, dict) and "error" not in body
    assert listing or (status, body["error"]["code"]) == (404, NOT_FOUND), (name, body)
    assert await snapshot(world) == before
    # The owner names its business: by now its key spans two (the workspace case made one).
    route = ROUTES[(method, path)]
    if request.json is not None and "business_id" in route.body["properties"]:
        request.json = {**request.json, "business_id": world.a_business}
    elif "business_id" in (route.query or {}).get("properties", {}):
        request.params = {**request.params, "business_id": world.a_business}
    status, body, _ = await send(world, method, path, request, key=world.a_key)
    assert 200 <= status < 300, (name, body)
    await provider_events_applied(world.api, world.a_business)  # as the tenancy cases' positive controls


def _scope_cases():
    for (method, path), route in sorted(ROUTES.items()):
        if route.auth != KEY:
            continue
        if (method, path) in SCOPE_BRANCHES:  # the body decides: one case per branch
            for body, scope in SCOPE_BRANCHES[(method, path)]:
                yield method, path, body, scope
        else:
            yield method, path, None, route.scope


@pytest.mark.parametrize("method, path, body, scope", list(_scope_cases()),
                         ids=lambda v: v if isinstance(v, str) else "")
async def test_a_key_without_the_scope_is_refused(world, method, path, body, scope):
    cache = world.keys_without
    if scope not in cache:
        others = [s for s in ALL_SCOPES if s not in ("*", scope)] if scope else ["sms:read"]
        cache[scope] = (await world.a_dashboard.create_key(name=f"without {scope}", scopes=others))["key"]
    req = await CASES[(method, path)].recipe(world)
    if body is not None:
        req.json = {**req.json, **body}
    before = await snapshot(world)
    status, reply, _ = await send(world, method, path, req, key=cache[scope])
    if scope is None:  # any valid key
        assert status == 200, reply
        return
    code = reply["error"]["code"]
    if isinstance(code, int):  # a JSON-RPC error: the public code is in its data
        code = reply["error"]["data"]["code"]
    assert (status, code) == (403, FORBIDDEN), reply
    assert scope in reply["error"]["message"]
    assert await snapshot(world) == before
