"""A backup restored after a person was erased (docs/privacy.md, "Backups"), on a stack of its own (the restore
replaces the whole database, which the session's stack shares with every other test): a person with a lead and
texts; `python -m deploy.backup create`; the person erased through the API; the restore refused while the platform
runs; then, with the platform's processes stopped (the documented procedure), `restore` brings the person's data
back and hands the erasure back to be replayed; started again, the accounts service's erasure runner queues it
and erases them once more, and their opt-out holds. The tool's rules (prune by age, the refusal of a backup past
retention) are tests/unit/test_backups.py."""
import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from deploy.local.servers import stop_processes, wait_for_port
from tests.api import Api, new_account
from tests.calling import agent_with_number
from tests.conftest import embedded_stack
from tests.leads import leads_with, new_lead
from tests.standing import PaymentsAccess
from tests.texting import SmsSimulator, number, send
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
PATH = "/api/v1/privacy/erasures"
NAME = "Dana Reyes"


@pytest.fixture(scope="module")
def own_stack(request):
    # the erasure runner looks every half second: the replay starts soon after the platform is back
    with embedded_stack(request, {"ERASURE_INTERVAL_SECONDS": "0.5"}) as s:
        yield s


def tool(stack, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m deploy.backup ...` as an operator runs it: the embedded PostgreSQL of the stack's home found by
    itself (DATABASE_URL only for a stack on an external server)."""
    env = {name: value for name, value in os.environ.items() if name != "DATABASE_URL"}
    env.update(PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "protos")]), SWITCHBOARD_HOME=str(stack.home),
               BACKUP_DIR=str(folder))
    if stack.postgres is None:
        env["DATABASE_URL"] = stack.database_url
    return subprocess.run([sys.executable, "-m", "deploy.backup", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


def platform(stack) -> list:
    return [p for pool in stack.pools.values() for p in pool]


def stop_platform(stack) -> None:
    """Every service, worker and gateway stopped (the simulators, PostgreSQL and NATS keep running)."""
    processes = platform(stack)
    for p in processes:
        p.stopped = True
    stop_processes([p.proc for p in processes], signal.SIGTERM, 30)


def start_platform(stack) -> None:
    for p in platform(stack):
        stack.spawn(p)
    for p in platform(stack):
        wait_for_port(p.port, 120, p.proc, p.name, p.log)
    stack.wait_ready(120)


async def shows(api, key, person: str) -> list[str]:
    """The routes whose answer shows anything of the person (their number or name)."""
    found = []
    for path in ("/api/v1/leads", "/api/v1/sms/messages", "/api/v1/sms/conversations"):
        status, body, _ = await api.request("GET", path, key=key, params={"limit": "100"})
        assert status == 200, (path, body)
        if person[-10:] in json.dumps(body) or NAME in json.dumps(body) or "Dana" in json.dumps(body):
            found.append(path)
    return found


async def erasure(api, key, erasure_id: str) -> tuple[int, dict]:
    status, body, _ = await api.request("GET", PATH, key=key, params={"id": erasure_id})
    return status, body


async def test_a_restored_backup_brings_an_erased_person_back_only_until_their_erasure_is_replayed(own_stack, tmp_path):
    stack = own_stack
    async with aiohttp.ClientSession() as session:
        api = Api(session, stack.base_url, stack.database_url, PaymentsAccess.of(stack.payments_env()))
        account = await new_account(api)
        try:
            key, business = account["key"], account["business_id"]
            agent = await agent_with_number(api, account)
            sms = SmsSimulator(session, f"http://127.0.0.1:{stack.process('sms-simulator').port}")
            person = number("0183")
            lead = await new_lead(api, key, business, phone=person, name=NAME)
            await sms.text_in(person, agent["phone_number"], f"It's {NAME}, is Saturday fine for the leak?")
            await wait_until(lambda: shows(api, key, person), "their lead and text to show",
                             lambda found: len(found) == 3, timeout=30)

            made = tool(stack, tmp_path, "create")
            assert made.returncode == 0, made.stderr
            [dump] = tmp_path.glob("switchboard-*.dump")
            assert "created" in made.stdout and tool(stack, tmp_path, "list").stdout.startswith(dump.name)

            status, erased, _ = await api.request("POST", PATH, key=key, json={"phone": person})
            assert status == 202, erased
            await wait_until(lambda: erasure(api, key, erased["id"]), "the erasure to complete",
                             lambda r: r[1]["status"] == "completed", timeout=60)
            assert await shows(api, key, person) == []

            # While the platform runs, the restore is refused (its processes would write into it).
            refused = tool(stack, tmp_path, "restore", dump.name)
            assert refused.returncode != 0 and "stop the platform's processes first" in refused.stderr, refused

            await asyncio.to_thread(stop_platform, stack)
            try:
                restored = tool(stack, tmp_path, "restore", dump.name)
                assert restored.returncode == 0, restored.stderr
                assert "1 erasure(s) completed since it was taken will be replayed" in restored.stdout, restored.stdout
                # The backup's copy of them is back, and their erasure is handed back to be replayed.
                conn = await asyncpg.connect(stack.database_url)
                try:
                    assert await conn.fetchval("SELECT count(*) FROM sdr.leads WHERE id = $1", lead["id"]) == 1
                    assert await conn.fetchval("SELECT count(*) FROM messaging.messages WHERE from_number = $1 "
                                               "AND body LIKE $2", person, f"%{NAME}%") == 1
                    assert await conn.fetchval("SELECT count(*) FROM accounts.erasures WHERE id = $1",
                                               erased["id"]) == 0  # the backup is older than the request
                    entry = await conn.fetchrow("SELECT subject, replay_requested_at FROM accounts.erasure_replay "
                                                "WHERE erasure_id = $1", erased["id"])
                    assert entry["replay_requested_at"] is not None and person[-10:] not in entry["subject"]
                finally:
                    await conn.close()
            finally:
                await asyncio.to_thread(start_platform, stack)

            # The erasure runs again over the restored data and completes, having found them again.
            _, replayed = await wait_until(lambda: erasure(api, key, erased["id"]), "the replayed erasure to complete",
                                           lambda r: r[0] == 200 and r[1]["status"] == "completed", timeout=90)
            assert sum(line["count"] for line in replayed["report"]) > 0, replayed
            assert await leads_with(api, key, person) == [] and await shows(api, key, person) == []
            # Their opt-out holds.
            status, refused_text, _ = await send(api, key, agent, person, "Are you still interested?")
            assert status == 400 and refused_text["error"]["code"] in ("number_on_dnc", "number_opted_out"), \
                refused_text
            # The replay was taken: nothing is left requested.
            conn = await asyncpg.connect(stack.database_url)
            try:
                assert await conn.fetchval("SELECT replay_requested_at FROM accounts.erasure_replay "
                                           "WHERE erasure_id = $1", erased["id"]) is None
            finally:
                await conn.close()
        finally:
            await account["dashboard"].close()
