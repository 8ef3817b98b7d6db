"""The launcher's supervision and the faults a soak injects (deploy.local.stack: kill, pause, restart_nats), on the
session's stack with supervision turned on for each test (and off again after it, every process running)."""
import asyncio
import time
from pathlib import Path

import aiohttp
import pytest

from deploy.local.servers import port_is_free, wait_for_port
from deploy.local.supervision import FIRST_DELAY_SECONDS
from tests import supervising
from tests.lead_events import lead_ids, lead_named, subscribe
from tests.nats_admin import admin_connection
from tests.receiver import Receiver
from tests.waiting import wait_until


@pytest.fixture
async def supervised(stack):
    async with supervising.supervised(stack, 60) as s:
        yield s


def state(pid: int) -> str:
    """The process's state letter in /proc (T: stopped by a signal)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


async def test_a_killed_service_is_started_again_on_its_port_and_serves(supervised, api, account):
    accounts = supervised.process("accounts")
    killed, port, log_before = accounts.proc, accounts.port, accounts.log.read_bytes()
    restarts = supervised.restarts.get("accounts", 0)
    supervised.kill("accounts")
    assert await asyncio.to_thread(killed.wait, 10) == -9
    await wait_until(lambda: accounts.proc is not killed, "the supervisor to start accounts again", timeout=15)
    await wait_until(lambda: api.request("GET", "/api/v1/balance", key=account["key"]),
                     "the balance to be served again", lambda r: r[0] == 200, timeout=60, interval=0.2)
    assert accounts.port == port and not port_is_free(port) and accounts.proc.poll() is None
    assert supervised.restarts["accounts"] == restarts + 1
    log = accounts.log.read_bytes()
    assert log.startswith(log_before)  # the crashed process's output is kept, the new one's appended
    assert f"accounts exited (signal SIGKILL); restart {restarts + 1} in ".encode() in log[len(log_before):]


async def test_a_process_the_stack_stopped_is_not_started_again(supervised):
    catchall = supervised.process("mail-catchall")
    supervised.stop_process(catchall)
    try:
        await asyncio.sleep(FIRST_DELAY_SECONDS + 2)  # well past the first backoff and several of the supervisor's looks
        assert catchall.proc.poll() is not None and port_is_free(catchall.port)
        assert "mail-catchall" not in supervised.restarts
    finally:
        supervised.spawn(catchall)
        await asyncio.to_thread(wait_for_port, catchall.port, 30, catchall.proc, catchall.name, catchall.log)


async def test_the_streams_survive_a_nats_restart_and_events_flow_after_it(supervised, api, account):
    if supervised.nats is None:
        pytest.skip("NATS_URL points at an external server the launcher cannot restart")
    restarts = dict(supervised.restarts)
    receiver = await Receiver().start()
    try:
        await subscribe(api, account, receiver.url)
        before = await lead_named(api, account, "Before the restart")
        await receiver.wait_for(1)
        conn = await admin_connection(supervised)
        stored = await conn.jetstream().get_msg("EVENTS", subject="events.lead.created")
        await conn.close()
        assert before in stored.data.decode()

        await asyncio.to_thread(supervised.restart_nats, 1.0)
        conn = await admin_connection(supervised)
        try:
            kept = await wait_until(lambda: conn.jetstream().get_msg("EVENTS", seq=stored.seq),
                                    "JetStream to serve the EVENTS stream again", timeout=20)
        finally:
            await conn.close()
        assert kept.data == stored.data  # the stream and its messages came back from the store

        after = await lead_named(api, account, "After the restart")  # relayed, consumed and delivered on the new server
        await receiver.wait_for(2, timeout=60)
        assert lead_ids(receiver) == {before, after}
        assert supervised.restarts == restarts  # no process exited for want of NATS
    finally:
        await receiver.stop()


async def test_a_paused_gateway_answers_again_after_its_pause(supervised):
    gateway = supervised.process("gateway")
    pid = gateway.proc.pid
    restarts = dict(supervised.restarts)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1)) as session:
        resume = supervised.pause("gateway", 3)
        paused_at = time.monotonic()
        try:
            assert state(pid) == "T"
            with pytest.raises(asyncio.TimeoutError):
                await session.get(f"{supervised.base_url}/healthz")
        finally:
            await asyncio.to_thread(resume.join)
        assert time.monotonic() - paused_at >= 3
        async with session.get(f"{supervised.base_url}/healthz") as r:
            assert r.status == 200
    assert gateway.proc.pid == pid and state(pid) != "T"  # the same process, going on: paused is not exited
    await asyncio.sleep(FIRST_DELAY_SECONDS)
    assert supervised.restarts == restarts
