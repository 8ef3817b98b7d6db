"""The queries on the messaging schema's tables (schema.py), each taking a connection."""
from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from core import leases
from core.columns import Uuid
from core.compliance.decision import Counted
from core.db import lock_until_commit
from services.messaging import domain
from services.messaging.domain import Allowance
from services.messaging.national_registry import AREA_SPAN
from services.messaging.records import National
from services.messaging.schema import (
    HASHED_PREFIX,
    SCHEMA,
    approved_recipients,
    compliance_decisions,
    consent_events,
    conversations,
    counted_touches,
    daily_spend,
    dnc_entries,
    emails,
    messages,
    national_dnc,
    national_dnc_areas,
    outbox,
)

# -- conversations and messages --------------------------------------------------------------------

# The send path's statements (several per text) are built once, with bound parameters, and run with their values: a
# statement built per call costs its construction and its cache key each time (issue 38's profile of SMS sends).

@functools.lru_cache(maxsize=8)
def _into_thread(columns: tuple[str, ...]) -> sa.Insert:
    """add_to_thread's statement for a message of these columns (a send's, an inbound text's): each column bound as
    `m_<column>`, the thread's counts as `inbound`, `outbound`, `unread`."""
    c = conversations.c
    bound = {name: sa.bindparam(f"m_{name}", type_=messages.c[name].type) for name in columns}
    upsert = insert(conversations).values(
        id=sa.func.gen_random_uuid(), business_id=bound["business_id"],
        business_number=sa.bindparam("business_number", type_=sa.Text),
        contact_number=sa.bindparam("contact_number", type_=sa.Text), agent_id=bound.get("agent_id", sa.null()),
        lead_id=bound.get("lead_id", sa.null()), inbound_count=sa.bindparam("inbound", type_=sa.Integer),
        outbound_count=sa.bindparam("outbound", type_=sa.Integer), unread_count=sa.bindparam("unread", type_=sa.Integer),
        last_message_at=bound["created_at"], last_message_id=bound["id"], created_at=bound["created_at"])
    thread = upsert.on_conflict_do_update(constraint="conversations_one_per_pair", set_={
        "agent_id": sa.func.coalesce(c.agent_id, upsert.excluded.agent_id),
        "lead_id": sa.func.coalesce(c.lead_id, upsert.excluded.lead_id),
        "inbound_count": c.inbound_count + upsert.excluded.inbound_count,
        "outbound_count": c.outbound_count + upsert.excluded.outbound_count,
        "unread_count": c.unread_count + upsert.excluded.unread_count,
        "last_message_at": upsert.excluded.last_message_at, "last_message_id": upsert.excluded.last_message_id,
    }).returning(c.id, c.lead_id).cte("thread")
    values: dict[str, sa.ColumnElement[Any]] = dict(bound)
    values["conversation_id"] = thread.c.id
    values["lead_id"] = sa.func.coalesce(bound.get("lead_id", sa.null()), thread.c.lead_id)
    added = insert(messages).from_select(list(values), sa.select(*values.values()).select_from(thread))
    return added.on_conflict_do_nothing(index_elements=["business_id", "idempotency_key"],
                                        index_where=messages.c.idempotency_key.isnot(None)).returning(messages)


async def add_to_thread(conn: AsyncConnection, *, business_number: str, contact_number: str,
                        **values: Any) -> sa.Row[Any] | None:
    """A message (`values`: its columns, with a fresh `id`) on the thread of a business number and a contact, in one
    statement: the thread is created on first use or locked and moved on (its counts, latest message, and the agent
    and lead it had none of), then the message is added to it. Returns the message; None when its business already
    has a message with its idempotency key: then the thread has moved on all the same, and the caller rolls the
    transaction back."""
    inbound = int(values["direction"] == "inbound")
    params = {f"m_{name}": value for name, value in values.items()}
    params.update(business_number=business_number, contact_number=contact_number, inbound=inbound,
                  outbound=1 - inbound, unread=inbound)
    return (await conn.execute(_into_thread(tuple(values)), params)).first()


_UPDATE_MESSAGE = messages.update().where(messages.c.id == sa.bindparam("the_message_id")).returning(messages)


async def update_message(conn: AsyncConnection, message_id: str, values: dict[str, Any]) -> sa.Row[Any] | None:
    """The message with `values` (its columns) set."""
    updated = await conn.execute(_UPDATE_MESSAGE, {"the_message_id": message_id, **values})
    row: sa.Row[Any] | None = updated.first()
    return row


_LOCKED_BY_ID = sa.select(messages).where(messages.c.id == sa.bindparam("message_id")).with_for_update()
_LOCKED_BY_SID = sa.select(messages).where(messages.c.provider_sid == sa.bindparam("sid")).with_for_update()


async def message_for_callback(conn: AsyncConnection, message_id: str | None, sid: str) -> sa.Row[Any] | None:
    """The outbound message a status callback is about, locked: by our id (in the callback URL), else the sid."""
    if message_id:
        row = (await conn.execute(_LOCKED_BY_ID, {"message_id": message_id})).first()
        if row is not None:
            return row
    return (await conn.execute(_LOCKED_BY_SID, {"sid": sid})).first()


async def unknown_messages(conn: AsyncConnection, settled_before: datetime, limit: int) -> list[sa.Row[Any]]:
    """Outbound texts of unknown outcome whose last change is older than `settled_before`, oldest first."""
    m = messages.c
    return list((await conn.execute(sa.select(messages).where(m.status == "unknown", m.updated_at < settled_before)
                                    .order_by(m.updated_at).limit(limit))).all())


async def unsettled_messages(conn: AsyncConnection, now: datetime, after: timedelta, since: datetime,
                             limit: int) -> list[sa.Row[Any]]:
    """Outbound texts the provider took (they have its sid) with no outcome yet, sent since `since`, whose check is
    due: `after` past their last change the first time, then when the last check said (oldest first)."""
    m = messages.c
    due = sa.func.coalesce(m.status_check_due, m.updated_at + after)
    return list((await conn.execute(sa.select(messages).where(
        m.status.in_(domain.IN_FLIGHT), m.provider_sid.isnot(None), m.created_at >= since, due <= now)
        .order_by(m.updated_at).limit(limit))).all())


async def checked(conn: AsyncConnection, message_id: str, checks: int, next_due: datetime) -> None:
    """The provider was asked about the text (`checks` times now); ask again at `next_due` if it is still open."""
    await conn.execute(sa.update(messages).where(messages.c.id == message_id)
                       .values(status_checks=checks, status_check_due=next_due))


async def known_sids(conn: AsyncConnection, sids: list[str], besides: str) -> set[str]:
    """Those of `sids` that messages other than `besides` already carry."""
    m = messages.c
    return set((await conn.scalars(sa.select(m.provider_sid).where(m.provider_sid.in_(sids), m.id != besides))).all())


async def message_by_key(conn: AsyncConnection, business_id: str, key: str) -> sa.Row[Any] | None:
    m = messages.c
    return (await conn.execute(sa.select(messages).where(m.business_id == business_id,
                                                         m.idempotency_key == key))).first()


async def message_by_sid(conn: AsyncConnection, sid: str) -> sa.Row[Any] | None:
    return (await conn.execute(sa.select(messages).where(messages.c.provider_sid == sid))).first()


_last = messages.alias("last_message")


def conversations_of(business_ids: Iterable[str], conversation_id: str | None) -> sa.Select[Any]:
    """Threads with their latest message's preview, direction and status."""
    query = (sa.select(conversations, _last.c.body.label("last_body"), _last.c.direction.label("last_direction"),
                       _last.c.status.label("last_status"))
             .select_from(conversations.outerjoin(_last, _last.c.id == conversations.c.last_message_id))
             .where(conversations.c.business_id.in_(business_ids)))
    return query.where(conversations.c.id == conversation_id) if conversation_id else query


def messages_of(business_ids: Iterable[str], conversation_id: str | None, direction: str | None) -> sa.Select[Any]:
    query = sa.select(messages).where(messages.c.business_id.in_(business_ids))
    if conversation_id:
        query = query.where(messages.c.conversation_id == conversation_id)
    return query.where(messages.c.direction == direction) if direction else query


async def mark_read(conn: AsyncConnection, conversation_id: str) -> None:
    await conn.execute(conversations.update().where(conversations.c.id == conversation_id).values(unread_count=0))


# -- consent ---------------------------------------------------------------------------------------

async def add_consent(conn: AsyncConnection, **values: Any) -> None:
    await conn.execute(consent_events.insert().values(**values))


async def consent_history(conn: AsyncConnection, business_id: str, phone: str) -> list[sa.Row[Any]]:
    c = consent_events.c
    return list((await conn.execute(sa.select(consent_events).where(c.business_id == business_id, c.phone == phone)
                                    .order_by(c.id))).all())


# -- do-not-call -------------------------------------------------------------------------------------

async def listed(conn: AsyncConnection, business_id: str, phone: str) -> sa.Row[Any] | None:
    d = dnc_entries.c
    return (await conn.execute(sa.select(dnc_entries).where(d.business_id == business_id, d.phone == phone,
                                                            d.removed_at.is_(None)))).first()


async def add_dnc(conn: AsyncConnection, **values: Any) -> sa.Row[Any] | None:
    """The listed entry: the new one, or the one already there."""
    added = (await conn.execute(insert(dnc_entries).values(**values).on_conflict_do_nothing(
        index_elements=["business_id", "phone"], index_where=dnc_entries.c.removed_at.is_(None))
        .returning(dnc_entries))).first()
    return added or await listed(conn, values["business_id"], values["phone"])


async def remove_dnc(conn: AsyncConnection, business_id: str, phone: str, **values: Any) -> sa.Row[Any] | None:
    d = dnc_entries.c
    removed = await conn.execute(dnc_entries.update().where(d.business_id == business_id, d.phone == phone,
                                                            d.removed_at.is_(None)).values(**values)
                                 .returning(dnc_entries))
    row: sa.Row[Any] | None = removed.first()
    return row


def dnc_of(business_id: str) -> sa.Select[Any]:
    return sa.select(dnc_entries).where(dnc_entries.c.business_id == business_id, dnc_entries.c.removed_at.is_(None))


# -- compliance ------------------------------------------------------------------------------------

def _any(phones: list[str]) -> sa.ColumnElement[Any]:
    """`= ANY(:phones)`, the list bound as one array parameter (however many phones)."""
    return sa.any_(sa.bindparam("phones", phones, type_=ARRAY(sa.Text), unique=True))


# A phone's standing with a business: its listed do-not-call entry (or None), its consent history (oldest first) and
# what the national registry's loaded data says of it (None when its area code was never imported).
Standing = tuple[sa.Row[Any] | None, list[sa.Row[Any]], National | None]


async def standing(conn: AsyncConnection, business_id: str, phone: str) -> Standing:
    """(the business's do-not-call entry or None, the consent history, National or None) of a phone."""
    return (await standings(conn, business_id, [phone]))[phone]


def registry_number(phone: str) -> int | None:
    """A +1 number's ten digits as national_dnc keys it; None for any other."""
    return int(phone[2:]) if phone.startswith("+1") and len(phone) == 12 and phone[2:].isdigit() else None


def _standings() -> sa.CompoundSelect[Any]:
    d, c, a, n = dnc_entries.c, consent_events.c, national_dnc_areas.c, national_dnc.c
    business_id, phones = sa.bindparam("business_id", type_=Uuid), sa.any_(sa.bindparam("phones", type_=ARRAY(sa.Text)))
    listed = sa.select(d.phone, sa.literal(True).label("listed"), sa.null().cast(sa.Text).label("kind"), d.created_at,
                       sa.null().cast(sa.BigInteger).label("id")).where(
        d.business_id == business_id, d.phone == phones, d.removed_at.is_(None))
    consented = sa.select(c.phone, sa.literal(False), c.kind, c.created_at, c.id).where(
        c.business_id == business_id, c.phone == phones)
    asked = sa.func.unnest(sa.bindparam("phones", type_=ARRAY(sa.Text)),
                           sa.bindparam("numbers", type_=ARRAY(sa.BigInteger))).table_valued(
        "phone", sa.column("number", sa.BigInteger)).render_derived(name="asked")
    national = sa.select(asked.c.phone, sa.literal(False),
                         sa.case((n.number.is_(None), "national"), else_="national_listed"), a.refreshed_at,
                         sa.null().cast(sa.BigInteger)).select_from(
        asked.join(national_dnc_areas, a.area_code == asked.c.number // AREA_SPAN)
        .outerjoin(national_dnc, n.number == asked.c.number))
    return sa.union_all(listed, consented, national).order_by(sa.literal_column("id"))


_STANDINGS = _standings()


async def standings(conn: AsyncConnection, business_id: str, phones: list[str]) -> dict[str, Standing]:
    """{phone: (the business's do-not-call entry or None, the consent history oldest first, National or None)} of
    each phone, in one statement (it is on the path of every text and call): an entry has its created_at, an event
    its kind and created_at; National is there when the phone's area code was imported."""
    entries: dict[str, sa.Row[Any]] = {}
    histories: dict[str, list[sa.Row[Any]]] = {phone: [] for phone in phones}
    national: dict[str, National] = {}
    numbers = [registry_number(phone) for phone in phones]
    for row in await conn.execute(_STANDINGS, {"business_id": business_id, "phones": phones, "numbers": numbers}):
        if row.listed:
            entries[row.phone] = row
        elif row.kind in ("national", "national_listed"):
            national[row.phone] = National(row.created_at, row.kind == "national_listed")
        else:
            histories[row.phone].append(row)
    return {phone: (entries.get(phone), histories[phone], national.get(phone)) for phone in phones}


async def lock_callee(conn: AsyncConnection, business_id: str, phone: str) -> None:
    """Serialize the decisions on one business's callee until the transaction ends (the frequency cap is counted
    and a slot taken under it, so two touches racing cannot both take the last slot)."""
    await lock_until_commit(conn, "compliance-callee", f"{business_id}:{phone}")


async def recent_touches_of(conn: AsyncConnection, business_id: str, phones: list[str],
                            since: datetime) -> dict[str, list[Counted]]:
    """{phone: the touches (calls and texts) counted against its frequency caps since `since`, oldest first}, in
    one statement."""
    s = counted_touches.c
    placed: dict[str, list[Counted]] = {phone: [] for phone in phones}
    for phone, channel, at in await conn.execute(sa.select(s.phone, s.channel, s.placed_at).where(
            s.business_id == business_id, s.phone == _any(phones), s.placed_at > since, s.released_at.is_(None))
            .order_by(s.placed_at)):
        placed[phone].append(Counted(channel, at))
    return placed


# The touch in the ledger and in its business's spend of the day, in one statement, only while the day's count of
# its channel is under `limit` (and, with `seconds_limit`, the day's call seconds under it): else nothing is written.
_COUNT_TOUCH = sa.text("""
WITH spent AS (
    INSERT INTO messaging.daily_spend AS d (business_id, day, what, used)
    SELECT CAST(:business_id AS uuid), CAST(:day AS date), CAST(:channel AS text), 1
    WHERE CAST(:limit AS bigint) > 0 AND (CAST(:seconds_limit AS bigint) IS NULL OR (
        SELECT coalesce(max(m.used), 0) FROM messaging.daily_spend m
        WHERE m.business_id = CAST(:business_id AS uuid) AND m.day = CAST(:day AS date)
          AND m.what = 'call_seconds') < CAST(:seconds_limit AS bigint))
    ON CONFLICT (business_id, day, what) DO UPDATE SET used = d.used + 1 WHERE d.used < CAST(:limit AS bigint)
    RETURNING d.used)
INSERT INTO messaging.counted_touches (decision_id, business_id, phone, channel, placed_at)
SELECT CAST(:decision_id AS uuid), CAST(:business_id AS uuid), CAST(:phone AS text), CAST(:channel AS text),
       CAST(:placed_at AS timestamptz) FROM spent
RETURNING decision_id""")


async def count_touch(conn: AsyncConnection, *, decision_id: str, business_id: str, phone: str, channel: str,
                      placed_at: datetime, within: Allowance) -> bool:
    """The touch a logged decision let through, in the ledger (under the callee's lock: lock_callee) and counted in
    its business's spend of the day, if `within` its limits; False (nothing written) when the day's limit is
    reached."""
    counted = await conn.execute(_COUNT_TOUCH, {
        "decision_id": decision_id, "business_id": business_id, "phone": phone, "channel": channel,
        "placed_at": placed_at, "day": within.day, "limit": within.limit, "seconds_limit": within.seconds_limit})
    return counted.first() is not None


# A touch never placed: its slot freed and its count in the day's spend given back, in one statement.
_RELEASE_TOUCH = sa.text("""
WITH released AS (
    UPDATE messaging.counted_touches SET released_at = CAST(:at AS timestamptz)
    WHERE decision_id = CAST(:decision_id AS uuid) AND business_id = ANY(CAST(:business_ids AS uuid[]))
      AND released_at IS NULL
    RETURNING business_id, channel, placed_at),
given_back AS (
    UPDATE messaging.daily_spend d SET used = d.used - 1 FROM released r
    WHERE d.business_id = r.business_id AND d.what = r.channel
      AND d.day = CAST(r.placed_at AT TIME ZONE 'UTC' AS date) AND d.used > 0)
SELECT count(*) FROM released""")


async def release_touch(conn: AsyncConnection, decision_id: str, business_ids: Iterable[str], at: datetime) -> bool:
    """Free the slot of a touch that was never placed (the provider refused it), and give its count back to the day's
    spend; False when none is held."""
    released = await conn.execute(_RELEASE_TOUCH, {"decision_id": decision_id, "business_ids": list(business_ids),
                                                   "at": at})
    return bool(released.scalar())


async def spent_on(conn: AsyncConnection, business_ids: Iterable[str], day: date) -> dict[str, dict[str, int]]:
    """{business id: {what: used}} on `day`, for the businesses that spent anything."""
    s = daily_spend.c
    found: dict[str, dict[str, int]] = {}
    for business_id, what, used in await conn.execute(sa.select(s.business_id, s.what, s.used).where(
            s.business_id.in_(list(business_ids)), s.day == day)):
        found.setdefault(str(business_id), {})[what] = int(used)
    return found


_ADD_CALL_SECONDS = sa.text("""
WITH fresh AS (
    INSERT INTO messaging.call_seconds (call_id, business_id, day, seconds)
    SELECT * FROM unnest(CAST(:call_ids AS uuid[]), CAST(:business_ids AS uuid[]), CAST(:days AS date[]),
                         CAST(:seconds AS int[]))
    ON CONFLICT (call_id) DO NOTHING
    RETURNING business_id, day, seconds)
INSERT INTO messaging.daily_spend AS d (business_id, day, what, used)
SELECT business_id, day, 'call_seconds', sum(seconds) FROM fresh GROUP BY business_id, day
ON CONFLICT (business_id, day, what) DO UPDATE SET used = d.used + excluded.used""")


async def add_call_seconds(conn: AsyncConnection, ended: list[tuple[str, str, date, int]]) -> None:
    """Ended calls' seconds ((call id, business id, day, seconds)) in their businesses' spend of that day, each call
    once."""
    if ended:
        call_ids, business_ids, days, seconds = (list(column) for column in zip(*ended, strict=True))
        await conn.execute(_ADD_CALL_SECONDS, {"call_ids": call_ids, "business_ids": business_ids, "days": days,
                                               "seconds": seconds})


_ADD_DECISION = compliance_decisions.insert().returning(compliance_decisions)


async def add_decision(conn: AsyncConnection, **values: Any) -> sa.Row[Any]:
    row: sa.Row[Any] = (await conn.execute(_ADD_DECISION, values)).one()
    return row


def decisions_of(business_id: str, phone: str | None, lead_id: str | None) -> sa.Select[Any]:
    d = compliance_decisions.c
    query = sa.select(compliance_decisions).where(d.business_id == business_id)
    if phone:
        query = query.where(d.phone == phone)
    return query.where(d.lead_id == lead_id) if lead_id else query


# -- the email queue ---------------------------------------------------------------------------------

async def queue_email(conn: AsyncConnection, **values: Any) -> sa.Row[Any] | None:
    """The queued email; None when its business already has one with that reference."""
    queued = await conn.execute(insert(emails).values(**values).on_conflict_do_nothing(
        constraint="emails_one_per_reference").returning(emails))
    row: sa.Row[Any] | None = queued.first()
    return row


def emails_of(business_ids: Iterable[str], status: str | None, email_id: str | None = None) -> sa.Select[Any]:
    query = sa.select(emails).where(emails.c.business_id.in_(business_ids))
    if email_id:
        query = query.where(emails.c.id == email_id)
    return query.where(emails.c.status == status) if status else query


async def api_emails_since(conn: AsyncConnection, business_id: str, since: datetime) -> tuple[int, datetime | None]:
    """How many emails API callers queued for the business since `since`, and the oldest one's time."""
    e = emails.c
    row = (await conn.execute(sa.select(sa.func.count(), sa.func.min(e.created_at)).where(
        e.business_id == business_id, e.kind == "api", e.created_at > since))).one()
    return row[0], row[1]


async def approve_email(conn: AsyncConnection, email_id: str, business_ids: Iterable[str],
                        **values: Any) -> sa.Row[Any] | None:
    """Approve an email waiting for approval (None when there is none such of those businesses)."""
    e = emails.c
    approved = await conn.execute(emails.update().where(e.id == email_id, e.business_id.in_(business_ids),
                                                        e.status == "pending_approval")
                                  .values(status="approved", **values).returning(emails))
    row: sa.Row[Any] | None = approved.first()
    return row


async def is_approved_recipient(conn: AsyncConnection, business_id: str, address: str) -> bool:
    r = approved_recipients.c
    return bool(await conn.scalar(sa.select(sa.literal(True)).where(r.business_id == business_id,
                                                                    r.address == address)))


async def approve_recipient(conn: AsyncConnection, business_id: str, address: str, approved_by: str,
                            approved_at: datetime) -> None:
    """Record the owner's approval of an address (the first one stands)."""
    await conn.execute(insert(approved_recipients).values(business_id=business_id, address=address,
                                                          approved_by=approved_by, approved_at=approved_at)
                       .on_conflict_do_nothing())


async def claim_due_emails(conn: AsyncConnection, now: datetime, duration: timedelta,
                           limit: int) -> list[tuple[sa.Row[Any], str]]:
    """Take the lease of up to `limit` approved emails that are due; [(row, token)]."""
    e = emails.c
    due = (await conn.execute(sa.select(emails).where(e.status == "approved", e.next_attempt_at <= now,
                                                      leases.free(emails))
                              .order_by(e.next_attempt_at).limit(limit).with_for_update(skip_locked=True))).all()
    taken = [(row, await leases.take(conn, emails, row.id, duration)) for row in due]
    return [(row, token) for row, token in taken if token is not None]  # each is free and locked: all are taken


async def leased_email_update(conn: AsyncConnection, email_id: str, token: str,
                              values: dict[str, Any]) -> sa.Row[Any] | None:
    updated = await conn.execute(emails.update().where(emails.c.id == email_id, leases.held(emails, token))
                                 .values(**values, **leases.RELEASED).returning(emails))
    row: sa.Row[Any] | None = updated.first()
    return row


# -- a person's erasure (services.messaging.erasure) -------------------------------------------------

def _contact() -> sa.ColumnElement[Any]:
    """A message's other party: who texted an inbound one, to whom an outbound one went."""
    m = messages.c
    return sa.case((m.direction == "inbound", m.from_number), else_=m.to_number)


async def messages_to_erase(conn: AsyncConnection, business_id: str, phones: list[str],
                            message_ids: list[str]) -> list[Any]:
    """The business's messages with one of `phones` (those of its threads with them: a message's other party is its
    thread's contact, and the thread is found by index) or among `message_ids`, not erased yet (their other party
    still a number): (id, conversation_id, provider_sid, contact)."""
    m, c, contact = messages.c, conversations.c, _contact()
    ids = sa.bindparam("message_ids", message_ids, type_=ARRAY(Uuid), unique=True)
    threads = sa.select(c.id).where(c.business_id == business_id, c.contact_number == _any(phones))
    return list((await conn.execute(sa.select(m.id, m.conversation_id, m.provider_sid, contact.label("contact")).where(
        m.business_id == business_id, sa.or_(m.conversation_id.in_(threads), m.id == sa.any_(ids)),
        contact.notlike("erased:%")).order_by(m.created_at, m.id))).all())


async def business_contacts(conn: AsyncConnection, business_id: str, limit: int) -> tuple[list[str], list[str]]:
    """Up to `limit` numbers the business's threads are with and `limit` addresses its emails went to, not erased
    yet (a torn-down business's deletion erases them as people)."""
    c, e = conversations.c, emails.c
    numbers = await conn.scalars(sa.select(c.contact_number).where(
        c.business_id == business_id, c.contact_number.notlike("erased:%")).distinct()
        .order_by(c.contact_number).limit(limit))
    address = sa.func.lower(e.to_address)
    addresses = await conn.scalars(sa.select(address).where(
        e.business_id == business_id, e.to_address.notlike("erased:%")).distinct().order_by(address).limit(limit))
    return list(numbers), list(addresses)


async def erase_messages(conn: AsyncConnection, business_id: str, message_ids: list[str], contact: str,
                         marker: str, hashed: str) -> int:
    """The messages' bodies redacted and their other party (`contact`) replaced by `marker`, also in their error
    message; `contact` in an idempotency key becomes `hashed` (a key stays one per business). Status, direction,
    times and the business's number stay (billing); how many were changed."""
    m = messages.c
    is_inbound = m.direction == "inbound"
    changed = await conn.execute(messages.update().where(
        m.business_id == business_id, m.id == sa.any_(sa.bindparam("ids", message_ids, type_=ARRAY(Uuid))),
        _contact() == contact).values(
        body="", from_number=sa.case((is_inbound, marker), else_=m.from_number),
        to_number=sa.case((is_inbound, m.to_number), else_=marker),
        error_message=sa.func.replace(m.error_message, contact, marker),
        idempotency_key=sa.func.replace(m.idempotency_key, contact, hashed),
        redacted_at=sa.func.coalesce(m.redacted_at, sa.func.now())))  # redacted at the provider too: not again
    return int(changed.rowcount)


async def erase_conversations(conn: AsyncConnection, business_id: str, phones: list[str], marker: str) -> int:
    """The business's threads with one of `phones`: the number replaced by `marker` and the thread's id (a business
    number has one thread per contact)."""
    c = conversations.c
    changed = await conn.execute(conversations.update().where(c.business_id == business_id,
                                                              c.contact_number == _any(phones))
                                 .values(contact_number=marker + "/" + sa.cast(c.id, sa.Text)))
    return int(changed.rowcount)


async def erase_emails(conn: AsyncConnection, business_id: str, addresses: list[str], marker: str,
                       now: datetime) -> int:
    """The business's emails to (or answered to) one of `addresses` (lower case): the address replaced by `marker`,
    subject and body redacted; one not sent yet is failed (never sent to a marker)."""
    e = emails.c
    to, reply_to = sa.func.lower(e.to_address) == _any(addresses), sa.func.lower(e.reply_to) == _any(addresses)
    unsent = e.status.in_(("pending_approval", "approved"))
    changed = await conn.execute(emails.update().where(e.business_id == business_id, sa.or_(to, reply_to)).values(
        to_address=sa.case((to, marker), else_=e.to_address), reply_to=sa.case((reply_to, marker), else_=e.reply_to),
        subject="", body="", status=sa.case((unsent, "failed"), else_=e.status),
        last_error=sa.case((unsent, "erased before it was sent"), else_=e.last_error),
        next_attempt_at=sa.case((unsent, None), else_=e.next_attempt_at), updated_at=now))
    return int(changed.rowcount)


async def forget_recipients(conn: AsyncConnection, business_id: str, addresses: list[str]) -> int:
    r = approved_recipients.c
    deleted = await conn.execute(approved_recipients.delete().where(r.business_id == business_id,
                                                                    sa.func.lower(r.address) == _any(addresses)))
    return int(deleted.rowcount)


async def events_naming(conn: AsyncConnection, business_id: str, message_ids: list[str]) -> list[Any]:
    """The outbox's events of the business about one of the messages: (id, data)."""
    o = outbox.c
    return list((await conn.execute(sa.select(o.id, o.data).where(
        o.business_id == business_id, o.data["message_id"].astext == _any(message_ids)))).all())


async def rewrite_event(conn: AsyncConnection, event_id: int, data: dict[str, Any]) -> None:
    await conn.execute(outbox.update().where(outbox.c.id == event_id).values(data=data))


async def hash_evidence(conn: AsyncConnection, business_id: str, phone: str, hashed: str) -> tuple[int, int, int]:
    """The number replaced by its hash in the consent history (its note redacted; the number as actor hashed too),
    the decision log (in its message too: the redaction the append-only triggers let through, schema.py) and the
    touch ledger: (consent events, decisions, touches) changed."""
    c, d, t = consent_events.c, compliance_decisions.c, counted_touches.c
    consent = await conn.execute(consent_events.update().where(c.business_id == business_id, c.phone == phone)
                                 .values(phone=hashed, note=None,
                                         actor=sa.case((c.actor == phone, hashed), else_=c.actor)))
    decided = await conn.execute(compliance_decisions.update().where(d.business_id == business_id, d.phone == phone)
                                 .values(phone=hashed, message=sa.func.replace(d.message, phone, hashed)))
    touches = await conn.execute(counted_touches.update().where(t.business_id == business_id, t.phone == phone)
                                 .values(phone=hashed))
    return int(consent.rowcount), int(decided.rowcount), int(touches.rowcount)


async def hash_dnc(conn: AsyncConnection, business_id: str, phone: str, hashed: str, now: datetime, by: str,
                   why: str) -> int:
    """The number's entries on the business's list kept under its hash (in their reasons too); a listed one whose
    hash is listed already is taken off (`why`), the hash's entry standing for both. How many were changed."""
    d, listed = dnc_entries.c, dnc_entries.alias("listed").c
    hash_listed = sa.exists().where(listed.business_id == business_id, listed.phone == hashed,
                                    listed.removed_at.is_(None))
    await conn.execute(dnc_entries.update().where(d.business_id == business_id, d.phone == phone,
                                                  d.removed_at.is_(None), hash_listed)
                       .values(removed_at=now, removed_reason=why, removed_by=by))
    changed = await conn.execute(dnc_entries.update().where(d.business_id == business_id, d.phone == phone).values(
        phone=hashed, reason=sa.func.replace(d.reason, phone, hashed),
        removed_reason=sa.func.replace(d.removed_reason, phone, hashed)))
    return int(changed.rowcount)


async def suppress(conn: AsyncConnection, **values: Any) -> bool:
    """A hash on the business's list (schema.dnc_entries' columns); False when it is listed already."""
    added = await conn.execute(insert(dnc_entries).values(**values).on_conflict_do_nothing(
        index_elements=["business_id", "phone"], index_where=dnc_entries.c.removed_at.is_(None))
        .returning(dnc_entries.c.id))
    return added.first() is not None


# -- the retention a business set (services.messaging.data_retention) ---------------------------------------------

# A text still on its way (the provider has not settled it) keeps its body until it is: the provider redacts a
# message only once it is final.
UNSETTLED = (domain.PENDING, domain.UNKNOWN, "accepted", "queued", "sending")
EMAILS_SETTLED = ("sent", "failed")  # an email not sent yet keeps what it is to say
_IDS_HASHES = "unnest(CAST(:ids AS {id}[]), CAST(:hashes AS text[])) AS v(id, hashed)"


async def texts_to_redact(conn: AsyncConnection, business_id: str, before: datetime, limit: int) -> list[Any]:
    """The business's settled texts created before `before` not redacted yet, oldest first: (id, provider_sid)."""
    m = messages.c
    return list((await conn.execute(sa.select(m.id, m.provider_sid).where(
        m.business_id == business_id, m.redacted_at.is_(None), m.created_at < before, m.status.notin_(UNSETTLED))
        .order_by(m.created_at, m.id).limit(limit))).all())


async def redact_texts(conn: AsyncConnection, business_id: str, message_ids: list[str], now: datetime) -> int:
    """The texts' bodies "" and marked redacted (those not redacted yet); how many."""
    m = messages.c
    changed = await conn.execute(messages.update().where(
        m.business_id == business_id, m.id == sa.any_(sa.bindparam("ids", message_ids, type_=ARRAY(Uuid))),
        m.redacted_at.is_(None)).values(body="", redacted_at=now))
    return int(changed.rowcount)


async def emails_to_redact(conn: AsyncConnection, business_id: str, before: datetime, limit: int) -> list[str]:
    """The business's sent or failed emails created before `before` with their content, oldest first: ids."""
    e = emails.c
    return [str(i) for i in (await conn.execute(sa.select(e.id).where(
        e.business_id == business_id, e.body != "", e.created_at < before, e.status.in_(EMAILS_SETTLED))
        .order_by(e.created_at, e.id).limit(limit))).scalars()]


async def redact_emails(conn: AsyncConnection, business_id: str, email_ids: list[str], now: datetime) -> int:
    """The emails' subject and body "" (the address, status and times stay); how many."""
    e = emails.c
    changed = await conn.execute(emails.update().where(
        e.business_id == business_id, e.id == sa.any_(sa.bindparam("ids", email_ids, type_=ARRAY(Uuid))),
        e.body != "").values(subject="", body="", updated_at=now))
    return int(changed.rowcount)


async def consent_to_redact(conn: AsyncConnection, business_id: str, before: datetime, limit: int) -> list[Any]:
    """The business's consent events before `before` whose number is not a hash yet, oldest first: (id, phone)."""
    c = consent_events.c
    return list((await conn.execute(sa.select(c.id, c.phone).where(
        c.business_id == business_id, c.phone.notlike(HASHED_PREFIX), c.created_at < before)
        .order_by(c.created_at, c.id).limit(limit))).all())


async def redact_consent(conn: AsyncConnection, hashed: list[tuple[int, str]]) -> int:
    """Consent events (id, the hash of its number): the number (and an actor that was the number) replaced by the
    hash, the note dropped: the redaction the table's trigger lets through (schema.CONSENT_ERASURE)."""
    changed = await conn.execute(sa.text(
        f"UPDATE {SCHEMA}.consent_events c SET phone = v.hashed, note = NULL, "
        "actor = CASE WHEN c.actor = c.phone THEN v.hashed ELSE c.actor END "
        f"FROM {_IDS_HASHES.format(id='bigint')} WHERE c.id = v.id AND c.phone NOT LIKE 'hmac-sha256:%'"),
        {"ids": [i for i, _ in hashed], "hashes": [h for _, h in hashed]})
    return int(changed.rowcount)


async def decisions_to_redact(conn: AsyncConnection, business_id: str, before: datetime, limit: int) -> list[Any]:
    """The business's compliance decisions before `before` whose number is not a hash yet, oldest first:
    (id, phone)."""
    d = compliance_decisions.c
    return list((await conn.execute(sa.select(d.id, d.phone).where(
        d.business_id == business_id, d.phone.notlike(HASHED_PREFIX), d.decided_at < before)
        .order_by(d.decided_at, d.id).limit(limit))).all())


async def redact_decisions(conn: AsyncConnection, hashed: list[tuple[str, str]]) -> int:
    """Decisions (id, the hash of its number): the number replaced by the hash, in the message too: the redaction
    the table's trigger lets through (schema.DECISION_ERASURE)."""
    changed = await conn.execute(sa.text(
        f"UPDATE {SCHEMA}.compliance_decisions d SET phone = v.hashed, "
        "message = replace(d.message, d.phone, v.hashed) "
        f"FROM {_IDS_HASHES.format(id='uuid')} WHERE d.id = v.id AND d.phone NOT LIKE 'hmac-sha256:%'"),
        {"ids": [i for i, _ in hashed], "hashes": [h for _, h in hashed]})
    return int(changed.rowcount)
