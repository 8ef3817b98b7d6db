"""/api/v1/workspaces: reads, pagination, updates, lifecycle, scopes and tenancy."""
import json

import nats
import pytest

from tests.billing import change_plan, provider_events_applied
from tests.nats_admin import admin_connection


async def test_create_read_and_update(api, account):
    key = account["key"]
    status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=key,
                                      json={"name": "Downtown", "metadata": {"region": "west", "tier": 1},
                                            "external_ref": "crm-42"})
    assert status == 201
    assert ws["name"] == "Downtown" and ws["lifecycle_state"] == "active" and ws["external_ref"] == "crm-42"
    # The provider's event of its addition to the subscription comes after the answer and touches it (updated_at):
    # read it once that is applied, so the comparison does not depend on which came first.
    await provider_events_applied(api, account["business_id"])
    status, got, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"id": ws["id"]})
    assert status == 200 and [{**w, "updated_at": ws["updated_at"]} for w in got["workspaces"]] == [ws]
    assert got["workspaces"][0]["updated_at"] >= ws["updated_at"]
    status, _, _ = await api.request("GET", f"/api/v1/workspaces/{ws['id']}", key=key)
    assert status == 404
    status, upd, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                       json={"id": ws["id"], "name": "Downtown West", "metadata": {"tier": 2, "x": True}})
    assert status == 200
    assert upd["name"] == "Downtown West"
    assert upd["metadata"] == {"region": "west", "tier": 2, "x": True}  # merged, not replaced
    assert isinstance(upd["metadata"]["tier"], int)
    assert upd["updated_at"] > ws["updated_at"] and upd["created_at"] == ws["created_at"]


async def test_pagination_newest_first(api, account):
    key = account["key"]
    await change_plan(api, key, account["business_id"], "growth")  # six workspaces: more than starter allows
    made = []
    for i in range(5):
        status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=key, json={"name": f"W{i}"})
        made.append(ws["id"])
    seen, after = [], None
    while True:
        params = {"limit": "2", **({"after": after} if after else {})}
        status, page, _ = await api.request("GET", "/api/v1/workspaces", key=key, params=params)
        assert status == 200 and len(page["workspaces"]) <= 2
        seen += [w["id"] for w in page["workspaces"]]
        if not page["has_more"]:
            break
        after = page["workspaces"][-1]["created_at"]
    assert seen == list(reversed(made)) + [account["business_id"]]
    for bad in ("0", "101", "ten"):
        status, body, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"limit": bad})
        assert status == 400 and body["error"]["code"] == "invalid_request"
    status, body, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"after": "yesterday"})
    assert status == 400 and "after" in body["error"]["message"]


async def test_lifecycle_moves_and_refusals(api, account):
    key, bid = account["key"], account["business_id"]

    async def act(action):
        return await api.request("PATCH", "/api/v1/workspaces", key=key, json={"id": bid, "action": action})

    status, body, _ = await act("teardown")
    assert status == 400 and "cancel it first" in body["error"]["message"]
    assert (await act("pause"))[1]["lifecycle_state"] == "paused"
    assert (await act("pause"))[1]["lifecycle_state"] == "paused"  # repeat: no-op
    assert (await act("resume"))[1]["lifecycle_state"] == "active"
    assert (await act("cancel"))[1]["lifecycle_state"] == "canceled"
    status, body, _ = await act("pause")
    assert status == 400 and body["error"]["code"] == "invalid_request"
    assert (await act("teardown"))[1]["lifecycle_state"] == "inactive"
    for action in ("resume", "pause", "cancel"):
        status, body, _ = await act(action)
        assert status == 400, action
    status, body, _ = await act("explode")
    assert status == 400 and "action" in body["error"]["message"]


async def test_lifecycle_events_reach_jetstream(api, account, stack):
    key, bid = account["key"], account["business_id"]
    nc = await admin_connection(stack)
    try:
        js = nc.jetstream()
        sub = await js.subscribe("events.workspace.*", ordered_consumer=True,
                                 deliver_policy=nats.js.api.DeliverPolicy.NEW)
        for action in ("pause", "resume", "cancel", "teardown"):
            status, _, _ = await api.request("PATCH", "/api/v1/workspaces", key=key, json={"id": bid, "action": action})
            assert status == 200
        received, standings = [], []
        while len(received) < 3 or len(standings) < 4:
            msg = await sub.next_msg(timeout=10)
            event = json.loads(msg.data)
            if event["business_id"] == bid:
                assert msg.headers["Nats-Msg-Id"] == event["event_id"]
                (standings if event["type"] == "workspace.standing_changed" else received).append(event)
        assert [e["type"] for e in received] == ["workspace.paused", "workspace.canceled", "workspace.teardown_completed"]
        # Internal: each change of what the workspace may spend (core.standing), resume included.
        assert [(e["data"]["previous_standing"], e["data"]["standing"]) for e in standings] == [
            ("trialing", "paused"), ("paused", "trialing"), ("trialing", "canceled"), ("canceled", "inactive")]
        assert received[-1]["data"]["lifecycle_state"] == "inactive"
        assert all(e["occurred_at"].endswith("Z") for e in received)
    finally:
        await nc.close()


async def test_scopes_for_updates(api, account):
    dash, bid = account["dashboard"], account["business_id"]
    writer = await dash.create_key(scopes=["workspaces:read", "workspaces:write"])
    lifecycle = await dash.create_key(scopes=["lifecycle:write"])
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=writer["key"], json={"id": bid, "action": "pause"})
    assert status == 403 and "lifecycle:write" in body["error"]["message"]
    status, _, _ = await api.request("PATCH", "/api/v1/workspaces", key=writer["key"], json={"id": bid, "name": "Renamed"})
    assert status == 200
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=lifecycle["key"], json={"id": bid, "name": "No"})
    assert status == 403
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=lifecycle["key"], json={"id": bid, "action": "pause"})
    assert status == 200 and body["lifecycle_state"] == "paused"
    status, _, _ = await api.request("GET", "/api/v1/workspaces", key=lifecycle["key"])
    assert status == 403


async def test_another_account_sees_nothing(api, account):
    other = await api.signup()
    other_dash = await api.dashboard(other)
    try:
        other_key = (await other_dash.create_key(scopes=["*"]))["key"]
    finally:
        await other_dash.close()
    bid = account["business_id"]
    status, listing, _ = await api.request("GET", "/api/v1/workspaces", key=other_key)
    assert [w["id"] for w in listing["workspaces"]] == [other["business_id"]]
    status, body, _ = await api.request("GET", "/api/v1/workspaces", key=other_key, params={"id": bid})
    assert status == 404 and body["error"]["code"] == "not_found"
    for change in ({"name": "Hijacked"}, {"action": "pause"}, {"metadata": {"a": 1}}):
        status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=other_key, json={"id": bid, **change})
        assert status == 404, change
    status, caps, _ = await api.request("GET", "/api/v1/capabilities", key=other_key)
    assert bid not in [w["id"] for w in caps["workspaces"]]
    status, bal, _ = await api.request("GET", "/api/v1/balance", key=other_key)
    assert [b["business_id"] for b in bal["businesses"]] == [other["business_id"]]
    status, mine, _ = await api.request("GET", "/api/v1/workspaces", key=account["key"], params={"id": bid})
    assert mine["workspaces"][0]["name"] == "Acme Plumbing" and mine["workspaces"][0]["lifecycle_state"] == "active"


async def test_business_bound_key_cannot_create_workspaces(api, account):
    bound = await account["dashboard"].create_key(scopes=["*"], business_id=account["business_id"])
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=bound["key"], json={"name": "Sneaky"})
    assert status == 403 and body["error"]["code"] == "forbidden"


async def test_new_workspace_is_visible_to_account_wide_key_at_once(api, account):
    key = account["key"]
    assert (await api.request("GET", "/api/v1/workspaces", key=key))[0] == 200  # cache the principal
    status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=key, json={"name": "Fresh"})
    status, got, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"id": ws["id"]})
    assert status == 200 and got["workspaces"][0]["id"] == ws["id"]


@pytest.mark.parametrize("body, fragment, code", [
    ({}, "id is required", "bad_request"),
    ({"id": "not-a-uuid"}, "id", "invalid_request"),
    ({"id": "00000000-0000-0000-0000-000000000000", "name": ""}, "name", "invalid_request"),
    ({"id": "00000000-0000-0000-0000-000000000000", "metadata": "x"}, "metadata", "invalid_request"),
])
async def test_update_validation(api, account, body, fragment, code):
    status, reply, _ = await api.request("PATCH", "/api/v1/workspaces", key=account["key"], json=body)
    assert status == 400 and reply["error"]["code"] == code
    assert fragment in reply["error"]["message"]
