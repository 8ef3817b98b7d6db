"""The sales pipeline's use cases: the SDR config of a business and its pipeline (every lead's segment, the page's
leads with their next actions). The rules are services.sdr.pipeline_domain's; this module loads the facts they
read. The caller's tenant comes from core.tenant; a business it names must be one of its own (403 otherwise).

Each lead's segment and next action without the compliance facts are stored on the lead (services.sdr.pipeline_repository)
with the instant the clock may change them; a read first computes the leads that are due (whose signals changed,
whose instant passed, or all after a config change that moves them), then counts and pages from the stored values
through one index. The leads of the page also get the outbound compliance decision now (do-not-call, consent, the
legal window and the business hours in the lead's own time, the frequency cap), from one GetStandings call to the
messaging service.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from contracts import pipeline as pipeline_contract
from contracts.pipeline import ACTIVITY_LIMIT, PERIODS, PIPELINE_LIMIT
from core import tenant
from core.compliance import decision as compliance
from core.errors import invalid
from core.ids import require_uuid, utcnow
from core.uow import UnitOfWork
from services.sdr import pipeline_domain as rules
from services.sdr.pipeline_records import Activity, SavedConfig
from services.sdr.ports import Neighbours
from services.sdr.repository import SdrUnit
from services.sdr.schema import CONFIG_COLUMNS, SIGNAL_COLUMNS

REPORT_LIST = 50  # hot and stale leads listed at most
SIGNALS_WIDTH = len(SIGNAL_COLUMNS)
SEGMENT_RANK = {name: rank for rank, name in enumerate(pipeline_contract.SEGMENTS)}  # stored as the pipeline's order
STANDINGS_BATCH = 5_000  # leads whose compliance facts one GetStandings call asks (its limit is 10,000 phones)


@dataclass(frozen=True)
class ConfigView:
    business_id: str
    config: rules.Config
    saved: bool
    updated_at: datetime | None = None


@dataclass(frozen=True)
class PipelineLead:
    row: Any  # the lead as the pipeline repository reads it
    signals: rules.Signals
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


def signals_of(row: Any) -> rules.Signals:
    """A lead row's signals, by name (a whole lead row; the pipeline's own reads go by position)."""
    return rules.Signals(*(getattr(row, name) for name in SIGNAL_COLUMNS))


def pipeline_lead(row: Any, config: rules.Config, now: datetime) -> PipelineLead:
    """A lead read by the pipeline repository, with its segment and its next action without the compliance facts."""
    signals = rules.Signals(*row[:SIGNALS_WIDTH])  # by position: by name is most of the time at 100k leads
    seg = rules.segment(signals, config, now)
    return PipelineLead(row, signals, seg, rules.next_action(signals, seg, config, None, now))


class Pipeline:
    def __init__(self, uow: UnitOfWork[SdrUnit], others: Neighbours, policy: compliance.Policy):
        self.uow, self.others = uow, others  # asked as the caller (services.sdr.ports)
        self.policy = policy  # the platform's configured caps (core.settings), for the decisions it previews

    # -- config ---------------------------------------------------------------------------------------------

    async def config(self, business_id: str) -> ConfigView:
        business_id = tenant.require_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            row = await work.pipeline.config(business_id)
        return _config_view(business_id, row)

    async def put_config(self, business_id: str, changes: dict[str, Any]) -> ConfigView:
        business_id = tenant.require_business(tenant.require_account(), business_id)
        current = await self.config(business_id)
        config = rules.changed_config(current.config, changes)
        if changes.get("sdr_agent_id") is not None and config.sdr_agent_id:
            await self._check_agent(business_id, config.sdr_agent_id)
        if changes.get("email_from_account_id") is not None and config.email_from_account_id:
            await self._check_sender(business_id, config.email_from_account_id)
        values = {k: v for k, v in asdict(config).items() if k in CONFIG_COLUMNS}
        async with self.uow.transaction() as work:
            await work.pipeline.lock(business_id)
            row = await work.pipeline.save_config(business_id, values, utcnow())
            if rules.changes_next_actions(current.config, config):
                await work.pipeline.make_all_due(business_id)
        return _config_view(business_id, row)

    async def _check_agent(self, business_id: str, agent_id: str) -> None:
        require_uuid(agent_id, "sdr_agent_id")
        agent_business, number = await self.others.agents.line(agent_id)
        if agent_business != business_id:
            raise invalid("sdr_agent_id names an agent of another business")
        if number is None:
            raise invalid("sdr_agent_id names an agent without a phone number: assign it a number first")

    async def _check_sender(self, business_id: str, account_id: str) -> None:
        """The only verified sender of a business's email today is its owner's account (its address is verified by
        the sign-in link)."""
        owner = await self.others.accounts.owner(business_id)
        if account_id != owner.account_id:
            raise invalid("email_from_account_id must be the id of the business owner's account (the verified "
                          "sender of its email); leave it out to send from the owner's address")

    # -- the pipeline ---------------------------------------------------------------------------------------

    async def pipeline(self, business_id: str, segment: str | None, limit: int | None) -> PipelineView:
        if segment is not None and segment not in pipeline_contract.SEGMENTS:
            raise invalid(f"segment must be one of {', '.join(pipeline_contract.SEGMENTS)}")
        default, most = PIPELINE_LIMIT
        limit = limit or default
        if not 1 <= limit <= most:
            raise invalid(f"limit must be from 1 to {most}")
        view = await self.config(business_id)
        config, now = view.config, utcnow()
        await self._computed(view.business_id, now)
        async with self.uow.read() as work:
            counts = await work.pipeline.next_action_counts(view.business_id)
            rows = await work.pipeline.hottest(
                view.business_id, segments=[SEGMENT_RANK[segment]] if segment is not None else None, limit=limit)
        chosen = [pipeline_lead(row, config, now) for row in rows]
        return PipelineView(view.business_id, config.enabled, sum(counts.values()),
                            sum(counts.get(action, 0) for action in rules.TOUCHES), counts.get("escalate", 0),
                            await self._decided(view.business_id, config, chosen, now))

    async def worklist(self, business_id: str) -> tuple[rules.Config, list[PipelineLead], int]:
        """The business's config, every lead whose next action is a touch or an escalation now (hottest first),
        each decided with the compliance facts (what a run works through), and how many leads the business has."""
        view = await self.config(business_id)
        config, now = view.config, utcnow()
        await self._computed(view.business_id, now)
        async with self.uow.read() as work:
            total = sum((await work.pipeline.next_action_counts(view.business_id)).values())
            rows = await work.pipeline.hottest(view.business_id, next_actions=(*rules.TOUCHES, "escalate"))
        candidates = [pipeline_lead(row, config, now) for row in rows]
        return config, await self._decided(view.business_id, config, candidates, now), total

    async def _computed(self, business_id: str, now: datetime) -> None:
        """Compute and store the segment and next action of the business's leads that are due: between reads
        those whose signals changed or whose instant passed, after a config change that moves them all of them."""
        async with self.uow.read() as work:
            if not await work.pipeline.any_due(business_id, now):
                return
        async with self.uow.transaction() as work:
            await work.pipeline.lock(business_id)
            config = _config_view(business_id, await work.pipeline.config(business_id)).config
            computed: list[tuple[Any, ...]] = []
            for row in await work.pipeline.due_leads(business_id, now):
                lead = pipeline_lead(row, config, now)
                computed.append((row.id, row.pipeline_stamp, SEGMENT_RANK[lead.segment], lead.next.action,
                                 rules.steady_until(lead.signals, config, now)))
            await work.pipeline.store_computed(computed)

    async def _decided(self, business_id: str, config: rules.Config, chosen: list[PipelineLead],
                       now: datetime) -> list[PipelineLead]:
        """These leads with their next actions decided again with the compliance facts."""
        facts: dict[str, rules.Facts] = {}
        rows = [lead.row for lead in chosen]
        for start in range(0, len(rows), STANDINGS_BATCH):
            facts.update(await self._facts(business_id, rows[start:start + STANDINGS_BATCH]))
        return [replace(lead, next=rules.next_action(lead.signals, lead.segment, config, facts.get(str(lead.row.id)),
                                                     now)) for lead in chosen]

    async def report(self, business_id: str, period: str | None) -> Report:
        """What the pipeline did in the period (actions by kind, activity by status, leads that came in) and where it
        stands: the hot leads (segments speed_to_lead, fresh_demo_caller, new_trial_stuck) and the stale ones on
        manual review (next action escalate), hottest and oldest first."""
        period = period or "week"
        if period not in PERIODS:
            raise invalid(f"period must be one of {', '.join(PERIODS)}")
        view = await self.config(business_id)
        now = utcnow()
        span = PERIODS[period]
        since = now - span if span else now.replace(hour=0, minute=0, second=0, microsecond=0)
        async with self.uow.read() as work:
            counts = await work.pipeline.activity_counts(view.business_id, since)
            arrived = await work.pipeline.new_leads(view.business_id, since)
        actions = dict.fromkeys(pipeline_contract.ACTIONS, 0)
        outcomes = dict.fromkeys(("done", "failed", "pending"), 0)
        for count in counts:
            outcomes[count.status] = outcomes.get(count.status, 0) + count.count
            if count.status == "done":
                actions[count.action] = actions.get(count.action, 0) + count.count
        await self._computed(view.business_id, now)
        hot_ranks = [SEGMENT_RANK[name] for name in rules.HOT_SEGMENTS]
        async with self.uow.read() as work:
            hot_rows = await work.pipeline.hottest(view.business_id, segments=hot_ranks, limit=REPORT_LIST)
            stale_rows = await work.pipeline.escalated(view.business_id, REPORT_LIST)
        return Report(view.business_id, period, since, now, actions, outcomes, arrived,
                      [pipeline_lead(row, view.config, now) for row in hot_rows],
                      [pipeline_lead(row, view.config, now) for row in stale_rows])

    async def activity(self, business_id: str, lead_id: str | None, limit: int) -> list[Activity]:
        """The activity log newest first, of the business or of one of its leads."""
        business_id = tenant.require_business(tenant.require_account(), business_id)
        if lead_id is not None:
            require_uuid(lead_id, "leadId")
        if not 1 <= limit <= ACTIVITY_LIMIT[1]:
            raise invalid(f"limit must be from 1 to {ACTIVITY_LIMIT[1]}")
        async with self.uow.read() as work:
            return await work.pipeline.activity(business_id, lead_id, limit)

    async def _facts(self, business_id: str, rows: list[Any]) -> dict[str, rules.Facts]:
        """Each lead's compliance facts, by lead id (a lead without a phone has none to ask)."""
        phones = sorted({row.phone for row in rows if row.phone})
        if not phones:
            return {}
        found = await self.others.messaging.standings(business_id, phones)
        facts: dict[str, rules.Facts] = {}
        for row in rows:
            if row.phone in found:
                standing, recent = found[row.phone]
                callee = compliance.Callee(row.phone, lead_id=str(row.id), lead_state=row.state,
                                           lead_status=row.status, converted_at=row.converted_at,
                                           last_inbound_at=row.last_inbound_at)
                facts[str(row.id)] = rules.Facts(standing, callee, recent, self.policy)
        return facts


def _config_view(business_id: str, row: SavedConfig | None) -> ConfigView:
    if row is None:
        return ConfigView(business_id, rules.Config(), saved=False)
    values = {name: getattr(row, name) for name in CONFIG_COLUMNS}
    return ConfigView(business_id, rules.Config(**values), saved=True, updated_at=row.updated_at)
