"""Phone-number RPCs: the business's numbers, the pool, assign and release.

A number belongs to one business at a time. Assigning checks the pool row and takes its
lease in one short transaction (core.leases; a concurrent assign of the same number gets
409 conflict), imports the number at the voice provider (linked to the agent's assistant)
with no transaction held, then records the assignment and ends the lease; if that fails,
the import is undone. Re-pointing and releasing hold the number's lease the same way
(a concurrent change waits for it); a failed re-point puts the provider number back on its
previous assistant.
"""
from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases, tenant
from core.contact import normalize_e164
from core.errors import ServiceError, not_found
from core.ids import utcnow
from core.messages import optional, set_timestamp
from core.outbox import add_event
from core.pagination import clamp_limit, page_query, split_page
from core.tenant import pick_business
from services.agents import numbers
from services.agents.agent_rpcs import find_agent, undo_at_provider
from services.agents.store import outbox, phone_numbers
from switchboard.v1 import agents_pb2, events_pb2

# How long an assign, re-point or release may hold a number, and how long a concurrent one waits for it.
NUMBER_LEASE = timedelta(seconds=60)
LEASE_WAIT_SECONDS = 25.0


def _capabilities(caps: dict) -> agents_pb2.NumberCapabilities:
    return agents_pb2.NumberCapabilities(**{c: bool(caps.get(c)) for c in numbers.CAPABILITIES})


def phone_number_message(row) -> agents_pb2.PhoneNumber:
    msg = agents_pb2.PhoneNumber(
        id=str(row.id), phone_number=row.phone_number, country=row.country, area_code=row.area_code,
        capabilities=_capabilities(row.capabilities), blocked=row.blocked,
        compliance=agents_pb2.NumberCompliance(
            a2p=agents_pb2.A2pEnrollment(status=row.a2p_status),
            emergency_address=agents_pb2.EmergencyAddress(status=row.emergency_status,
                                                          address=row.emergency_address)))
    for field in ("agent_id", "business_id"):
        if getattr(row, field) is not None:
            setattr(msg, field, str(getattr(row, field)))
    if row.block_reason is not None:
        msg.block_reason = row.block_reason
    if row.provider_phone_number_id is not None:
        msg.provider_phone_number_id = row.provider_phone_number_id
    set_timestamp(msg, "created_at", row.assigned_at)
    return msg


def _number_event(kind, row, business_id: str, agent_id):
    """A PhoneNumberAssigned or PhoneNumberReleased payload for this number."""
    return kind(id=str(row.id), phone_number=row.phone_number, business_id=business_id,
                agent_id=str(agent_id) if agent_id else None)


class NumberRpcs:
    """Mixin of AgentsServicer: phone numbers and the pool."""

    voice = None
    engine = None
    rt = None
    sip_credential_id = ""

    async def ListPhoneNumbers(self, request, context):
        who = tenant.require_account()
        query = sa.select(phone_numbers)
        reply = agents_pb2.ListPhoneNumbersReply()
        if request.all_businesses:
            query = query.where(phone_numbers.c.business_id.in_(who.business_ids))
        else:
            business_id = pick_business(who, optional(request, "business_id"))
            query = query.where(phone_numbers.c.business_id == business_id)
            reply.business_id = business_id
        if optional(request, "phone_number"):
            query = query.where(phone_numbers.c.phone_number == normalize_e164(request.phone_number))
        limit = clamp_limit(request.page.limit, *numbers.ASSIGNED_PAGE)
        query = page_query(query, phone_numbers.c.assigned_at, phone_numbers.c.id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.assigned_at, r.id))
        reply.phone_numbers.extend(phone_number_message(r) for r in rows)
        reply.page.CopyFrom(page)
        return reply

    async def ListAvailableNumbers(self, request, context):
        tenant.require_account()
        limit = clamp_limit(request.limit, *numbers.AVAILABLE_PAGE)
        pn = phone_numbers.c
        query = sa.select(phone_numbers).where(pn.business_id.is_(None), pn.blocked.is_(False),
                                               leases.free(phone_numbers))
        if optional(request, "country"):
            query = query.where(pn.country == numbers.check_country(request.country))
        if optional(request, "area_code"):
            query = query.where(pn.area_code == numbers.check_area_code(request.area_code))
        if optional(request, "capability"):
            for cap in numbers.capability_filter(request.capability):
                query = query.where(pn.capabilities[cap].as_boolean().is_(True))
        order = (pn.country, pn.area_code, pn.phone_number)
        if optional(request, "after"):
            # The cursor's place in the order follows from the number itself (as the pool derived it).
            after = normalize_e164(request.after, "after")
            facts = numbers.number_facts(after)
            query = query.where(sa.tuple_(*order) > sa.tuple_(facts.country, facts.area_code, after))
        query = query.order_by(*order).limit(limit + 1)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit)
        out = []
        for r in rows:
            entry = agents_pb2.AvailableNumber(phone_number=r.phone_number, country=r.country, area_code=r.area_code,
                                               capabilities=_capabilities(r.capabilities))
            if r.locality:
                entry.locality = r.locality
            out.append(entry)
        return agents_pb2.ListAvailableNumbersReply(numbers=out, page=page)

    async def CountPhoneNumbers(self, request, context):
        who = tenant.require_account()
        pn = phone_numbers.c
        async with self.engine.connect() as conn:
            rows = await conn.execute(sa.select(pn.business_id, sa.func.count()).where(
                pn.business_id.in_(who.business_ids)).group_by(pn.business_id))
        return agents_pb2.PhoneNumberCounts(businesses=[
            agents_pb2.BusinessNumberCount(business_id=str(b), phone_numbers=n) for b, n in rows])

    async def AssignPhoneNumber(self, request, context):
        who = tenant.require_account()
        business_id = pick_business(who, optional(request, "business_id"))
        e164 = normalize_e164(request.phone_number)
        agent_id = optional(request, "agent_id") or None
        async with self.engine.begin() as conn:
            row = await self._pool_row(conn, e164)
            assistant_id = await self._assistant_of(conn, agent_id, business_id)
            token = await leases.take(conn, phone_numbers, row.id, NUMBER_LEASE)
            if token is None:
                raise ServiceError("conflict", f"phone number {e164} is not available (another request is assigning "
                                   "it); pick another of the available numbers")
        imported = None
        try:
            body = {"provider": "byo-phone-number", "number": e164, "credentialId": self.sip_credential_id,
                    "numberE164CheckEnabled": True, "name": f"Switchboard {e164}"}
            if assistant_id:
                body["assistantId"] = assistant_id
            imported = await self.voice.import_phone_number(body)
            async with self.engine.begin() as conn:
                row = await self._leased_update(conn, row.id, token, business_id=business_id, agent_id=agent_id,
                                                provider_phone_number_id=imported["id"], assigned_at=utcnow())
                await add_event(conn, outbox, _number_event(events_pb2.PhoneNumberAssigned, row, business_id, agent_id),
                                business_id)
        except BaseException:
            if imported is not None:
                await undo_at_provider(self.voice.delete_phone_number(imported["id"]),
                                       f"assigning {e164} failed; provider number {imported['id']}")
            await leases.release(self.engine, phone_numbers, row.id, token)
            raise
        self.rt.events_committed()
        return phone_number_message(row)

    async def UpdatePhoneNumber(self, request, context):
        who = tenant.require_account()
        business_id = pick_business(who, optional(request, "business_id"))
        e164 = normalize_e164(request.phone_number)
        agent_id = optional(request, "agent_id") or None
        async with self._number_lease(e164, business_id) as (row, token):
            if (str(row.agent_id) if row.agent_id else None) == agent_id:
                return phone_number_message(row)
            async with self.engine.connect() as conn:
                assistant_id = await self._assistant_of(conn, agent_id, business_id)
                previous_assistant_id = await self._assistant_of(conn, row.agent_id and str(row.agent_id),
                                                                 business_id)
            await self.voice.update_phone_number(row.provider_phone_number_id, {"assistantId": assistant_id})
            try:
                async with self.engine.begin() as conn:
                    row = await self._leased_update(conn, row.id, token, agent_id=agent_id)
                    await add_event(conn, outbox, _number_event(events_pb2.PhoneNumberAssigned, row, business_id,
                                                                agent_id), business_id)
            except BaseException:
                await undo_at_provider(
                    self.voice.update_phone_number(row.provider_phone_number_id, {"assistantId": previous_assistant_id}),
                    f"re-pointing {e164} failed; provider number {row.provider_phone_number_id}")
                raise
        self.rt.events_committed()
        return phone_number_message(row)

    @asynccontextmanager
    async def _number_lease(self, e164: str, business_id: str):
        """The lease of a number this business holds, with its row as it is under the lease."""
        async with self.engine.connect() as conn:
            row = await self._business_row(conn, e164, business_id)
        async with leases.hold(self.engine, phone_numbers, row.id, duration=NUMBER_LEASE,
                               wait_seconds=LEASE_WAIT_SECONDS, what=f"phone number {e164}") as token:
            async with self.engine.connect() as conn:
                yield await self._business_row(conn, e164, business_id), token

    @staticmethod
    async def _leased_update(conn: AsyncConnection, row_id, token: str, **values):
        """Write a number's row and end its lease, if this request still holds it."""
        row = (await conn.execute(phone_numbers.update().where(phone_numbers.c.id == row_id,
                                                               leases.held(phone_numbers, token))
                                  .values(**values, **leases.RELEASED).returning(phone_numbers))).first()
        if row is None:
            raise ServiceError("conflict", "the provider took too long and another request changed this number "
                               "meanwhile; retry")
        return row

    @staticmethod
    async def _assistant_of(conn: AsyncConnection, agent_id: str | None, business_id: str) -> str | None:
        """The provider assistant of an agent of this business (None for no agent)."""
        if agent_id is None:
            return None
        agent = await find_agent(conn, agent_id, field="agent_id")
        if str(agent.business_id) != business_id:
            raise not_found("agent")  # an agent of the caller's other business
        return agent.provider_assistant_id

    @staticmethod
    async def _business_row(conn: AsyncConnection, e164: str, business_id: str):
        """The row of a number this business holds, or not_found."""
        row = (await conn.execute(sa.select(phone_numbers).where(
            phone_numbers.c.phone_number == e164, phone_numbers.c.business_id == business_id))).first()
        if row is None:
            raise not_found(f"phone number {e164} of this business")
        return row

    async def _pool_row(self, conn: AsyncConnection, e164: str):
        """The pool row of a number, locked; refused when it is not free."""
        row = (await conn.execute(sa.select(phone_numbers).where(phone_numbers.c.phone_number == e164)
                                  .with_for_update())).first()
        if row is None:
            raise not_found(f"phone number {e164} in the pool (pick one of the available numbers)")
        if row.blocked:
            raise ServiceError("conflict", f"phone number {e164} is blocked ({row.block_reason or 'by the carrier'}) "
                               "and cannot be assigned")
        if row.business_id is not None:
            if tenant.current().can_access(str(row.business_id)):
                raise ServiceError("conflict", f"phone number {e164} is already assigned to business "
                                   f"{row.business_id}; to give it to another agent, change the number's agent_id "
                                   "instead")
            raise ServiceError("conflict", f"phone number {e164} is not available; pick another from "
                               "the available numbers")
        return row

    async def ReleasePhoneNumber(self, request, context):
        who = tenant.require_account()
        business_id = pick_business(who, optional(request, "business_id"))
        e164 = normalize_e164(request.phone_number)
        async with self._number_lease(e164, business_id) as (row, token):
            if row.provider_phone_number_id:
                await self.voice.delete_phone_number(row.provider_phone_number_id)
            async with self.engine.begin() as conn:
                await self._leased_update(
                    conn, row.id, token, business_id=None, agent_id=None, provider_phone_number_id=None,
                    assigned_at=None, a2p_status=numbers.initial_a2p_status(row.country, row.capabilities),
                    emergency_status=numbers.initial_emergency_status(row.country, row.capabilities),
                    emergency_address=None)
                await add_event(conn, outbox, _number_event(events_pb2.PhoneNumberReleased, row, business_id,
                                                            row.agent_id), business_id)
        self.rt.events_committed()
        return agents_pb2.ReleasePhoneNumberReply(success=True, phone_number=e164, business_id=business_id)
