"""services.sdr.repository's LeadsRepository, RunsRepository and BookingsRepository in memory, on a MemoryDatabase's
handle (schema.leads and schema.interactions, schema.runs and schema.jobs, schema.availability and schema.bookings).
The database's triggers (the pipeline's signals on a lead: its latest inbound contact, its pipeline stamp) are not
kept here; the transactions run one at a time, so the contact lock and the booking lock have nothing to do."""
from __future__ import annotations

from collections import Counter

from contracts.bookings import CONFIRMED
from core.compliance.rules import hours
from core.ids import new_id
from core.records import record
from core.uow import UnitOfWork
from services.sdr.records import Booking, Lead, Run, SavedAvailability
from services.sdr.repository import SdrUnit
from services.sdr.schema import availability, bookings, configs, interactions, jobs, leads, outbox, runs
from tests.memory import MemoryConnection, MemoryDatabase, Record, insert, page_of, update


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
    return record(Booking, Record(row)._mapping)


def _lead(row) -> Lead:
    """The stored row as the SQL repository returns it (a copy: changing it changes nothing stored)."""
    return record(Lead, Record(row)._mapping)


def _run(row) -> Run:
    return record(Run, Record(row)._mapping)


def in_memory(database: MemoryDatabase) -> UnitOfWork[SdrUnit]:
    """sdr's unit of work on the in-memory database, with these repositories."""
    return UnitOfWork(database, lambda handle: SdrUnit(handle, MemoryLeads, MemoryRuns, bookings_on=MemoryBookings),
                      events=outbox)
