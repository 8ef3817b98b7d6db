"""Sdr gRPC servicer: leads, their interactions and scores, and the pipeline health audit."""
from __future__ import annotations

import functools
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import tenant
from core.bus import DurableConsumer
from core.contact import normalize_e164, normalize_email
from core.db import Prepared
from core.errors import invalid, not_found
from core.grpc_server import Runtime
from core.ids import new_id, require_uuid, utcnow
from core.messages import optional, set_timestamp
from core.outbox import add_event
from core.pagination import clamp_limit, decode_cursor, opt_datetime, split_page
from core.records import find_owned
from core.rpc import Client
from core.tenant import require_business
from services.sdr import leads as rules
from services.sdr import scoring
from services.sdr.store import LEAD_TEXT, Uuid, interactions, leads, outbox, voicemails
from services.sdr.voicemails import VOICEMAIL_SUBJECT, VoicemailRecorder
from switchboard.v1 import agents_pb2, events_pb2, sdr_pb2, sdr_pb2_grpc

LEADS_PAGE = (50, 100)
AUDIT_SAMPLE = 50
AUDIT_DEFAULTS = {"window_hours": 24, "stalled_days": 3, "hot_score": 80}
FIELDS = ("name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "status", "source",
          "source_url", "source_page", "notes", "message", "event_date", "event_type", "agent_id")
OPTIONAL_OUT = (*LEAD_TEXT, "agent_id")


PAGE_COLUMNS = [leads.c[name] for name in ("id", "business_id", "status", "source", "score", "created_at",
                                             "updated_at", *OPTIONAL_OUT)]
# List filters: the column each one compares and how.
FILTERS = {
    "statuses": lambda c: c.status == sa.func.any(sa.bindparam("statuses", type_=ARRAY(sa.Text))),
    "source": lambda c: c.source == sa.bindparam("source"),
    "agent_id": lambda c: c.agent_id == sa.bindparam("agent_id"),
    "phone": lambda c: c.phone == sa.bindparam("phone"),
    "email": lambda c: c.email == sa.bindparam("email"),
    "created_after": lambda c: c.created_at > sa.bindparam("created_after"),
    "created_before": lambda c: c.created_at < sa.bindparam("created_before"),
    "updated_after": lambda c: c.updated_at > sa.bindparam("updated_after"),
    "updated_before": lambda c: c.updated_at < sa.bindparam("updated_before"),
    "score_gte": lambda c: c.score >= sa.bindparam("score_gte"),
    "score_lte": lambda c: c.score <= sa.bindparam("score_lte"),
    # The page cursor: strictly after (created_at, id) in the newest-first order (core.pagination).
    "cursor_at": lambda c: sa.tuple_(c.created_at, c.id) < sa.tuple_(sa.bindparam("cursor_at"), sa.bindparam("cursor_id")),
}


@functools.cache
def lead_page(filters: frozenset[str], single_business: bool) -> Prepared:
    """The page statement for one combination of filters, compiled once (see core.db.Prepared).
    A key of one business compares business_id with `=`, so the newest-first index order serves the page
    without a sort."""
    c = leads.c
    if single_business:
        mine = c.business_id == sa.bindparam("business_id")
    else:
        mine = c.business_id == sa.func.any(sa.bindparam("business_ids", type_=ARRAY(Uuid)))
    query = sa.select(*PAGE_COLUMNS).where(mine, *(FILTERS[f](c) for f in sorted(filters)))
    return Prepared(query.order_by(c.created_at.desc(), c.id.desc()).limit(sa.bindparam("limit")))


def lead_message(row) -> sdr_pb2.Lead:
    lead = sdr_pb2.Lead(id=str(row["id"]), business_id=str(row["business_id"]), status=row["status"],
                        source=row["source"], score=row["score"])
    for field in OPTIONAL_OUT:
        value = row[field]
        if value is not None:
            setattr(lead, field, str(value))
    set_timestamp(lead, "created_at", row["created_at"])
    set_timestamp(lead, "updated_at", row["updated_at"])
    return lead


def _given(fields: sdr_pb2.LeadFields) -> dict[str, str]:
    return {f: getattr(fields, f) for f in FIELDS if fields.HasField(f)}


def _score(values: dict, now) -> scoring.Score:
    return scoring.score_lead(scoring.LeadFacts(
        source=values["source"], status=values["status"], has_email=bool(values.get("email")),
        has_phone=bool(values.get("phone")), interactions=values.get("interaction_count") or 0,
        last_activity=values["last_activity_at"], intent=values.get("intent")), now)


def _score_columns(score: scoring.Score) -> dict:
    return {"score": score.score, "score_confidence": score.confidence, "score_explanation": score.explanation,
            "score_factors": score.factors}


def _require_business(business_id: str) -> str:
    return require_business(tenant.require_account(), business_id)


class SdrServicer(sdr_pb2_grpc.SdrServicer):
    def __init__(self, runtime: Runtime, agents: Client):
        self.rt = runtime
        self.engine = runtime.engine
        self.agents = agents  # of the Agents service, forwarding the caller (Runtime.client)

    async def _agent_name(self, agent_id: str, business_id: str) -> str:
        """The name of an agent of this business (asked of the agents service as the caller), or 400."""
        reply = await self.agents.LookupAgents(agents_pb2.LookupAgentsRequest(ids=[agent_id]))
        for agent in reply.agents:
            if agent.id == agent_id and agent.business_id == business_id:
                return agent.name
        raise invalid("agent_id is not an agent of this business")

    async def _scored(self, conn: AsyncConnection, row, score: scoring.Score) -> None:
        await add_event(conn, outbox, events_pb2.LeadScored(
            lead_id=str(row.id), score=score.score, confidence=score.confidence, explanation=score.explanation,
            factors=score.factors), str(row.business_id))

    async def _insert(self, conn: AsyncConnection, business_id: str, values: dict) -> object:
        now = utcnow()
        values = {**values, "interaction_count": 0, "last_activity_at": now}
        score = _score(values, now)
        row = (await conn.execute(leads.insert().values(
            id=new_id(), business_id=business_id, created_at=now, updated_at=now, **values, **_score_columns(score))
            .returning(leads))).first()
        await add_event(conn, outbox, events_pb2.LeadCreated(
            id=str(row.id), name=row.name, email=row.email, phone=row.phone, source=row.source), business_id)
        await self._scored(conn, row, score)
        return row

    async def _update(self, conn: AsyncConnection, row, values: dict):
        """Write changed values, rescore, and emit lead.scored when the score moved."""
        now = utcnow()
        merged = {**row._mapping, **values}
        score = _score(merged, now)
        updated = (await conn.execute(leads.update().where(leads.c.id == row.id).values(
            **values, **_score_columns(score), updated_at=now).returning(leads))).first()
        if score.score != row.score:
            await self._scored(conn, updated, score)
        return updated

    # -- the public lead API -------------------------------------------------------------

    async def CreateLead(self, request, context):
        business_id = _require_business(request.business_id)
        values = rules.new_lead_values(_given(request.fields))
        if values.get("agent_id"):
            values["agent_name"] = await self._agent_name(values["agent_id"], business_id)
        async with self.engine.begin() as conn:
            row = await self._insert(conn, business_id, values)
        self.rt.events_committed()
        return lead_message(row._mapping)

    async def UpdateLead(self, request, context):
        async with self.engine.begin() as conn:
            row = await find_owned(conn, leads, request.id, "lead", lock=True)
            values = rules.changed_values(dict(row._mapping), _given(request.fields))
            if values:
                row = await self._update(conn, row, values)
        self.rt.events_committed()
        return lead_message(row._mapping)

    async def GetLead(self, request, context):
        async with self.engine.connect() as conn:
            return lead_message((await find_owned(conn, leads, request.id, "lead"))._mapping)

    async def ListLeads(self, request, context):
        who = tenant.require_account()
        limit = clamp_limit(request.page.limit, *LEADS_PAGE)
        values: dict = {"business_ids": list(who.business_ids), "business_id": who.business_ids[0] if
                        who.business_ids else None, "limit": limit + 1}
        if request.statuses:
            values["statuses"] = [rules.check_status(s) for s in request.statuses]
        if optional(request, "source"):
            values["source"] = request.source
        if optional(request, "agent_id"):
            values["agent_id"] = require_uuid(request.agent_id, "agent_id")
        if optional(request, "phone"):
            values["phone"] = normalize_e164(request.phone, "phone")
        if optional(request, "email"):
            values["email"] = normalize_email(request.email)
        for field in ("created_after", "updated_after", "updated_before"):
            if (bound := opt_datetime(request, field)) is not None:
                values[field] = bound
        for field in ("score_gte", "score_lte"):
            if (score := optional(request, field)) is not None:
                if not 0 <= score <= 100:
                    raise invalid(f"{field} must be between 0 and 100")
                values[field] = score
        # created_before and the deprecated `after` are the same cursor; with both, the earlier wins.
        cursors = [t for t in (opt_datetime(request, "created_before"), opt_datetime(request.page, "after")) if t]
        if cursors:
            values["created_before"] = min(cursors)
        if request.page.cursor:
            values["cursor_at"], values["cursor_id"] = decode_cursor(request.page.cursor, leads.c.id)
        statement = lead_page(frozenset(values) - {"business_ids", "business_id", "limit", "cursor_id"},
                              len(who.business_ids) == 1)
        rows, page = split_page(await statement.fetch(self.rt.pool, **values), limit,
                                lambda r: (r["created_at"], r["id"]))
        return sdr_pb2.ListLeadsReply(leads=[lead_message(r) for r in rows], page=page)

    async def AuditLeads(self, request, context):
        who = tenant.require_account()
        window = optional(request, "window_hours") or AUDIT_DEFAULTS["window_hours"]
        stalled = optional(request, "stalled_days") or AUDIT_DEFAULTS["stalled_days"]
        hot = AUDIT_DEFAULTS["hot_score"] if optional(request, "hot_score") is None else request.hot_score
        rules.check_audit(window, stalled, hot)
        as_of = opt_datetime(request, "as_of") or utcnow()
        c = leads.c
        mine = c.business_id.in_(who.business_ids)
        open_ = c.status.in_(rules.OPEN_STATUSES)
        quiet_since = as_of - timedelta(days=stalled)
        groups = {
            "hot_leads": (sa.and_(mine, open_, c.score >= hot, c.created_at <= as_of),
                          (c.score.desc(), c.created_at.desc())),
            "stalled_leads": (sa.and_(mine, open_, c.updated_at < quiet_since, c.last_activity_at < quiet_since),
                              (c.updated_at.asc(),)),
            "signups_today": (sa.and_(mine, c.created_at > as_of - timedelta(hours=window), c.created_at <= as_of),
                              (c.created_at.desc(),)),
        }
        reply = sdr_pb2.LeadAudit(window_hours=window, stalled_days=stalled, hot_score=hot)
        set_timestamp(reply, "as_of", as_of)
        async with self.engine.connect() as conn:
            for name, (where, order) in groups.items():
                count = await conn.scalar(sa.select(sa.func.count()).select_from(leads).where(where))
                rows = (await conn.execute(sa.select(leads).where(where).order_by(*order).limit(AUDIT_SAMPLE))).all()
                getattr(reply, name).CopyFrom(sdr_pb2.LeadGroup(count=count, leads=[lead_message(r._mapping) for r in rows]))
            where = self._unhandled_voicemails(who.business_ids, as_of)
            count = await conn.scalar(sa.select(sa.func.count()).select_from(voicemails).where(where))
            rows = (await conn.execute(sa.select(voicemails).where(where).order_by(voicemails.c.received_at.desc())
                                       .limit(AUDIT_SAMPLE))).all()
        reply.voicemails_unhandled.count = count
        for r in rows:
            v = sdr_pb2.Voicemail(id=str(r.id), business_id=str(r.business_id))
            for field in ("lead_id", "call_id", "from_number", "transcript", "recording_url"):
                if getattr(r, field) is not None:
                    setattr(v, field, str(getattr(r, field)))
            set_timestamp(v, "received_at", r.received_at)
            reply.voicemails_unhandled.voicemails.append(v)
        return reply

    @staticmethod
    def _unhandled_voicemails(business_ids, as_of):
        """Voicemails received by `as_of` that nobody has called or texted back since."""
        vm, i = voicemails.c, interactions.c
        answered = sa.exists().where(
            i.business_id == vm.business_id, i.direction == "outbound", i.occurred_at > vm.received_at,
            i.lead_id.in_(sa.select(leads.c.id).where(leads.c.business_id == vm.business_id,
                                                      sa.or_(leads.c.id == vm.lead_id, leads.c.phone == vm.from_number))))
        return sa.and_(vm.business_id.in_(business_ids), vm.received_at <= as_of, ~answered)

    # -- for other services ------------------------------------------------------------------

    async def FindLeadByPhone(self, request, context):
        business_id = _require_business(request.business_id)
        phone = normalize_e164(request.phone, "phone")
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(leads).where(leads.c.business_id == business_id,
                                                             leads.c.phone == phone)
                                      .order_by(leads.c.created_at.desc()).limit(1))).first()
        if row is None:
            raise not_found("lead with this phone")
        return lead_message(row._mapping)

    async def UpsertContact(self, request, context):
        business_id = _require_business(request.business_id)
        phone = normalize_e164(request.phone, "phone")
        given = {"phone": phone, "source": request.source or "inbound_call"}
        for field in ("name", "email", "agent_id", "agent_name"):
            if optional(request, field):
                given[field] = getattr(request, field)
        values = rules.new_lead_values(given)
        async with self.engine.begin() as conn:
            # One contact per business and number at a time: concurrent upserts of one caller wait here.
            await conn.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext(f"{business_id}:{phone}"))))
            row = (await conn.execute(sa.select(leads).where(leads.c.business_id == business_id,
                                                             leads.c.phone == phone)
                                      .order_by(leads.c.created_at.desc()).limit(1).with_for_update())).first()
            if row is None:
                row, created = await self._insert(conn, business_id, values), True
            else:
                missing = {k: v for k, v in values.items() if k in ("name", "email", "agent_id", "agent_name")
                           and getattr(row, k) is None}
                if missing:
                    row = await self._update(conn, row, missing)
                created = False
        self.rt.events_committed()
        return sdr_pb2.UpsertContactReply(lead=lead_message(row._mapping), created=created)

    async def RecordInteraction(self, request, context):
        rules.check_interaction(request.channel, request.direction, request.reference)
        occurred = opt_datetime(request, "occurred_at") or utcnow()
        async with self.engine.begin() as conn:
            row = await find_owned(conn, leads, request.lead_id, "lead", field="lead_id", lock=True)
            inserted = (await conn.execute(insert(interactions).values(
                lead_id=row.id, business_id=row.business_id, channel=request.channel, direction=request.direction,
                reference=request.reference, intent=optional(request, "intent"), occurred_at=occurred)
                .on_conflict_do_nothing(constraint="interactions_once").returning(interactions.c.id))).first()
            if inserted is not None:
                values = {"interaction_count": row.interaction_count + 1,
                          "last_activity_at": max(row.last_activity_at, occurred)}
                if optional(request, "intent"):
                    values["intent"] = request.intent
                row = await self._update(conn, row, values)
        self.rt.events_committed()
        return lead_message(row._mapping)


def build(runtime: Runtime) -> SdrServicer:
    runtime.run(DurableConsumer(runtime.bus, "sdr-voicemails", VoicemailRecorder(runtime.engine).handle,
                                filter_subject=VOICEMAIL_SUBJECT))
    return SdrServicer(runtime, runtime.client("agents"))
