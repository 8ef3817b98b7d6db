"""The sales pipeline's use cases: the SDR config of a business and its pipeline (every lead's segment, the page's
leads with their next actions). The rules are services.sdr.pipeline_domain's; this module loads the facts they
read. The caller's tenant comes from core.tenant; a business it names must be one of its own (403 otherwise).

The pipeline reads each lead's signals in one statement (its interactions aggregated per lead). Every lead's
segment is computed for the summary, whose counts go by segment, auto toggles and cadence; the leads of the page
also get the outbound compliance decision now (do-not-call, consent, the legal window and the business hours in
the lead's own time, the frequency cap), from one GetStandings call to the messaging service.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from core import tenant
from core.compliance import decision as compliance
from core.errors import invalid
from core.ids import require_uuid, utcnow
from core.rpc import Client
from services.sdr import pipeline_domain as rules
from services.sdr import pipeline_store as store
from services.sdr.standings import callee_standings
from services.sdr.store import interactions, leads
from switchboard.v1 import accounts_pb2, agents_pb2

PIPELINE_LIMIT = (100, 500)  # default and most leads on a page
ACTIVITY_LIMIT = (50, 200)  # default and most activity entries
REPORT_LIST = 50  # hot and stale leads listed at most
PERIODS = {"today": None, "week": timedelta(days=7), "month": timedelta(days=30)}  # today: since UTC midnight
# The lead columns the pipeline reads for every lead on every read (not the notes and messages): first the signals,
# in the order of pipeline_domain.Signals's fields (the inbound interactions' three follow them), then what a
# pipeline lead shows and the state the compliance decision places a callee by.
SIGNAL_COLUMNS = ("status", "source", "created_at", "updated_at", "touch_count", "last_touch_at", "paused", "phone",
                  "email")
SIGNALS_WIDTH = len(SIGNAL_COLUMNS) + 3
SHOWN_COLUMNS = ("id", "business_id", "name", "first_name", "last_name", "state", "score")
STANDINGS_BATCH = 5_000  # leads whose compliance facts one GetStandings call asks (its limit is 10,000 phones)


@dataclass(frozen=True)
class ConfigView:
    business_id: str
    config: rules.Config
    saved: bool
    updated_at: datetime | None = None


@dataclass(frozen=True)
class PipelineLead:
    row: object  # the lead with its signals
    segment: str
    next: rules.NextAction


@dataclass(frozen=True)
class Report:
    business_id: str
    period: str
    since: datetime
    until: datetime
    actions: dict[str, int]  # done actions by kind
    outcomes: dict[str, int]  # activity entries by status
    new_leads: int
    hot: list[PipelineLead]
    stale: list[PipelineLead]


@dataclass(frozen=True)
class PipelineView:
    business_id: str
    enabled: bool
    total: int
    actionable: int
    needs_manual: int
    leads: list[PipelineLead]


def signals_of(row) -> rules.Signals:
    """A lead row's signals (its inbound interactions where the row carries them: _signals_query)."""
    return rules.Signals(status=row.status, source=row.source, created_at=row.created_at, updated_at=row.updated_at,
                         touch_count=row.touch_count, last_touch=row.last_touch_at, paused=row.paused,
                         phone=row.phone, email=row.email, **{
                             name: getattr(row, name, None)
                             for name in ("last_inbound_call", "last_inbound", "first_inbound")})


def _signals_query(business_id: str) -> sa.Select:
    """The business's leads with what their inbound interactions say (latest call, latest and first of any)."""
    i = interactions.c
    inbound = sa.select(
        i.lead_id, sa.func.max(i.occurred_at).filter(i.channel == "call").label("last_inbound_call"),
        sa.func.max(i.occurred_at).label("last_inbound"), sa.func.min(i.occurred_at).label("first_inbound"),
    ).where(i.business_id == business_id, i.direction == "inbound").group_by(i.lead_id).subquery()
    return sa.select(*(leads.c[name] for name in SIGNAL_COLUMNS), inbound.c.last_inbound_call,
                     inbound.c.last_inbound, inbound.c.first_inbound,
                     *(leads.c[name] for name in SHOWN_COLUMNS)).outerjoin(
        inbound, inbound.c.lead_id == leads.c.id).where(leads.c.business_id == business_id)


class Pipeline:
    def __init__(self, engine: AsyncEngine, agents: Client, accounts: Client, messaging: Client):
        self.engine, self.agents, self.accounts, self.messaging = engine, agents, accounts, messaging

    # -- config ---------------------------------------------------------------------------------------------

    async def config(self, business_id: str) -> ConfigView:
        business_id = tenant.require_business(tenant.require_account(), business_id)
        async with self.engine.connect() as conn:
            row = await store.config_of(conn, business_id)
        return _config_view(business_id, row)

    async def put_config(self, business_id: str, changes: dict) -> ConfigView:
        business_id = tenant.require_business(tenant.require_account(), business_id)
        current = await self.config(business_id)
        config = rules.changed_config(current.config, changes)
        if changes.get("sdr_agent_id") is not None and config.sdr_agent_id:
            await self._check_agent(business_id, config.sdr_agent_id)
        if changes.get("email_from_account_id") is not None and config.email_from_account_id:
            await self._check_sender(business_id, config.email_from_account_id)
        values = {k: v for k, v in asdict(config).items() if k in store.CONFIG_COLUMNS}
        async with self.engine.begin() as conn:
            row = await store.save_config(conn, business_id, values, utcnow())
        return _config_view(business_id, row)

    async def _check_agent(self, business_id: str, agent_id: str) -> None:
        require_uuid(agent_id, "sdr_agent_id")
        profile = await self.agents.GetCallingProfile(agents_pb2.GetCallingProfileRequest(agent_id=agent_id))
        if profile.business_id != business_id:
            raise invalid("sdr_agent_id names an agent of another business")
        if not profile.HasField("phone_number"):
            raise invalid("sdr_agent_id names an agent without a phone number: assign it a number first")

    async def _check_sender(self, business_id: str, account_id: str) -> None:
        """The only verified sender of a business's email today is its owner's account (its address is verified by
        the sign-in link)."""
        owner = await self.accounts.GetWorkspaceOwner(accounts_pb2.GetWorkspaceRequest(id=business_id))
        if account_id != owner.account_id:
            raise invalid("email_from_account_id must be the id of the business owner's account (the verified "
                          "sender of its email); leave it out to send from the owner's address")

    # -- the pipeline ---------------------------------------------------------------------------------------

    async def pipeline(self, business_id: str, segment: str | None, limit: int | None) -> PipelineView:
        if segment is not None and segment not in rules.SEGMENTS:
            raise invalid(f"segment must be one of {', '.join(rules.SEGMENTS)}")
        default, most = PIPELINE_LIMIT
        limit = default if not limit else limit
        if not 1 <= limit <= most:
            raise invalid(f"limit must be from 1 to {most}")
        view = await self.config(business_id)
        config, now = view.config, utcnow()
        everyone = await self._segmented(view.business_id, config, now)
        actionable = needs_manual = 0
        for lead in everyone:
            actionable += lead.next.action in rules.TOUCHES
            needs_manual += lead.next.action == "escalate"
        chosen = [lead for lead in everyone if segment is None or lead.segment == segment]
        order = {segment_: n for n, segment_ in enumerate(rules.SEGMENTS)}
        chosen.sort(key=lambda p: (order[p.segment], -p.row.score, -p.row.created_at.timestamp()))
        return PipelineView(view.business_id, config.enabled, len(everyone), actionable, needs_manual,
                            await self._decided(view.business_id, config, chosen[:limit], now))

    async def worklist(self, business_id: str) -> tuple[rules.Config, list[PipelineLead], int]:
        """The business's config, every lead whose next action is a touch or an escalation now, each decided with
        the compliance facts (what a run works through), and how many leads the business has."""
        view = await self.config(business_id)
        config, now = view.config, utcnow()
        everyone = await self._segmented(view.business_id, config, now)
        candidates = [lead for lead in everyone if lead.next.action in (*rules.TOUCHES, "escalate")]
        return config, await self._decided(view.business_id, config, candidates, now), len(everyone)

    async def _segmented(self, business_id: str, config: rules.Config, now: datetime) -> list[PipelineLead]:
        """Every lead of the business with its segment and its next action by segment, toggles and cadence (the
        compliance decision not asked)."""
        async with self.engine.connect() as conn:
            rows = (await conn.execute(_signals_query(business_id))).all()
        leads_ = []
        for row in rows:
            signals = rules.Signals(*row[:SIGNALS_WIDTH])  # by position: by name is most of the time at 100k leads
            seg = rules.segment(signals, config, now)
            leads_.append(PipelineLead(row, seg, rules.next_action(signals, seg, config, None, now)))
        return leads_

    async def _decided(self, business_id: str, config: rules.Config, chosen: list[PipelineLead],
                       now: datetime) -> list[PipelineLead]:
        """These leads with their next actions decided again with the compliance facts."""
        facts: dict[str, rules.Facts] = {}
        rows = [lead.row for lead in chosen]
        for start in range(0, len(rows), STANDINGS_BATCH):
            facts.update(await self._facts(business_id, rows[start:start + STANDINGS_BATCH]))
        return [PipelineLead(lead.row, lead.segment, rules.next_action(
            signals_of(lead.row), lead.segment, config, facts.get(str(lead.row.id)), now)) for lead in chosen]

    async def report(self, business_id: str, period: str | None) -> Report:
        """What the pipeline did in the period (actions by kind, activity by status, leads that came in) and where it
        stands: the hot leads (segments speed_to_lead, fresh_demo_caller, new_trial_stuck) and the stale ones on
        manual review (next action escalate), hottest and oldest first."""
        period = period or "week"
        if period not in PERIODS:
            raise invalid(f"period must be one of {', '.join(PERIODS)}")
        view = await self.config(business_id)
        now = utcnow()
        since = now - PERIODS[period] if PERIODS[period] else now.replace(hour=0, minute=0, second=0, microsecond=0)
        async with self.engine.connect() as conn:
            counts = await store.activity_counts(conn, view.business_id, since)
            arrived = await store.new_leads(conn, view.business_id, since)
        actions = dict.fromkeys(rules.ACTIONS, 0)
        outcomes = dict.fromkeys(("done", "failed", "pending"), 0)
        for action, status, n in counts:
            outcomes[status] = outcomes.get(status, 0) + n
            if status == "done":
                actions[action] = actions.get(action, 0) + n
        everyone = await self._segmented(view.business_id, view.config, now)
        hot = sorted((p for p in everyone if p.segment in rules.HOT_SEGMENTS),
                     key=lambda p: (rules.HOT_SEGMENTS.index(p.segment), -p.row.score, -p.row.created_at.timestamp()))
        stale = sorted((p for p in everyone if p.next.action == "escalate"), key=lambda p: p.row.created_at)
        return Report(view.business_id, period, since, now, actions, outcomes, arrived, hot[:REPORT_LIST],
                      stale[:REPORT_LIST])

    async def activity(self, business_id: str, lead_id: str | None, limit: int) -> list:
        """The activity log newest first, of the business or of one of its leads."""
        business_id = tenant.require_business(tenant.require_account(), business_id)
        if lead_id is not None:
            require_uuid(lead_id, "leadId")
        if not 1 <= limit <= ACTIVITY_LIMIT[1]:
            raise invalid(f"limit must be from 1 to {ACTIVITY_LIMIT[1]}")
        async with self.engine.connect() as conn:
            return (await conn.execute(store.activity_of(business_id, lead_id, limit))).all()

    async def _facts(self, business_id: str, rows: list) -> dict[str, rules.Facts]:
        """Each lead's compliance facts, by lead id (a lead without a phone has none to ask)."""
        phones = sorted({row.phone for row in rows if row.phone})
        if not phones:
            return {}
        found = await callee_standings(self.messaging, business_id, phones)
        facts = {}
        for row in rows:
            if row.phone in found:
                standing, calls = found[row.phone]
                callee = compliance.Callee(row.phone, lead_id=str(row.id), lead_state=row.state,
                                           lead_status=row.status)
                facts[str(row.id)] = rules.Facts(standing, callee, calls)
        return facts


def _config_view(business_id: str, row) -> ConfigView:
    if row is None:
        return ConfigView(business_id, rules.Config(), saved=False)
    values = {name: getattr(row, name) for name in store.CONFIG_COLUMNS}
    if values["sdr_agent_id"] is not None:
        values["sdr_agent_id"] = str(values["sdr_agent_id"])
    return ConfigView(business_id, rules.Config(**values), saved=True, updated_at=row.updated_at)
