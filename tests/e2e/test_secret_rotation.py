"""Rotating the server secret (issue 51): keys and sessions made under the old secret, and keys stored before hashes
had versions, still authenticate once the accounts service is given a new SWITCHBOARD_SECRET_KEY with the old one
as SWITCHBOARD_SECRET_KEY_PREVIOUS, and move to the new version at their first use; once the previous secret is
gone, what never moved is refused. The rotated accounts service is a replica of its own behind a gateway replica of
its own (ACCOUNTS_ADDR), so the stack's processes keep their settings."""
import hashlib
import hmac
import uuid

import pytest

from gateway.dashboard.session_cookie import PLAIN_NAME
from tests.api import Api
from tests.waiting import wait_until

ROTATED = "a-new-server-secret-for-the-rotation-test"


@pytest.fixture
async def rotated(api, stack):
    """`await rotated(env)`: a client of a gateway whose accounts service runs with `env` over its settings (the
    previous one, if any, stopped); all stopped after the test."""
    started = []

    async def start(env: dict[str, str]) -> Api:
        for process in started:
            stack.stop_process(process)
        suffix = uuid.uuid4().hex[:6]
        accounts = stack.add_replica("accounts", f"accounts-rotated-{suffix}", env)
        gateway = stack.add_gateway(f"gateway-rotated-{suffix}", {"ACCOUNTS_ADDR": f"127.0.0.1:{accounts.port}"})
        started.extend((accounts, gateway))
        client = Api(api.session, f"http://127.0.0.1:{gateway.port}", stack.database_url)

        async def ready() -> int:
            return (await client.request("GET", "/readyz"))[0]
        await wait_until(ready, "the rotated gateway to be ready", lambda status: status == 200)
        return client

    yield start
    for process in started:
        stack.stop_process(process)
        stack.processes.remove(process)


async def stored_hash(db, key: str) -> str:
    return await db.fetchval("SELECT key_hash FROM accounts.api_keys WHERE prefix = $1", key[:12])


async def authenticates(client: Api, key: str) -> bool:
    status, body, _ = await client.request("GET", "/api/v1/workspaces", key=key)
    assert status in (200, 401), body
    return status == 200


async def test_keys_and_sessions_outlive_a_rotation_of_the_server_secret(api, account, stack, db, rotated):
    dashboard, old = account["dashboard"], stack.secret_key()
    [session] = [c.value for c in dashboard.session.cookie_jar if c.key == PLAIN_NAME]
    signed_in = {PLAIN_NAME: session}
    used, unused = account["key"], (await dashboard.create_key(name="unused", scopes=["*"]))["key"]
    assert (await stored_hash(db, used)).startswith("v1:")
    # Two keys as they were stored before hashes had versions: HMAC-SHA256 under the server secret itself.
    legacy, forgotten = [(await dashboard.create_key(name=name, scopes=["*"]))["key"] for name in ("legacy", "gone")]
    for key in (legacy, forgotten):
        await db.execute("UPDATE accounts.api_keys SET key_hash = $1 WHERE prefix = $2",
                         hmac.new(old.encode(), key.encode(), hashlib.sha256).hexdigest(), key[:12])
    assert await authenticates(api, legacy) and await authenticates(api, used)

    after = await rotated({"SWITCHBOARD_SECRET_KEY": ROTATED, "SWITCHBOARD_SECRET_KEY_VERSION": "2",
                           "SWITCHBOARD_SECRET_KEY_PREVIOUS": old})
    for key in (used, unused, legacy):
        assert await authenticates(after, key), key[:12]
        assert (await stored_hash(db, key)).startswith("v2:")  # moved over at its first use
    status, keys, _ = await after.request("GET", "/api/v1/keys", cookies=signed_in)
    assert status == 200, keys  # the session made before the rotation
    status, made, _ = await after.request("POST", "/api/v1/keys", cookies=signed_in, json={"scopes": ["*"]})
    assert status == 201, made
    assert (await stored_hash(db, made["key"])).startswith("v2:") and await authenticates(after, made["key"])

    # The next rotation lets version 1 go: what moved over still works, a key never used since is refused.
    later = await rotated({"SWITCHBOARD_SECRET_KEY": ROTATED + "-3", "SWITCHBOARD_SECRET_KEY_VERSION": "3",
                           "SWITCHBOARD_SECRET_KEY_PREVIOUS": ROTATED})
    assert await authenticates(later, used) and await authenticates(later, made["key"])
    assert (await later.request("GET", "/api/v1/keys", cookies=signed_in))[0] == 200
    assert not await authenticates(later, forgotten)
