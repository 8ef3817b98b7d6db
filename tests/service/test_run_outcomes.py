"""A touch's call outcome (services.sdr.runs_outcomes) as a use case on the real database: a call that ended
before any scheduler recorded its placement still ends its job, whether the job is still being executed or due
again (a scheduler died mid-placement and the next one was told to come back)."""
import uuid

import pytest
import sqlalchemy as sa

from contracts import runs
from core.ids import rfc3339, utcnow
from core.uow import UnitOfWork
from services.sdr.repository import SdrUnit, sql_unit
from services.sdr.runs_outcomes import CallOutcomes
from services.sdr.schema import jobs, outbox
from tests.compliance import answering_callee
from tests.runs import create, jobs_of, run_of, touch


def _units(database) -> UnitOfWork[SdrUnit]:
    return UnitOfWork(database, sql_unit(database), events=outbox)


def completed(job: dict, call_id: str) -> dict:
    """The call.completed event of the touch's call."""
    return {"event_id": str(uuid.uuid4()), "type": "call.completed", "occurred_at": rfc3339(utcnow()),
            "business_id": job["business_id"],
            "data": {"call_id": call_id, "status": "completed", "touch_id": job["touch_id"],
                     "external_ref": job["external_ref"]}}


@pytest.mark.parametrize("status", [runs.EXECUTING, runs.PENDING])
async def test_an_outcome_before_the_placement_was_recorded_ends_the_job(api, account, calling_agent, database,
                                                                         engine, status):
    key = account["key"]
    # Due tomorrow: no scheduler takes it meanwhile; the test puts it in the state of the race.
    status_code, run, _ = await create(api, key, run_of(account, calling_agent,
                                                        touch("t", answering_callee(), seconds=86400)))
    assert status_code == 201, run
    [job] = await jobs_of(api, key, run["id"])
    async with engine.begin() as conn:
        await conn.execute(sa.update(jobs).where(jobs.c.id == job["id"]).values(status=status))
    call_id = str(uuid.uuid4())
    await CallOutcomes(_units(database)).handle([completed(job, call_id)])
    [after] = await jobs_of(api, key, run["id"])
    assert (after["status"], after["attempts"], after["call_id"]) == (runs.SUCCEEDED, 1, call_id)
    await CallOutcomes(_units(database)).handle([completed(job, call_id)])  # redelivered: nothing more
    assert (await jobs_of(api, key, run["id"]))[0]["attempts"] == 1
