"""A PostgreSQL restart under load: once it accepts connections again, the stack fails no request.

Every pooled connection a process holds dies with the restart; each is replaced when next checked out
(core.db: the engine's checkout, asyncpg's acquire), so no request after the restart meets a dead one. The
stream mixes a read served on the raw asyncpg pool (the workspaces) and one served through SQLAlchemy's engine
in a transaction (the texts: tests/guard/cost_budget_table.py counts its transaction). The other services are
left idle through the restart, as at night: their pools hold only dead connections when their first request
after it comes, and it must not be the one that finds out (without the check on checkout, it was)."""
import asyncio
import time

import aiohttp
import pytest

READS = ("/api/v1/workspaces", "/api/v1/sms/messages")
IDLE = ("/api/v1/leads", "/api/v1/calls", "/api/v1/evals", "/api/v1/webhooks", "/api/v1/agents")
PER_SECOND = 20
GRACE_SECONDS = 1.0  # requests sent this soon after the server is back may still fail
AFTER_SECONDS = 6.0


async def test_no_request_fails_a_second_after_postgresql_is_back(stack, api, account):
    if stack.postgres is None:
        pytest.skip("the stack's PostgreSQL is external (DATABASE_URL): the launcher cannot restart it")
    key = account["key"]
    for path in (*READS, *IDLE):  # every pool on the way holds connections, which the restart will kill
        for _ in range(3):
            status, body, _ = await api.request("GET", path, key=key)
            assert status == 200, (path, body)
    sent: list[tuple[float, float, str, int]] = []  # (sent, answered, path, status; 0: no answer)
    done = asyncio.Event()

    async def stream() -> None:
        n = 0
        while not done.is_set():
            path, at = READS[n % len(READS)], time.monotonic()
            n += 1
            try:
                status = (await api.request("GET", path, key=key))[0]
            except aiohttp.ClientError:
                status = 0
            sent.append((at, time.monotonic(), path, status))
            await asyncio.sleep(1 / PER_SECOND)

    reads = asyncio.create_task(stream())
    await asyncio.sleep(1)
    restarted_at = time.monotonic()
    await asyncio.to_thread(stack.restart_postgres)
    back = time.monotonic()
    await asyncio.sleep(GRACE_SECONDS)
    first_after = {path: (await api.request("GET", path, key=key))[0] for path in IDLE}
    await asyncio.sleep(AFTER_SECONDS - GRACE_SECONDS)
    done.set()
    await reads

    assert first_after == dict.fromkeys(IDLE, 200)

    # a request still in flight when the restart began may fail: only those answered before it must not
    before = [status for _, answered, _, status in sent if answered < restarted_at]
    assert before and all(status == 200 for status in before), before
    after = [(round(at - back, 2), path, status) for at, _, path, status in sent if at >= back + GRACE_SECONDS]
    assert len(after) >= 2 * (AFTER_SECONDS - GRACE_SECONDS), len(after)  # the stream went on (however loaded the machine)
    assert {path for _, path, _ in after} == set(READS)
    assert [request for request in after if not 200 <= request[2] < 300] == []
