"""Communication runs for the tests: a run's body and touches, creating one, and waiting for its jobs, outcome
and events."""
import itertools
import uuid
from datetime import UTC, datetime, timedelta

from tests.waiting import wait_until

RUNS = "/api/v1/communication-runs"
_refs = itertools.count()


def at(seconds: float = 0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def touch(touch_id: str, phone: str, channel: str = "call", seconds: float = 0, **extra) -> dict:
    return {"touch_id": touch_id, "channel": channel, "target": {"phone": phone}, "scheduled_at": at(seconds), **extra}


def run_of(account, agent, *touches, **extra) -> dict:
    """A run's body; with agent None it names no agent_id (its touches' context.agent_id, or the business's one)."""
    return {"business_id": account["business_id"], "external_ref": f"crm-run-{next(_refs)}-{uuid.uuid4().hex[:6]}",
            **({"agent_id": agent["id"]} if agent else {}), "touches": list(touches), **extra}


async def create(api, key, body, idempotency_key: str | None = None):
    return await api.request("POST", RUNS, key=key, json=body,
                             headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())})


async def jobs_of(api, key, run_id: str) -> list[dict]:
    status, page, _ = await api.request("GET", "/api/v1/communication-jobs", key=key,
                                        params={"communication_run_id": run_id, "limit": "500"})
    assert status == 200, page
    return page["jobs"]


async def settled(api, key, run_id: str, done=("completed", "canceled"), timeout: float = 20) -> dict:
    """The run once its status is one of `done`."""
    async def run() -> dict:
        status, body, _ = await api.request("GET", RUNS, key=key, params={"id": run_id})
        assert status == 200, body
        return body
    return await wait_until(run, f"run {run_id} to settle", lambda r: r["status"] in done, timeout=timeout)


async def events(api, key, kind: str, run_id: str, expected: int = 1) -> list[dict]:
    """The run's `kind` events once there are `expected` of them."""
    async def found() -> list[dict]:
        status, page, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": kind})
        assert status == 200, page
        return [e for e in page["events"] if e["data"].get("communication_run_id") == run_id]
    return await wait_until(found, f"{expected} {kind} events of run {run_id}", lambda e: len(e) >= expected)
