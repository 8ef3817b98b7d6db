"""Rotating the server secret (issue 51): keys and sessions made under the old secret, and keys stored before hashes
had versions, still authenticate after the accounts service is given a new SWITCHBOARD_SECRET_KEY with the old one
as SWITCHBOARD_SECRET_KEY_PREVIOUS, and move to the new version at their first use; once the previous secret is
gone, what never moved is refused. The stack's accounts service and gateway are restarted with the rotated
settings, and with their own again at the end."""
import hashlib
import hmac

import pytest

from tests.api import Api

ROTATED = "a-new-server-secret-for-the-rotation-test"


@pytest.fixture
def restart(stack):
    """`restart(env)`: the accounts service (with `env` over its settings) and the gateway started again (the
    gateway's cached principals go with it); both as the stack made them after the test."""
    names = ("accounts", "gateway")

    def start(env: dict[str, str]) -> None:
        for name in names:
            stack.stop_process(stack.process(name))
        stack.process("accounts").env.update(env)
        for name in names:
            stack.spawn(stack.process(name))
        stack.wait_ready(60)

    yield start
    accounts = stack.process("accounts")
    for variable in ("SWITCHBOARD_SECRET_KEY", "SWITCHBOARD_SECRET_KEY_VERSION", "SWITCHBOARD_SECRET_KEY_PREVIOUS"):
        accounts.env.pop(variable, None)
    start({})


async def stored_hash(db, key: str) -> str:
    return await db.fetchval("SELECT key_hash FROM accounts.api_keys WHERE prefix = $1", key[:12])


async def authenticates(api: Api, key: str) -> bool:
    status, body, _ = await api.request("GET", "/api/v1/workspaces", key=key)
    assert status in (200, 401), body
    return status == 200


async def test_keys_and_sessions_outlive_a_rotation_of_the_server_secret(api, account, stack, db, restart):
    dashboard, old = account["dashboard"], stack.secret_key()
    used, unused = account["key"], (await dashboard.create_key(name="unused", scopes=["*"]))["key"]
    assert (await stored_hash(db, used)).startswith("v1:")
    # Two keys as they were stored before hashes had versions: HMAC-SHA256 under the server secret itself.
    legacy, forgotten = [(await dashboard.create_key(name=name, scopes=["*"]))["key"] for name in ("legacy", "gone")]
    for key in (legacy, forgotten):
        await db.execute("UPDATE accounts.api_keys SET key_hash = $1 WHERE prefix = $2",
                         hmac.new(old.encode(), key.encode(), hashlib.sha256).hexdigest(), key[:12])
    assert await authenticates(api, legacy) and await authenticates(api, used)

    restart({"SWITCHBOARD_SECRET_KEY": ROTATED, "SWITCHBOARD_SECRET_KEY_VERSION": "2",
             "SWITCHBOARD_SECRET_KEY_PREVIOUS": old})
    for key in (used, unused, legacy):
        assert await authenticates(api, key), key[:12]
        assert (await stored_hash(db, key)).startswith("v2:")  # moved over at its first use
    status, keys, _ = await dashboard.request("GET", "/api/v1/keys")
    assert status == 200, keys  # the session made before the rotation
    made_after = (await dashboard.create_key(name="after", scopes=["*"]))["key"]
    assert (await stored_hash(db, made_after)).startswith("v2:") and await authenticates(api, made_after)

    # The next rotation lets version 1 go: what moved over still works, a key never used since is refused.
    restart({"SWITCHBOARD_SECRET_KEY": ROTATED + "-3", "SWITCHBOARD_SECRET_KEY_VERSION": "3",
             "SWITCHBOARD_SECRET_KEY_PREVIOUS": ROTATED})
    assert await authenticates(api, used) and await authenticates(api, made_after)
    status, keys, _ = await dashboard.request("GET", "/api/v1/keys")
    assert status == 200, keys
    assert not await authenticates(api, forgotten)
