"""/api/v1/keys: dashboard-session key management, revocation and expiry."""
import asyncio
import uuid
from datetime import UTC

from tests.waiting import wait_until


async def test_keys_refuse_bearer_keys_and_anonymous_callers(api, account):
    status, body, _ = await api.request("GET", "/api/v1/keys", key=account["key"])
    assert status == 401 and body["error"]["code"] == "unauthorized"
    status, body, _ = await api.request("GET", "/api/v1/keys")
    assert status == 401 and "magic link" in body["error"]["message"]


async def test_create_key_defaults_and_full_key_shown_once(api, account):
    dash = account["dashboard"]
    created = await dash.create_key()
    assert created["name"] == "Untitled Key"
    assert created["key"].startswith("svc_live_") and created["key"].startswith(created["prefix"])
    assert "workspaces:write" not in created["scopes"] and "workspaces:read" in created["scopes"]
    assert created["business_id"] is None and created["is_active"] is True
    status, listing, _ = await dash.request("GET", "/api/v1/keys")
    assert status == 200
    mine = [k for k in listing["keys"] if k["id"] == created["id"]]
    assert len(mine) == 1 and "key" not in mine[0]
    assert all("key" not in k and "key_hash" not in k for k in listing["keys"])
    # read-only default: writes are forbidden
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=created["key"], json={"name": "x"})
    assert status == 403 and "workspaces:write" in body["error"]["message"]


async def test_key_validation(api, account):
    dash = account["dashboard"]
    status, body, _ = await dash.request("POST", "/api/v1/keys", json={"scopes": ["workspaces:read", "root"]})
    assert status == 400 and "root" in body["error"]["message"]
    status, body, _ = await dash.request("POST", "/api/v1/keys", json={"scopes": []})
    assert status == 400
    other = await api.signup()
    status, body, _ = await dash.request("POST", "/api/v1/keys", json={"business_id": other["business_id"]})
    assert status == 403 and body["error"]["code"] == "forbidden"
    status, body, _ = await dash.request("PATCH", "/api/v1/keys", json={"id": "00000000-0000-0000-0000-000000000000",
                                                                         "name": "x"})
    assert status == 404
    # CSRF guard: session mutations must be JSON
    status, body, _ = await dash.request("POST", "/api/v1/keys", data="name=x",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400


async def test_revocation_takes_effect_on_the_next_request(api, account):
    dash = account["dashboard"]
    for how in ("delete", "patch"):
        created = await dash.create_key(scopes=["workspaces:read"])
        for _ in range(3):  # warm the gateway's principal cache
            assert (await api.request("GET", "/api/v1/workspaces", key=created["key"]))[0] == 200
        if how == "delete":
            status, body, _ = await dash.request("DELETE", "/api/v1/keys", params={"id": created["id"]},
                                                 headers={"X-Requested-With": "fetch"})
            assert status == 200 and body == {"success": True}
        else:
            status, body, _ = await dash.request("PATCH", "/api/v1/keys", json={"id": created["id"], "revoke": True})
            assert status == 200 and body["is_active"] is False
        status, body, _ = await api.request("GET", "/api/v1/workspaces", key=created["key"])
        assert status == 401 and body["error"]["code"] == "unauthorized"


async def test_expire_and_expiry_in_the_future(api, account):
    dash = account["dashboard"]
    created = await dash.create_key(scopes=["workspaces:read"])
    assert (await api.request("GET", "/api/v1/workspaces", key=created["key"]))[0] == 200
    status, body, _ = await dash.request("PATCH", "/api/v1/keys", json={"id": created["id"], "expire": True})
    assert status == 200 and body["is_active"] is False and body["expires_at"] is not None
    assert (await api.request("GET", "/api/v1/workspaces", key=created["key"]))[0] == 401

    from datetime import datetime, timedelta
    soon = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    short = await dash.create_key(scopes=["workspaces:read"], expires_at=soon)
    assert (await api.request("GET", "/api/v1/workspaces", key=short["key"]))[0] == 200
    await asyncio.sleep(2.2)
    assert (await api.request("GET", "/api/v1/workspaces", key=short["key"]))[0] == 401
    status, body, _ = await dash.request("POST", "/api/v1/keys", json={"expires_at": "2001-01-01T00:00:00Z"})
    assert status == 400


async def test_rename_rescope_and_business_restriction(api, account):
    dash = account["dashboard"]
    created = await dash.create_key(scopes=["workspaces:read"])
    status, body, _ = await dash.request("PATCH", "/api/v1/keys", json={
        "id": created["id"], "name": "ops", "scopes": ["workspaces:read", "workspaces:write"]})
    assert status == 200 and body["name"] == "ops" and "workspaces:write" in body["scopes"]
    # the new scope works on the next request (cache invalidated)
    status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=created["key"], json={"name": "Second"})
    assert status == 201, ws
    status, body, _ = await dash.request("PATCH", "/api/v1/keys", json={"id": created["id"],
                                                                         "business_id": account["business_id"]})
    assert status == 200 and body["business_id"] == account["business_id"]
    status, listing, _ = await api.request("GET", "/api/v1/workspaces", key=created["key"])
    assert [w["id"] for w in listing["workspaces"]] == [account["business_id"]]
    status, body, _ = await api.request("GET", "/api/v1/workspaces", key=created["key"], params={"id": ws["id"]})
    assert status == 404


async def test_another_account_cannot_touch_my_keys(api, account):
    mine = await account["dashboard"].create_key(scopes=["workspaces:read"])
    other_signup = await api.signup()
    other = await api.dashboard(other_signup)
    try:
        status, listing, _ = await other.request("GET", "/api/v1/keys")
        assert mine["id"] not in [k["id"] for k in listing["keys"]]
        status, _, _ = await other.request("PATCH", "/api/v1/keys", json={"id": mine["id"], "revoke": True})
        assert status == 404
        status, _, _ = await other.request("DELETE", "/api/v1/keys", params={"id": mine["id"]},
                                            headers={"X-Requested-With": "fetch"})
        assert status == 404
    finally:
        await other.close()
    assert (await api.request("GET", "/api/v1/workspaces", key=mine["key"]))[0] == 200


async def test_last_used_at_is_recorded_behind_the_request(api, account):
    dash = account["dashboard"]
    created = await dash.create_key(scopes=["workspaces:read"])
    assert (await api.request("GET", "/api/v1/workspaces", key=created["key"]))[0] == 200

    async def entry() -> dict:
        _, listing, _ = await dash.request("GET", "/api/v1/keys")
        return next(k for k in listing["keys"] if k["id"] == created["id"])
    await wait_until(entry, "the key's last_used_at", lambda k: k["last_used_at"] is not None, timeout=6, interval=0.2)


async def test_revocation_reaches_every_gateway_replica(api, account, stack):
    """Two replicas with warm caches: a revoke through one is refused by the other on its next request."""
    replica = stack.add_gateway(f"gateway-{uuid.uuid4().hex[:6]}")
    other = f"http://127.0.0.1:{replica.port}"

    async def listening() -> str:
        async with api.session.get(f"{other}/readyz") as r:
            return (await r.json())["nats"]
    await wait_until(listening, f"the replica {other}'s key cache to listen", lambda status: status == "ok")
    dash = account["dashboard"]
    created = await dash.create_key(scopes=["workspaces:read"])
    headers = {"Authorization": f"Bearer {created['key']}"}
    for _ in range(3):
        assert (await api.request("GET", "/api/v1/workspaces", key=created["key"]))[0] == 200
        async with api.session.get(f"{other}/api/v1/workspaces", headers=headers) as r:
            assert r.status == 200
    status, _, _ = await dash.request("DELETE", "/api/v1/keys", params={"id": created["id"]},
                                      headers={"X-Requested-With": "fetch"})
    assert status == 200
    async with api.session.get(f"{other}/api/v1/workspaces", headers=headers) as r:
        assert r.status == 401
        assert (await r.json())["error"]["code"] == "unauthorized"
