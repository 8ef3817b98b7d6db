"""Where the sales pipeline's use cases (pipeline_service.py, pipeline_actions.py, pipeline_runner.py) keep its
config, the leads' stored segments and next actions, the touches' activity log and the runner's windows and
briefings: a repository bound to one unit of work's handle (`SdrUnit.pipeline`), over pipeline_store.py. It only
stores and finds; the rules stay in pipeline_domain.py and the use cases.

It returns typed records (pipeline_records.py, and the lead a touch locks as the leads repository's record), but
for the bulk reads of leads: those stay rows, which the pipeline reads by position (see pipeline_records). SQL only: the pipeline's tests run on the stack (tests/e2e), not in the fast
tier."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

from core import records
from core.pagination import Page, Paged, fetch_page
from services.sdr import pipeline_store as store
from services.sdr.pipeline_records import Activity, ActivityCount, SavedConfig, Window
from services.sdr.records import Lead
from services.sdr.schema import activity, leads


class PipelineRepository(Protocol):
    async def config(self, business_id: str) -> SavedConfig | None:
        """The business's saved config, or None while it has saved none."""

    async def save_config(self, business_id: str, values: dict[str, Any], now: datetime) -> SavedConfig: ...

    async def lock(self, business_id: str) -> None:
        """Serialize the business's pipeline writes (its config and its leads' computed actions)."""

    async def make_all_due(self, business_id: str) -> None:
        """Every lead's segment and next action due for computing again (after a config change that moves them)."""

    async def any_due(self, business_id: str, now: datetime) -> bool: ...

    async def due_leads(self, business_id: str, now: datetime) -> list[Any]: ...

    async def store_computed(self, computed: list[tuple[Any, ...]]) -> None: ...

    async def next_action_counts(self, business_id: str) -> dict[str | None, int]: ...

    async def hottest(self, business_id: str, *, segments: Iterable[int] | None = None,
                      next_actions: Iterable[str] | None = None, limit: int | None = None) -> list[Any]:
        """The business's leads (of these segments, with these next actions), in the pipeline's order."""

    async def escalated(self, business_id: str, limit: int) -> list[Any]:
        """The business's leads on manual review (next action escalate), oldest first."""

    async def lock_lead(self, business_id: str, lead_id: str) -> Lead | None: ...

    async def latest_done(self, lead_id: str, action: str, since: datetime) -> Activity | None: ...

    async def touch_pending(self, lead_id: str) -> Activity | None: ...

    async def add_activity(self, **values: Any) -> Activity: ...

    async def finish_activity(self, activity_id: str, values: dict[str, Any]) -> Activity: ...

    async def count_touch(self, lead_id: str, now: datetime) -> None: ...

    async def set_paused(self, lead_id: str, paused: bool, now: datetime) -> None: ...

    async def activity(self, business_id: str, lead_id: str | None, limit: int) -> list[Activity]:
        """The activity log newest first, of the business or of one of its leads."""

    async def activity_page(self, business_id: str, page: Page) -> Paged:
        """A page of the business's activity log (`Activity`s), newest first (a business's export)."""

    async def activity_counts(self, business_id: str, since: datetime) -> list[ActivityCount]: ...

    async def new_leads(self, business_id: str, since: datetime) -> int: ...

    async def businesses_due(self, window_start: datetime, business_id: str | None) -> list[str]: ...

    async def claim_window(self, business_id: str, window_start: datetime, token: str, lease_until: datetime,
                           now: datetime) -> Window | None: ...

    async def leads_worked(self, window_id: str) -> frozenset[str]: ...

    async def complete_window(self, window_id: str, token: str, now: datetime) -> bool: ...

    async def add_briefing(self, **values: Any) -> None: ...


class SqlPipeline:
    """`PipelineRepository` on a unit of work's connection (core.uow.Database)."""

    def __init__(self, conn: AsyncConnection):
        self.conn = conn

    async def config(self, business_id: str) -> SavedConfig | None:
        return records.or_none(_config, await store.config_of(self.conn, business_id))

    async def save_config(self, business_id: str, values: dict[str, Any], now: datetime) -> SavedConfig:
        return _config(await store.save_config(self.conn, business_id, values, now))

    async def lock(self, business_id: str) -> None:
        await store.lock_pipeline(self.conn, business_id)

    async def make_all_due(self, business_id: str) -> None:
        await store.make_all_due(self.conn, business_id)

    async def any_due(self, business_id: str, now: datetime) -> bool:
        return await store.any_due(self.conn, business_id, now)

    async def due_leads(self, business_id: str, now: datetime) -> list[Any]:
        return await store.due_leads(self.conn, business_id, now)

    async def store_computed(self, computed: list[tuple[Any, ...]]) -> None:
        await store.store_computed(self.conn, computed)

    async def next_action_counts(self, business_id: str) -> dict[str | None, int]:
        return await store.next_action_counts(self.conn, business_id)

    async def hottest(self, business_id: str, *, segments: Iterable[int] | None = None,
                      next_actions: Iterable[str] | None = None, limit: int | None = None) -> list[Any]:
        query = store.pipeline_leads(business_id)
        if segments is not None:
            query = query.where(leads.c.pipeline_segment.in_(list(segments)))
        if next_actions is not None:
            query = query.where(leads.c.pipeline_next.in_(list(next_actions)))
        query = store.hottest_first(query)
        return list((await self.conn.execute(query if limit is None else query.limit(limit))).all())

    async def escalated(self, business_id: str, limit: int) -> list[Any]:
        query = store.pipeline_leads(business_id).where(leads.c.pipeline_next == "escalate").order_by(
            leads.c.created_at, leads.c.id).limit(limit)
        return list((await self.conn.execute(query)).all())

    async def lock_lead(self, business_id: str, lead_id: str) -> Lead | None:
        return records.or_none(lambda row: records.record(Lead, row._mapping),
                               await store.lock_lead(self.conn, business_id, lead_id))

    async def latest_done(self, lead_id: str, action: str, since: datetime) -> Activity | None:
        return records.or_none(_activity, await store.latest_done(self.conn, lead_id, action, since))

    async def touch_pending(self, lead_id: str) -> Activity | None:
        return records.or_none(_activity, await store.touch_pending(self.conn, lead_id))

    async def add_activity(self, **values: Any) -> Activity:
        return _activity(await store.add_activity(self.conn, **values))

    async def finish_activity(self, activity_id: str, values: dict[str, Any]) -> Activity:
        return _activity(await store.finish_activity(self.conn, activity_id, values))

    async def count_touch(self, lead_id: str, now: datetime) -> None:
        await store.count_touch(self.conn, lead_id, now)

    async def set_paused(self, lead_id: str, paused: bool, now: datetime) -> None:
        await store.set_paused(self.conn, lead_id, paused, now)

    async def activity(self, business_id: str, lead_id: str | None, limit: int) -> list[Activity]:
        return [_activity(row) for row in await self.conn.execute(store.activity_of(business_id, lead_id, limit))]

    async def activity_page(self, business_id: str, page: Page) -> Paged:
        return (await fetch_page(self.conn, store.activity_of_business(business_id), activity.c.created_at,
                                 activity.c.id, page)).map(_activity)

    async def activity_counts(self, business_id: str, since: datetime) -> list[ActivityCount]:
        return [records.record(ActivityCount, row._mapping)
                for row in await store.activity_counts(self.conn, business_id, since)]

    async def new_leads(self, business_id: str, since: datetime) -> int:
        return await store.new_leads(self.conn, business_id, since)

    async def businesses_due(self, window_start: datetime, business_id: str | None) -> list[str]:
        return await store.businesses_due(self.conn, window_start, business_id)

    async def claim_window(self, business_id: str, window_start: datetime, token: str, lease_until: datetime,
                           now: datetime) -> Window | None:
        return records.or_none(_window, await store.claim_window(self.conn, business_id, window_start, token,
                                                                 lease_until, now))

    async def leads_worked(self, window_id: str) -> frozenset[str]:
        return await store.leads_worked(self.conn, window_id)

    async def complete_window(self, window_id: str, token: str, now: datetime) -> bool:
        return await store.complete_window(self.conn, window_id, token, now)

    async def add_briefing(self, **values: Any) -> None:
        await store.add_briefing(self.conn, **values)


def _config(row: Any) -> SavedConfig:
    return records.record(SavedConfig, row._mapping)


def _activity(row: Any) -> Activity:
    return records.record(Activity, row._mapping)


def _window(row: Any) -> Window:
    return records.record(Window, row._mapping)
