"""services.sdr.repository's LeadsRepository, RunsRepository, TouchesRepository and BookingsRepository in memory, on
a MemoryDatabase's handle (schema.leads and schema.interactions, schema.runs, schema.jobs and schema.attempts,
schema.availability and schema.bookings). The database's triggers (the pipeline's signals on a lead: its latest
inbound contact, its pipeline stamp) are not kept here; the transactions run one at a time, so the contact, business
and booking locks have nothing to do and a claim never meets another's (the SQL's SKIP LOCKED is held to its
contract on the stack alone: tests/service/test_storage_contracts.py). Where the SQL reads the transaction's now(),
these read the clock (core.ids.utcnow)."""
from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, TypeVar

from contracts.bookings import CONFIRMED
from contracts.runs import COMPLETED, EXECUTING, IN_PROGRESS, JOB_ENDS, RUN_ACTIVE, RUNNING, SCHEDULED, WAITING
from core import leases
from core.compliance.rules import hours
from core.ids import new_id, utcnow
from core.records import record
from core.standing import HELD
from core.uow import UnitOfWork
from services.sdr.records import Attempt, Booking, ClaimedJob, Job, JobInRun, Lead, Run, SavedAvailability
from services.sdr.repository import SdrUnit
from services.sdr.schema import (
    attempts,
    availability,
    bookings,
    configs,
    interactions,
    jobs,
    leads,
    outbox,
    runs,
    standings,
)
from tests.memory import MemoryConnection, MemoryDatabase, Record, insert, page_of, update

R = TypeVar("R")


class MemoryLeads:
    def __init__(self, conn: MemoryConnection):
        self.lead_rows = conn.rows(leads)
        self.interaction_rows = conn.rows(interactions)

    async def owned(self, business_ids, lead_id, *, lock=False):
        row = self.lead_rows.get((lead_id,))
        return _lead(row) if row is not None and row["business_id"] in tuple(business_ids) else None

    async def add(self, business_id, values, now):
        return _lead(insert(self.lead_rows, leads, {"id": new_id(), "business_id": business_id, "created_at": now,
                                                    "updated_at": now, **values}))

    async def change(self, lead_id, values):
        row = self.lead_rows.get((lead_id,))
        return _lead(update(leads, row, values)._mapping) if row is not None else None

    async def newest_by_phone(self, business_id, phone, *, lock=False):
        found = [row for row in self.lead_rows.values() if (row["business_id"], row["phone"]) == (business_id, phone)]
        return _lead(max(found, key=lambda row: row["created_at"])) if found else None

    async def lock_contact(self, business_id, phone) -> None:
        pass

    async def add_interaction(self, lead, channel, direction, reference, intent, occurred_at):
        if any((row["lead_id"], row["reference"]) == (lead.id, reference) for row in self.interaction_rows.values()):
            return False
        insert(self.interaction_rows, interactions, {
            "id": len(self.interaction_rows) + 1, "lead_id": lead.id, "business_id": lead.business_id,
            "channel": channel, "direction": direction, "reference": reference, "intent": intent,
            "occurred_at": occurred_at})
        return True


class MemoryRuns:
    """services.sdr.repository.RunsRepository (schema.runs and schema.jobs; reading schema.leads and
    schema.configs)."""

    def __init__(self, conn: MemoryConnection):
        self.run_rows = conn.rows(runs)
        self.job_rows = conn.rows(jobs)
        self.lead_rows = conn.rows(leads)
        self.config_rows = conn.rows(configs)

    async def add_run(self, **values):
        # ON CONFLICT ON CONSTRAINT communication_runs_idempotency DO NOTHING: that key taken, nothing else counts.
        if await self.run_by_key(values["business_id"], values["idempotency_key"]) is not None:
            return None
        return _run(insert(self.run_rows, runs, values))

    async def run_by_key(self, business_id, key):
        return next((_run(row) for row in self.run_rows.values()
                     if (row["business_id"], row["idempotency_key"]) == (business_id, key)), None)

    async def add_jobs(self, rows) -> None:
        for row in rows:
            insert(self.job_rows, jobs, row)

    async def job_counts(self, run_ids):
        return {run_id: dict(Counter(row["status"] for row in self.job_rows.values() if row["run_id"] == run_id))
                for run_id in run_ids if any(row["run_id"] == run_id for row in self.job_rows.values())}

    async def callees(self, business_id, phones):
        newest = {}
        for row in sorted(self.lead_rows.values(), key=lambda row: row["created_at"]):
            if row["business_id"] == business_id and row["phone"] in phones:
                newest[row["phone"]] = {"id": str(row["id"]), "state": row["state"], "status": row["status"],
                                        "converted_at": row.get("converted_at"),
                                        "last_inbound_at": row.get("last_inbound_at")}
        return newest

    async def business_hours(self, business_id):
        config = self.config_rows.get((business_id,))
        return hours(config["business_hours_start"], config["business_hours_end"]) if config else None


class MemoryTouches:
    """services.sdr.repository.TouchesRepository (schema.jobs and schema.attempts, the runs' starts and ends;
    reading schema.configs and schema.standings)."""

    def __init__(self, conn: MemoryConnection):
        self.run_rows = conn.rows(runs)
        self.job_rows = conn.rows(jobs)
        self.attempt_rows = conn.rows(attempts)
        self.config_rows = conn.rows(configs)
        self.standing_rows = conn.rows(standings)

    def _claimable(self, job: dict[str, Any], now: datetime) -> bool:
        """runs_store's _claimable and OPEN_RUN: due and waiting, or executing with its lease run out; in an
        active run."""
        waiting = job["status"] in WAITING and job["due_at"] <= now
        ran_out = job["status"] == EXECUTING and (job["lease_until"] is None or job["lease_until"] < now)
        return (waiting or ran_out) and self.run_rows[(job["run_id"],)]["status"] in RUN_ACTIVE

    def _held(self, business_id: str) -> bool:
        standing = self.standing_rows.get((business_id,))
        return standing is not None and standing["standing"] in HELD

    async def due_businesses(self, limit):
        now, due = utcnow(), {}
        for job in self.job_rows.values():
            if self._claimable(job, now) and not self._held(job["business_id"]):
                due[job["business_id"]] = min(job["due_at"], due.get(job["business_id"], job["due_at"]))
        return sorted(due, key=lambda business_id: due[business_id])[:limit]

    async def lock_business(self, business_id) -> None:
        pass

    async def calls_in_flight(self, business_id):
        return sum(1 for job in self.job_rows.values() if job["business_id"] == business_id
                   and job["channel"] == "call" and job["status"] in (EXECUTING, IN_PROGRESS))

    async def claim(self, business_id, channel, limit, token, lease):
        if limit <= 0:
            return []
        now = utcnow()
        picked = sorted((job for job in self.job_rows.values() if (job["business_id"], job["channel"]) == (
            business_id, channel) and self._claimable(job, now)), key=lambda job: job["due_at"])[:limit]
        config = self.config_rows.get((business_id,), {})
        claimed = []
        for job in picked:
            update(jobs, job, {"status": EXECUTING, "lease_token": token, "lease_until": now + lease,
                               "updated_at": now})
            claimed.append(self._in_run(ClaimedJob, job, account_id=self.run_rows[(job["run_id"],)]["account_id"],
                                        business_hours_start=config.get("business_hours_start"),
                                        business_hours_end=config.get("business_hours_end")))
        return claimed

    def _in_run(self, cls: type[R], job: dict[str, Any], **more: Any) -> R:
        """The job with its run's external_ref, retry policy and status (and `more`), as a `cls`."""
        run = self.run_rows[(job["run_id"],)]
        return _copy(cls, {**job, "external_ref": run["external_ref"], "retry": run["retry"],
                           "run_status": run["status"], **more})

    async def start_runs(self, run_ids, now) -> None:
        for run_id in run_ids:
            run = self.run_rows.get((run_id,))
            if run is not None and run["status"] == SCHEDULED:
                update(runs, run, {"status": RUNNING, "started_at": now, "updated_at": now})

    async def settle(self, job_id, token, values):
        job = self.job_rows.get((job_id,))
        if job is None or job["lease_token"] != token:
            return None
        return _copy(Job, update(jobs, job, {**values, **leases.RELEASED})._mapping)

    async def add_attempt(self, **values) -> None:
        # ON CONFLICT ON CONSTRAINT communication_attempts_once DO NOTHING: another clash (a call's id) is refused.
        if not any((row["job_id"], row["attempt"]) == (values["job_id"], values["attempt"])
                   for row in self.attempt_rows.values()):
            insert(self.attempt_rows, attempts, values)

    async def jobs_of_touches(self, touches):
        wanted = set(touches)
        return [self._in_run(JobInRun, job) for job in sorted(self.job_rows.values(), key=lambda job: job["id"])
                if (self.run_rows[(job["run_id"],)]["business_id"], self.run_rows[(job["run_id"],)]["external_ref"],
                    job["touch_id"]) in wanted]

    async def attempts_of_calls(self, call_ids):
        return {row["call_id"]: _copy(Attempt, row) for row in self.attempt_rows.values()
                if row["call_id"] is not None and row["call_id"] in call_ids}

    async def end_attempt(self, attempt_id, values) -> None:
        row = self.attempt_rows.get((attempt_id,))
        if row is not None:
            update(attempts, row, values)

    async def change_job(self, job_id, values):
        row = self.job_rows.get((job_id,))
        return _copy(Job, update(jobs, row, values)._mapping) if row is not None else None

    async def end_run_if_done(self, run_id, now):
        run = self.run_rows.get((run_id,))
        if run is None or run["status"] not in RUN_ACTIVE or any(
                job["run_id"] == run_id and job["status"] not in JOB_ENDS for job in self.job_rows.values()):
            return None
        return _run(update(runs, run, {"status": COMPLETED, "ended_at": now, "updated_at": now})._mapping)


def _copy(cls: type[R], row: Any) -> R:
    """The stored row as the SQL repository returns it, a `cls` (a copy: changing it changes nothing stored)."""
    return record(cls, Record(row)._mapping)


class MemoryBookings:
    """services.sdr.repository.BookingsRepository (schema.availability and schema.bookings)."""

    def __init__(self, conn: MemoryConnection):
        self.availability_rows = conn.rows(availability)
        self.booking_rows = conn.rows(bookings)

    async def availability(self, business_id):
        row = self.availability_rows.get((business_id,))
        return record(SavedAvailability, Record(row)._mapping) if row is not None else None

    async def save_availability(self, business_id, values, now):
        self.availability_rows.pop((business_id,), None)
        row = insert(self.availability_rows, availability, {"business_id": business_id, **values, "updated_at": now})
        return record(SavedAvailability, Record(row)._mapping)

    async def lock(self, business_id) -> None:
        pass

    async def confirmed_between(self, business_id, since, until, but=None):
        return sorted((_booking(row) for row in self.booking_rows.values()
                       if row["business_id"] == business_id and row["status"] == CONFIRMED and row["id"] != but
                       and row["ends_at"] > since and row["starts_at"] < until), key=lambda b: b.starts_at)

    async def add(self, values):
        return _booking(insert(self.booking_rows, bookings, values))

    async def change(self, booking_id, values):
        return _booking(update(bookings, self.booking_rows[(booking_id,)], values)._mapping)

    async def owned(self, business_ids, booking_id, *, lock=False):
        row = self.booking_rows.get((booking_id,))
        return _booking(row) if row is not None and row["business_id"] in tuple(business_ids) else None

    async def page(self, business_ids, since, until, status, page):
        rows = [row for row in self.booking_rows.values() if row["business_id"] in business_ids
                and (since is None or row["starts_at"] >= since) and (until is None or row["starts_at"] < until)
                and (status is None or row["status"] == status)]
        return page_of(rows, bookings.c.starts_at, bookings.c.id, page).map(lambda r: record(Booking, r._mapping))


def _booking(row) -> Booking:
    return _copy(Booking, row)


def _lead(row) -> Lead:
    return _copy(Lead, row)


def _run(row) -> Run:
    return _copy(Run, row)


def in_memory(database: MemoryDatabase) -> UnitOfWork[SdrUnit]:
    """sdr's unit of work on the in-memory database, with these repositories."""
    return UnitOfWork(database, lambda handle: SdrUnit(handle, MemoryLeads, MemoryRuns, touches_on=MemoryTouches,
                                                       bookings_on=MemoryBookings),
                      events=outbox)
