"""Lead use cases: transactions, scoring on every write, events, and the agent lookup in the agents
service. Callers are the servicer and the service-layer tests; the caller's tenant comes from core.tenant.
Storage is reached through the unit of work alone (`SdrUnit`'s lead repository, services.sdr.repository) and events
are raised with `work.emit`. Leads come back as typed records (services.sdr.records)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from contracts import leads as leads_contract
from core import aggregates, tenant
from core.contact import normalize_e164, normalize_email
from core.errors import invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged, decode_cursor
from core.tenant import require_business
from core.uow import UnitOfWork
from services.sdr import domain, scoring
from services.sdr.ports import Agents
from services.sdr.records import Lead, Voicemail
from services.sdr.repository import SdrUnit
from services.sdr.schema import leads
from switchboard.v1 import common_pb2, events_pb2


@dataclass(frozen=True)
class LeadFilters:
    """The list's filters, as given (unchecked); None or empty means no filter."""

    statuses: tuple[str, ...] = ()
    source: str | None = None
    agent_id: str | None = None
    phone: str | None = None
    email: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    score_gte: int | None = None
    score_lte: int | None = None


@dataclass(frozen=True)
class Contact:
    """A call or text with someone, as another service's event tells of it (Leads.record_contacts)."""

    business_id: str
    phone: str  # the other party's
    lead_id: str | None  # the lead it was linked to, if any
    channel: str  # call, sms
    direction: str  # inbound, outbound
    reference: str  # the call id, the message sid: counted once
    collected: dict[str, str]  # name, email as far as the agent collected them
    intent: str | None
    occurred_at: datetime


R = TypeVar("R")


@dataclass(frozen=True)
class AuditGroup(Generic[R]):
    count: int
    rows: list[R]


@dataclass(frozen=True)
class Audit:
    window_hours: int
    stalled_days: int
    hot_score: int
    as_of: datetime
    groups: dict[str, AuditGroup[Lead]]  # hot_leads, stalled_leads, signups_today
    voicemails: AuditGroup[Voicemail]


class Leads:
    def __init__(self, uow: UnitOfWork[SdrUnit], agents: Agents | None):
        self.uow = uow
        self.agents = agents  # the agents port, asked as the caller (services.sdr.ports)

    # -- the public lead API -------------------------------------------------------------

    async def create(self, business_id: str, given: dict[str, str]) -> Lead:
        business_id = require_business(tenant.require_account(), business_id)
        values = domain.new_lead_values(given)
        if values.get("agent_id"):
            values["agent_name"] = await self._agent_name(values["agent_id"], business_id)
        async with self.uow.transaction() as work:
            row = await self._insert(work, business_id, values)
        return row

    async def update(self, lead_id: str, given: dict[str, str]) -> Lead:
        async with self.uow.transaction() as work:
            row = await self._owned(work, lead_id, lock=True)
            values = domain.changed_values(asdict(row), given)
            values.update(domain.email_known_at(values))
            if values:
                row = await self._update(work, row, values)
        return row

    async def get(self, lead_id: str) -> Lead:
        async with self.uow.read() as work:
            return await self._owned(work, lead_id)

    async def aggregate(self, query: aggregates.Query, agent_id: str | None,
                        source: str | None) -> list[common_pb2.AggregateRow]:
        """Analytics (services.sdr.analytics_service): the leads of the query's businesses created in its window,
        counted per group (core.aggregates): how many, and how many converted."""
        agent_id = require_uuid(agent_id, "agent_id") if agent_id else None
        async with self.uow.read() as work:
            rows = await work.leads.aggregate(query, agent_id, source)
        return aggregates.rows_of(rows, query.group_by)

    async def list(self, filters: LeadFilters, page: Page) -> Paged:
        """The caller's leads that pass the filters (`ListedLead`s), newest first."""
        who = tenant.require_account()
        values: dict[str, Any] = {}
        if filters.statuses:
            values["statuses"] = [domain.check_status(s) for s in filters.statuses]
        if filters.source:
            values["source"] = filters.source
        if filters.agent_id:
            values["agent_id"] = require_uuid(filters.agent_id, "agent_id")
        if filters.phone:
            values["phone"] = normalize_e164(filters.phone, "phone")
        if filters.email:
            values["email"] = normalize_email(filters.email)
        for name in ("created_after", "updated_after", "updated_before"):
            if getattr(filters, name) is not None:
                values[name] = getattr(filters, name)
        for name in ("score_gte", "score_lte"):
            if getattr(filters, name) is not None:
                values[name] = domain.check_score_bound(name, getattr(filters, name))
        # created_before and the deprecated `after` are the same cursor; with both, the earlier wins.
        cursors = [t for t in (filters.created_before, page.after) if t]
        if cursors:
            values["created_before"] = min(cursors)
        if page.cursor:
            values["cursor_at"], values["cursor_id"] = decode_cursor(page.cursor, leads.c.id)
        async with self.uow.read() as work:
            return await work.leads.page(list(who.business_ids), page.limit, values)

    async def audit(self, window_hours: int | None, stalled_days: int | None, hot_score: int | None,
                    as_of: datetime | None) -> Audit:
        """The pipeline health audit; unset bounds take domain.AUDIT_DEFAULTS."""
        who = tenant.require_account()
        window = window_hours or leads_contract.AUDIT_DEFAULTS["window_hours"]
        stalled = stalled_days or leads_contract.AUDIT_DEFAULTS["stalled_days"]
        hot = leads_contract.AUDIT_DEFAULTS["hot_score"] if hot_score is None else hot_score
        domain.check_audit(window, stalled, hot)
        as_of = as_of or utcnow()
        async with self.uow.read() as work:
            groups, unhandled = await work.leads.audit(
                list(who.business_ids), as_of, leads_contract.OPEN_STATUSES, hot, as_of - timedelta(days=stalled),
                as_of - timedelta(hours=window), domain.AUDIT_SAMPLE)
        return Audit(window, stalled, hot, as_of, {name: AuditGroup(*group) for name, group in groups.items()},
                     AuditGroup(*unhandled))

    # -- for other services ------------------------------------------------------------------

    async def find_by_phone(self, business_id: str, phone: str) -> Lead | None:
        """The business's newest lead with this phone, or None."""
        business_id = require_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            return await work.leads.newest_by_phone(business_id, normalize_e164(phone, "phone"))

    async def upsert_contact(self, business_id: str, phone: str, given: dict[str, str]) -> tuple[Lead, bool]:
        """The business's lead with this phone, created (True) or completed with the contact fields it lacked
        (False). `given` holds source, name, email, agent_id and agent_name as far as known."""
        async with self.uow.transaction() as work:
            found = await self._upsert_contact(work, business_id, phone, given)
        return found

    async def record_interaction(self, lead_id: str, channel: str, direction: str, reference: str,
                                 intent: str | None, occurred_at: datetime | None) -> Lead:
        """Count a call, text or email with the lead once per reference, and rescore it."""
        domain.check_interaction(channel, direction, reference)
        async with self.uow.transaction() as work:
            row = await self._owned(work, lead_id, field="lead_id", lock=True)
            row = await self._interaction(work, row, channel, direction, reference, intent, occurred_at)
        return row

    async def record_caller(self, business_id: str, phone: str, call_id: str, direction: str, lead_id: str | None,
                            given: dict[str, str], intent: str | None) -> tuple[Lead, bool, tuple[str, ...]]:
        """What a caller said on a call (domain.caller_values) written on the call's lead, else the business's newest
        lead with the phone, created (source inbound_call or outbound_call) when there is none; an entry in the
        lead's activity log names the call. (the lead, created, the fields written)"""
        business_id = require_business(tenant.require_account(), business_id)
        require_uuid(call_id, "call_id")
        domain.check_interaction("call", direction, call_id)
        phone = normalize_e164(phone, "phone")
        values = domain.caller_values(given, intent)
        async with self.uow.transaction() as work:
            row = await self._owned(work, lead_id, field="lead_id", lock=True) if lead_id else None
            if row is None:
                row = await self._contact_lead(work, business_id, phone)
            changes = values if (created := row is None) else domain.caller_changes(asdict(row), values)
            if "email" in changes:  # the person's word on an inbound call (domain.email_given_on_call)
                changes = {**changes, "email_known_at": utcnow() if direction == "inbound" else None}
            if row is None:
                row = await self._insert(work, business_id, {**domain.new_lead_values(
                    {"source": f"{direction}_call", "phone": phone, **given}), **changes})
            elif changes:
                row = await self._update(work, row, changes)
            changed = tuple(name for name in (*domain.CALLER_FIELDS, "intent") if name in changes)
            if changed or created:
                now = utcnow()
                await work.pipeline.add_activity(
                    id=new_id(), business_id=business_id, lead_id=str(row.id), action=domain.CALL_UPDATE,
                    status="done", detail=domain.call_update_detail(changed, created, values), reference=call_id,
                    origin="call", created_at=now, updated_at=now)
        return row, created, changed

    async def record_contacts(self, contacts: Sequence[Contact], actor: str) -> None:
        """Calls and texts with people (a consumer's batch of events), in this order and in one transaction, each
        acting for its business as `actor`: counted on the linked lead, or on the business's lead with that phone
        (made from what was collected when there is none yet, source e.g. inbound_call or inbound_sms), once per
        reference (the call id, the message sid). Their events are written together when the unit commits
        (core.uow)."""
        async with self.uow.transaction() as work:
            for contact in contacts:
                with tenant.acting_as(tenant.acting_for(contact.business_id, actor)):
                    await self._contact(work, contact)

    async def _contact(self, work: SdrUnit, c: Contact) -> None:
        domain.check_interaction(c.channel, c.direction, c.reference)
        if c.lead_id:
            row = await self._owned(work, c.lead_id, field="lead_id", lock=True)
        else:
            row, _ = await self._upsert_contact(work, c.business_id, c.phone,
                                                {"source": f"{c.direction}_{c.channel}", **c.collected})
        if domain.email_given_on_call(asdict(row), c.direction, c.collected):
            row = await self._update(work, row, {"email_known_at": c.occurred_at})
        await self._interaction(work, row, c.channel, c.direction, c.reference, c.intent, c.occurred_at)

    async def _upsert_contact(self, work: SdrUnit, business_id: str, phone: str,
                              given: dict[str, str]) -> tuple[Lead, bool]:
        """upsert_contact within the caller's transaction; the lead is left locked."""
        business_id = require_business(tenant.require_account(), business_id)
        phone = normalize_e164(phone, "phone")
        values = domain.new_lead_values({"source": domain.CONTACT_SOURCE, **given, "phone": phone})
        row = await self._contact_lead(work, business_id, phone)
        if row is None:
            return await self._insert(work, business_id, values), True
        missing = domain.missing_contact_values(asdict(row), values)
        return (await self._update(work, row, missing) if missing else row), False

    @staticmethod
    async def _contact_lead(work: SdrUnit, business_id: str, phone: str) -> Lead | None:
        """The business's newest lead with this phone, locked; one contact per business and number at a time:
        concurrent upserts of one caller wait here."""
        await work.leads.lock_contact(business_id, phone)
        return await work.leads.newest_by_phone(business_id, phone, lock=True)

    async def _interaction(self, work: SdrUnit, row: Lead, channel: str, direction: str, reference: str,
                           intent: str | None, occurred_at: datetime | None) -> Lead:
        """Count an interaction on a lead locked by the caller, once per reference; returns the lead."""
        occurred = occurred_at or utcnow()
        if not await work.leads.add_interaction(row, channel, direction, reference, intent, occurred):
            return row
        values = {"interaction_count": row.interaction_count + 1,
                  "last_activity_at": max(row.last_activity_at, occurred)}
        if intent:
            values["intent"] = intent
        return await self._update(work, row, values)

    # -- steps -----------------------------------------------------------------------------

    async def _owned(self, work: SdrUnit, lead_id: str, *, field: str = "id", lock: bool = False) -> Lead:
        """The caller's lead with this id (held for update with `lock`), or 404; `field` names the request field in
        the 400 for a malformed id."""
        require_uuid(lead_id, field)
        row = await work.leads.owned(tenant.require_account().business_ids, lead_id, lock=lock)
        if row is None:
            raise not_found("lead")
        return row

    async def _agent_name(self, agent_id: str, business_id: str) -> str:
        """The name of an agent of this business (asked of the agents service as the caller), or 400."""
        if self.agents is None:
            raise RuntimeError("naming a lead's agent asks the agents service: build Leads with the agents port")
        name = await self.agents.name(agent_id, business_id)
        if name is None:
            raise invalid("agent_id is not an agent of this business")
        return name

    async def _insert(self, work: SdrUnit, business_id: str, values: dict[str, Any]) -> Lead:
        now = utcnow()
        values = {**values, "interaction_count": 0, "last_activity_at": now}
        score = domain.score(values, now)
        row = await work.leads.add(business_id, {**values, **domain.score_columns(score)}, now)
        work.emit(events_pb2.LeadCreated(
            id=str(row.id), name=row.name, email=row.email, phone=row.phone, source=row.source), business_id)
        self._scored(work, row, score)
        return row

    async def _update(self, work: SdrUnit, row: Lead, values: dict[str, Any]) -> Lead:
        """Write changed values, rescore, and emit lead.scored when the score moved."""
        now = utcnow()
        score = domain.score({**asdict(row), **values}, now)
        updated = await work.leads.change(row.id, {**values, **domain.score_columns(score),
                                                            "updated_at": now})
        assert updated is not None  # the caller holds the lead
        if score.score != row.score:
            self._scored(work, updated, score)
        return updated

    @staticmethod
    def _scored(work: SdrUnit, row: Lead, score: scoring.Score) -> None:
        work.emit(events_pb2.LeadScored(
            lead_id=str(row.id), score=score.score, confidence=score.confidence, explanation=score.explanation,
            factors=score.factors), str(row.business_id))
