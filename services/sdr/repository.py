"""Where the lead use cases (service.py) keep leads and their interactions, and where creating a communication
run (runs_service.py) keeps the run and its jobs and reads what its plan is decided on (the callees' leads, the
business's calling hours): repositories bound to one unit of work's handle, returning typed records
(records.py; the analytics' aggregates and the plan's callees stay plain values). They only store and find; the
rules (scoring, what a write changes, a lead not found, a run's checks) stay in the domain modules and the use cases.

`SqlLeads`, `SqlRuns`, `SqlTouches` (the run workers') and `SqlBookings` (a business's availability and bookings)
are the production ones, over store.py, runs_store.py and bookings_store.py on the unit of work's connection; the
fast test tier has in-memory ones (tests/memory/sdr.py), and the same behaviour tests run on both
(tests/storage_contracts.py; what only PostgreSQL does, two schedulers' claims skipping each other's locked jobs, is
held to its contract on the stack alone). `SdrUnit` is the sdr use cases' unit of work (core.uow.UnitOfWork): these
repositories and the pipeline's (pipeline_repository.py) on one transaction's or read's handle. The lead list (a
prepared statement on a connection of Database.pooled()), the audit's counts, the analytics' aggregates, reading and
changing runs and the pipeline are SQL only: the stack-backed tests cover them, as they do the database's triggers
on leads and interactions (the pipeline's signals), which the in-memory one does not keep."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Protocol

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import aggregates, records
from core.compliance.rules import Hours, hours
from core.inbox import first_delivery as inbox_delivery
from core.pagination import Page, Paged, fetch_page
from core.uow import Database, Unit
from services.sdr import bookings_store, pipeline_store, runs_store, store
from services.sdr.data_retention_store import SqlDataRetention
from services.sdr.erasure_store import SqlErasure
from services.sdr.pipeline_repository import PipelineRepository, SqlPipeline
from services.sdr.records import (
    Attempt,
    Booking,
    ClaimedJob,
    Job,
    JobInRun,
    Lead,
    ListedAttempt,
    ListedJob,
    ListedLead,
    Run,
    SavedAvailability,
    Voicemail,
)
from services.sdr.schema import attempts, bookings, inbox, jobs, leads, runs, standings, voicemails


class LeadsRepository(Protocol):
    async def owned(self, business_ids: Iterable[str], lead_id: str, *, lock: bool = False) -> Lead | None:
        """The lead with this id in one of these businesses (held for update with `lock`), or None."""

    async def add(self, business_id: str, values: dict[str, Any], now: datetime) -> Lead:
        """Record a new lead of the business (schema.leads' columns), created and updated `now`."""

    async def change(self, lead_id: str, values: dict[str, Any]) -> Lead | None:
        """The lead after `values`, or None when there is no such lead."""

    async def newest_by_phone(self, business_id: str, phone: str, *, lock: bool = False) -> Lead | None:
        """The business's newest lead with this phone number (held for update with `lock`), or None."""

    async def lock_contact(self, business_id: str, phone: str) -> None:
        """Serialise contact upserts of one number of one business until the transaction ends."""

    async def add_interaction(self, lead: Lead, channel: str, direction: str, reference: str, intent: str | None,
                              occurred_at: datetime) -> bool:
        """Record an interaction with the lead once per reference; False when it was recorded before."""

    async def page(self, business_ids: list[str], limit: int, filters: dict[str, Any]) -> Paged:
        """Newest-first leads (`ListedLead`s) of these businesses matching `filters` (store.FILTERS' keys)."""

    async def audit(self, business_ids: list[str], as_of: datetime, open_statuses: tuple[str, ...], hot: int,
                    quiet_since: datetime, window_start: datetime,
                    sample: int) -> tuple[dict[str, tuple[int, list[Lead]]], tuple[int, list[Voicemail]]]:
        """The audit's lead groups ({name: (count, the first `sample` leads)}) and its unhandled voicemails
        (count, the first `sample`, newest first)."""

    async def aggregate(self, query: aggregates.Query, agent_id: str | None, source: str | None) -> list[Any]:
        """The leads of the query's businesses created in its window, counted per group (core.aggregates)."""


class SqlLeads:
    """`LeadsRepository` on a unit of work's connection (core.uow.Database); the list's prepared statement runs on
    a connection of `database`'s raw pool (Database.pooled), which the production unit is given."""

    def __init__(self, conn: AsyncConnection, database: Database | None = None):
        self.conn = conn
        self.database = database

    async def owned(self, business_ids: Iterable[str], lead_id: str, *, lock: bool = False) -> Lead | None:
        return records.or_none(_lead, await records.owned(self.conn, leads, business_ids, lead_id, lock=lock))

    async def add(self, business_id: str, values: dict[str, Any], now: datetime) -> Lead:
        return _lead(await store.insert_lead(self.conn, business_id, values, now))

    async def change(self, lead_id: str, values: dict[str, Any]) -> Lead | None:
        return records.or_none(_lead, await store.update_lead(self.conn, lead_id, values))

    async def newest_by_phone(self, business_id: str, phone: str, *, lock: bool = False) -> Lead | None:
        return records.or_none(_lead, await store.newest_by_phone(self.conn, business_id, phone, lock=lock))

    async def lock_contact(self, business_id: str, phone: str) -> None:
        await store.lock_contact(self.conn, business_id, phone)

    async def add_interaction(self, lead: Lead, channel: str, direction: str, reference: str, intent: str | None,
                              occurred_at: datetime) -> bool:
        return await store.insert_interaction(self.conn, lead, channel, direction, reference, intent, occurred_at)

    async def page(self, business_ids: list[str], limit: int, filters: dict[str, Any]) -> Paged:
        if self.database is None:
            raise RuntimeError("the lead list runs on the raw pool: build SqlLeads with the database")
        async with self.database.pooled() as conn:
            return (await store.lead_page(conn, business_ids, limit, filters)).map(_listed_lead)

    async def audit(self, business_ids: list[str], as_of: datetime, open_statuses: tuple[str, ...], hot: int,
                    quiet_since: datetime, window_start: datetime,
                    sample: int) -> tuple[dict[str, tuple[int, list[Lead]]], tuple[int, list[Voicemail]]]:
        groups = {}
        for name, (where, order) in store.audit_groups(business_ids, as_of, open_statuses, hot, quiet_since,
                                                       window_start).items():
            count, rows = await store.count_and_sample(self.conn, leads, where, order, sample)
            groups[name] = count, [_lead(row) for row in rows]
        unhandled = store.unhandled_voicemails(business_ids, as_of)
        count, rows = await store.count_and_sample(self.conn, voicemails, unhandled,
                                                   (voicemails.c.received_at.desc(),), sample)
        return groups, (count, [records.record(Voicemail, row._mapping) for row in rows])

    async def aggregate(self, query: aggregates.Query, agent_id: str | None, source: str | None) -> list[Any]:
        return list(await store.aggregate_leads(self.conn, query, agent_id, source))


class RunsRepository(Protocol):
    async def add_run(self, **values: Any) -> Run | None:
        """Record a run (schema.runs' columns), or None when the business has a run with its
        idempotency_key already. Another run of the business with its external_ref is refused (IntegrityError
        naming communication_runs_external_ref)."""

    async def run_by_key(self, business_id: str, key: str) -> Run | None:
        """The business's run created with this Idempotency-Key, or None."""

    async def add_jobs(self, rows: list[dict[str, Any]]) -> None:
        """Record a run's jobs (schema.jobs' columns)."""

    async def job_counts(self, run_ids: list[str]) -> dict[str, dict[str, int]]:
        """Per run, its jobs by status."""

    async def callees(self, business_id: str, phones: list[str]) -> dict[str, dict[str, Any]]:
        """The business's newest lead of each of these phones: {id, state, status, converted_at, last_inbound_at},
        by phone."""

    async def business_hours(self, business_id: str) -> Hours | None:
        """The business's own calling hours (its saved SDR config's), or None when it saved none."""

    async def run_page(self, business_ids: Iterable[str], run_id: str | None, external_ref: str | None,
                       page: Page) -> Paged:
        """These businesses' runs (`Run`s), newest first (the one with this id or external_ref when given)."""

    async def lock_run(self, run_id: str, business_ids: Iterable[str]) -> Run | None:
        """The run with this id in one of these businesses, held for update; None when there is none."""

    async def change_run(self, run_id: str, values: dict[str, Any]) -> Run:
        """The run (held for update: it is there) after `values`."""

    async def move_jobs(self, run_id: str, sources: tuple[str, ...], values: dict[str, Any],
                        *, due_no_earlier_than: datetime | None = None) -> None:
        """The run's jobs in one of the `sources` states get `values` (and, with `due_no_earlier_than`, a due time
        no earlier than it)."""

    async def job_page(self, business_ids: Iterable[str], run_id: str | None, channel: str | None,
                       status: str | None, job_id: str | None, page: Page) -> Paged:
        """These businesses' jobs (`ListedJob`s: with their runs' external_ref), in scheduled order, newest
        first."""

    async def attempt_page(self, business_ids: Iterable[str], run_id: str | None, status: str | None,
                           page: Page) -> Paged:
        """These businesses' call attempts (`ListedAttempt`s: with their touch_id and runs' external_ref), newest
        first."""


class SqlRuns:
    """`RunsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def add_run(self, **values: Any) -> Run | None:
        return records.or_none(_run, await runs_store.insert_run(self.conn, **values))

    async def run_by_key(self, business_id: str, key: str) -> Run | None:
        return records.or_none(_run, await runs_store.run_by_key(self.conn, business_id, key))

    async def add_jobs(self, rows: list[dict[str, Any]]) -> None:
        await runs_store.insert_jobs(self.conn, rows)

    async def job_counts(self, run_ids: list[str]) -> dict[str, dict[str, int]]:
        return await runs_store.job_counts(self.conn, run_ids)

    async def callees(self, business_id: str, phones: list[str]) -> dict[str, dict[str, Any]]:
        return await store.callees(self.conn, business_id, phones)

    async def business_hours(self, business_id: str) -> Hours | None:
        config = await pipeline_store.config_of(self.conn, business_id)
        return hours(config.business_hours_start, config.business_hours_end) if config else None

    async def run_page(self, business_ids: Iterable[str], run_id: str | None, external_ref: str | None,
                       page: Page) -> Paged:
        return (await fetch_page(self.conn, runs_store.runs_of(business_ids, run_id, external_ref),
                                 runs.c.created_at, runs.c.id, page)).map(_run)

    async def lock_run(self, run_id: str, business_ids: Iterable[str]) -> Run | None:
        return records.or_none(_run, await runs_store.lock_run(self.conn, run_id, business_ids))

    async def change_run(self, run_id: str, values: dict[str, Any]) -> Run:
        return _run(await runs_store.update_run(self.conn, run_id, values))

    async def move_jobs(self, run_id: str, sources: tuple[str, ...], values: dict[str, Any],
                        *, due_no_earlier_than: datetime | None = None) -> None:
        if due_no_earlier_than is not None:
            values = {**values, "due_at": sa.func.greatest(jobs.c.due_at, due_no_earlier_than)}
        await runs_store.move_jobs(self.conn, run_id, sources, values)

    async def job_page(self, business_ids: Iterable[str], run_id: str | None, channel: str | None,
                       status: str | None, job_id: str | None, page: Page) -> Paged:
        return (await fetch_page(self.conn, runs_store.jobs_of(business_ids, run_id, channel, status, job_id),
                                 jobs.c.scheduled_at, jobs.c.id, page)).map(
            lambda row: records.record(ListedJob, row._mapping))

    async def attempt_page(self, business_ids: Iterable[str], run_id: str | None, status: str | None,
                           page: Page) -> Paged:
        return (await fetch_page(self.conn, runs_store.attempts_of(business_ids, run_id, status),
                                 attempts.c.created_at, attempts.c.id, page)).map(
            lambda row: records.record(ListedAttempt, row._mapping))


class TouchesRepository(Protocol):
    """What the run workers (runs_scheduler.py, runs_outcomes.py) do with a run's touches: claim the due ones under a
    lease, settle them, record their call attempts and the calls' outcomes, and complete a run whose last touch
    ended."""

    async def due_businesses(self, limit: int) -> list[str]:
        """Businesses in good standing with a job to claim now (in an active run), the longest waiting first."""

    async def lock_business(self, business_id: str) -> None:
        """Serialize claiming a business's jobs (its calls in flight are counted under it)."""

    async def calls_in_flight(self, business_id: str) -> int: ...

    async def claim(self, business_id: str, channel: str, limit: int, token: str,
                    lease: timedelta) -> list[ClaimedJob]:
        """Up to `limit` due jobs of a business on one channel, claimed for `lease` under `token`."""

    async def start_runs(self, run_ids: set[str], now: datetime) -> None: ...

    async def settle(self, job_id: str, token: str, values: dict[str, Any]) -> Job | None:
        """The job after its result, or None when its claim is no longer `token`'s."""

    async def add_attempt(self, **values: Any) -> None: ...

    async def jobs_of_touches(self, touches: list[tuple[str, str, str]]) -> list[JobInRun]:
        """The jobs of these touches (business_id, external_ref, touch_id) with their runs' policies, locked."""

    async def attempts_of_calls(self, call_ids: list[str]) -> dict[str, Attempt]:
        """The attempts of these calls (those recorded yet), by call id."""

    async def end_attempt(self, attempt_id: str, values: dict[str, Any]) -> None: ...

    async def change_job(self, job_id: str, values: dict[str, Any]) -> Job | None:
        """The job after `values`, or None when there is no such job."""

    async def end_run_if_done(self, run_id: str, now: datetime) -> Run | None:
        """The run, completed, if its last job just ended; else None."""


class SqlTouches:
    """`TouchesRepository` on a unit of work's connection (core.uow.Database), over runs_store.py."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def due_businesses(self, limit: int) -> list[str]:
        return await runs_store.due_businesses(self.conn, limit)

    async def lock_business(self, business_id: str) -> None:
        await runs_store.lock_business(self.conn, business_id)

    async def calls_in_flight(self, business_id: str) -> int:
        return await runs_store.calls_in_flight(self.conn, business_id)

    async def claim(self, business_id: str, channel: str, limit: int, token: str,
                    lease: timedelta) -> list[ClaimedJob]:
        claimed = await runs_store.claim(self.conn, business_id, channel, limit, token, lease)
        return [records.record(ClaimedJob, row._mapping) for row in claimed]

    async def start_runs(self, run_ids: set[str], now: datetime) -> None:
        await runs_store.start_runs(self.conn, run_ids, now)

    async def settle(self, job_id: str, token: str, values: dict[str, Any]) -> Job | None:
        return records.or_none(_job, await runs_store.settle_job(self.conn, job_id, token, values))

    async def add_attempt(self, **values: Any) -> None:
        await runs_store.add_attempt(self.conn, **values)

    async def jobs_of_touches(self, touches: list[tuple[str, str, str]]) -> list[JobInRun]:
        return [records.record(JobInRun, row._mapping) for row in await runs_store.jobs_of_touches(self.conn, touches)]

    async def attempts_of_calls(self, call_ids: list[str]) -> dict[str, Attempt]:
        return {call_id: records.record(Attempt, row._mapping)
                for call_id, row in (await runs_store.attempts_of_calls(self.conn, call_ids)).items()}

    async def end_attempt(self, attempt_id: str, values: dict[str, Any]) -> None:
        await runs_store.end_attempt(self.conn, attempt_id, values)

    async def change_job(self, job_id: str, values: dict[str, Any]) -> Job | None:
        return records.or_none(_job, await runs_store.update_job(self.conn, job_id, values))

    async def end_run_if_done(self, run_id: str, now: datetime) -> Run | None:
        return records.or_none(_run, await runs_store.end_run_if_done(self.conn, run_id, now))


def _lead(row: Any) -> Lead:
    return records.record(Lead, row._mapping)


def _listed_lead(row: Any) -> ListedLead:
    """A row of the lead list: an asyncpg record, a mapping itself."""
    return records.record(ListedLead, row)


def _run(row: Any) -> Run:
    return records.record(Run, row._mapping)


def _job(row: Any) -> Job:
    return records.record(Job, row._mapping)


class EventsRepository(Protocol):
    """What sdr's consumers record of the events they apply."""

    async def first_delivery(self, consumer: str, event_id: str) -> bool:
        """True the first time `consumer` applies this event (core.inbox): call it in the transaction applying it."""

    async def add_voicemail(self, voicemail_id: str, business_id: str, lead_id: str | None, fields: dict[str, Any],
                            received_at: datetime) -> None:
        """Record a voicemail left for the business (schema.voicemails' columns in `fields`)."""

    async def record_standing(self, business_id: str, standing: str, changed_at: datetime) -> None:
        """The business's standing as of `changed_at`, unless a later change is recorded already."""


class SqlEvents:
    """`EventsRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def first_delivery(self, consumer: str, event_id: str) -> bool:
        return await inbox_delivery(self.conn, inbox, consumer, event_id)

    async def add_voicemail(self, voicemail_id: str, business_id: str, lead_id: str | None, fields: dict[str, Any],
                            received_at: datetime) -> None:
        await store.insert_voicemail(self.conn, voicemail_id, business_id, lead_id, fields, received_at)

    async def record_standing(self, business_id: str, standing: str, changed_at: datetime) -> None:
        statement = insert(standings).values(business_id=business_id, standing=standing, changed_at=changed_at)
        await self.conn.execute(statement.on_conflict_do_update(
            index_elements=[standings.c.business_id],
            set_={"standing": statement.excluded.standing, "changed_at": statement.excluded.changed_at},
            where=standings.c.changed_at <= statement.excluded.changed_at))


class BookingsRepository(Protocol):
    """A business's availability and its bookings (services.sdr.bookings_service)."""

    async def availability(self, business_id: str) -> SavedAvailability | None:
        """The availability the business saved, or None while it saved none."""

    async def save_availability(self, business_id: str, values: dict[str, Any], now: datetime) -> SavedAvailability:
        """Save the business's availability (schema.availability's columns), replacing what it had."""

    async def lock(self, business_id: str) -> None:
        """Serialise the writes of the business's bookings until the transaction ends."""

    async def confirmed_between(self, business_id: str, since: datetime, until: datetime,
                                but: str | None = None) -> list[Booking]:
        """The business's confirmed bookings that end after `since` and start before `until` (other than `but`),
        soonest first."""

    async def add(self, values: dict[str, Any]) -> Booking:
        """Record a booking (schema.bookings' columns)."""

    async def change(self, booking_id: str, values: dict[str, Any]) -> Booking:
        """The booking (it is there) after `values`."""

    async def owned(self, business_ids: Iterable[str], booking_id: str, *, lock: bool = False) -> Booking | None:
        """The booking with this id in one of these businesses (held for update with `lock`), or None."""

    async def page(self, business_ids: list[str], since: datetime | None, until: datetime | None,
                   status: str | None, page: Page) -> Paged:
        """These businesses' bookings (`Booking`s) starting in [since, until) of the status when given, latest
        starts_at first."""


class SqlBookings:
    """`BookingsRepository` on a unit of work's connection (core.uow.Database), over bookings_store.py."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def availability(self, business_id: str) -> SavedAvailability | None:
        return records.or_none(_availability, await bookings_store.availability_of(self.conn, business_id))

    async def save_availability(self, business_id: str, values: dict[str, Any], now: datetime) -> SavedAvailability:
        return _availability(await bookings_store.save_availability(self.conn, business_id, values, now))

    async def lock(self, business_id: str) -> None:
        await bookings_store.lock_bookings(self.conn, business_id)

    async def confirmed_between(self, business_id: str, since: datetime, until: datetime,
                                but: str | None = None) -> list[Booking]:
        return [_booking(row) for row in await bookings_store.confirmed_between(self.conn, business_id, since,
                                                                                until, but)]

    async def add(self, values: dict[str, Any]) -> Booking:
        return _booking(await bookings_store.insert_booking(self.conn, values))

    async def change(self, booking_id: str, values: dict[str, Any]) -> Booking:
        return _booking(await bookings_store.update_booking(self.conn, booking_id, values))

    async def owned(self, business_ids: Iterable[str], booking_id: str, *, lock: bool = False) -> Booking | None:
        return records.or_none(_booking, await records.owned(self.conn, bookings, business_ids, booking_id,
                                                             lock=lock))

    async def page(self, business_ids: list[str], since: datetime | None, until: datetime | None,
                   status: str | None, page: Page) -> Paged:
        return (await fetch_page(self.conn, bookings_store.bookings_of(business_ids, since, until, status),
                                 bookings.c.starts_at, bookings.c.id, page)).map(_booking)


def _availability(row: Any) -> SavedAvailability:
    return records.record(SavedAvailability, row._mapping)


def _booking(row: Any) -> Booking:
    return records.record(Booking, row._mapping)


class SdrUnit(Unit):
    """The unit of work of the lead, run, pipeline and booking use cases, the run workers and the voicemail and
    standing consumers (core.uow.UnitOfWork): leads, runs, their touches' execution, the pipeline, the bookings and
    the events applied, erasing a person and the retention a business set, on one transaction's or read's handle
    (`leads_on`, `runs_on`, `events_on`, `touches_on`, `pipeline_on`, `bookings_on`, `erasure_on` and
    `data_retention_on` build the repositories: the SQL ones, or the fast tier's in-memory twins)."""

    def __init__(self, handle: Any, leads_on: Callable[[Any], LeadsRepository] = SqlLeads,
                 runs_on: Callable[[Any], RunsRepository] = SqlRuns,
                 events_on: Callable[[Any], EventsRepository] = SqlEvents,
                 touches_on: Callable[[Any], TouchesRepository] = SqlTouches,
                 pipeline_on: Callable[[Any], PipelineRepository] = SqlPipeline,
                 bookings_on: Callable[[Any], BookingsRepository] = SqlBookings,
                 erasure_on: Callable[[Any], SqlErasure] = SqlErasure,
                 data_retention_on: Callable[[Any], SqlDataRetention] = SqlDataRetention):
        super().__init__()
        self.leads = leads_on(handle)
        self.runs = runs_on(handle)
        self.events = events_on(handle)
        self.touches = touches_on(handle)
        self.pipeline = pipeline_on(handle)
        self.bookings = bookings_on(handle)
        self.erasure = erasure_on(handle)  # erasing a person (services.sdr.erasure_store): SQL only
        self.data_retention = data_retention_on(handle)  # the retention a business set (data_retention_store)


def sql_unit(database: Database) -> Callable[[AsyncConnection], SdrUnit]:
    """The production unit on a connection, its lead list on `database`'s raw pool."""
    return lambda conn: SdrUnit(conn, lambda c: SqlLeads(c, database))
