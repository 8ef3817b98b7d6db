"""The repositories of services.messaging.repositories in memory, on a MemoryDatabase's handle: MemoryMessages
(conversations and messages), MemoryCompliance (compliance_decisions and counted_touches, with the standings it
reads), MemoryConsent (consent_events and dnc_entries), MemorySpend (daily_spend, call_seconds and the API emails)
and MemoryEmails (emails and approved_recipients); `MEMORY` builds a MessagingUnit of them."""
from __future__ import annotations

from core import leases
from core.compliance.decision import Counted
from core.ids import new_id, utcnow
from core.records import record
from services.messaging import domain
from services.messaging.consent_service import evidence_of
from services.messaging.records import CalleeFacts, ConsentEvent, Conversation, DncEntry, LoggedDecision, Message
from services.messaging.repositories.email import Email
from services.messaging.repositories.unit import Repositories
from services.messaging.schema import (
    approved_recipients,
    call_seconds,
    compliance_decisions,
    consent_events,
    conversations,
    counted_touches,
    daily_spend,
    dnc_entries,
    emails,
    messages,
)
from tests.memory import MemoryConnection, insert, page_of, take_lease, update


def spent_on(spend, business_ids, day) -> dict:
    """store.spent_on over the daily_spend rows."""
    found: dict = {}
    for row in spend.values():
        if row["business_id"] in business_ids and row["day"] == day:
            found.setdefault(row["business_id"], {})[row["what"]] = row["used"]
    return found


class MemoryMessages:
    """services.messaging.repositories.messages.MessagesRepository in memory."""

    def __init__(self, conn: MemoryConnection):
        self.threads = conn.rows(conversations)
        self.messages = conn.rows(messages)

    async def add_to_thread(self, *, business_number, contact_number, **values):
        """store.add_to_thread's one statement: the thread upserted (counts moved on, the agent and lead kept when
        it has them), then the message on it unless its idempotency key is taken."""
        inbound = values["direction"] == "inbound"
        pair = (values["business_id"], business_number, contact_number)
        thread = next((row for row in self.threads.values()
                       if (row["business_id"], row["business_number"], row["contact_number"]) == pair), None)
        if thread is None:
            thread = insert(self.threads, conversations, {
                "id": new_id(), "business_id": values["business_id"], "business_number": business_number,
                "contact_number": contact_number, "agent_id": values.get("agent_id"),
                "lead_id": values.get("lead_id"), "inbound_count": int(inbound), "outbound_count": int(not inbound),
                "unread_count": int(inbound), "last_message_at": values["created_at"],
                "last_message_id": values["id"], "created_at": values["created_at"]})
        else:
            update(conversations, thread, {
                "agent_id": thread["agent_id"] or values.get("agent_id"),
                "lead_id": thread["lead_id"] or values.get("lead_id"),
                "inbound_count": thread["inbound_count"] + int(inbound),
                "outbound_count": thread["outbound_count"] + int(not inbound),
                "unread_count": thread["unread_count"] + int(inbound),
                "last_message_at": values["created_at"], "last_message_id": values["id"]})
        if values.get("idempotency_key") is not None and \
                await self.message_by_key(values["business_id"], values["idempotency_key"]) is not None:
            return None
        return record(Message, insert(self.messages, messages, {
            **values, "conversation_id": thread["id"], "lead_id": values.get("lead_id") or thread["lead_id"]}))

    async def message_by_key(self, business_id, key):
        return next((record(Message, row) for row in self.messages.values()
                     if (row["business_id"], row["idempotency_key"]) == (business_id, key)), None)

    async def message_by_sid(self, sid):
        return next((record(Message, row) for row in self.messages.values() if row["provider_sid"] == sid), None)

    async def message_for_callback(self, message_id, sid):
        row = self.messages.get((message_id,)) if message_id else None
        if row is None:
            row = next((m for m in self.messages.values() if m["provider_sid"] == sid), None)
        return record(Message, row) if row is not None else None

    async def change_message(self, message_id, values):
        row = self.messages.get((message_id,))
        return record(Message, update(messages, row, values)._mapping) if row is not None else None

    async def unknown_messages(self, settled_before, limit):
        return [record(Message, row) for row in sorted(self.messages.values(), key=lambda row: row["updated_at"])
                if row["status"] == domain.UNKNOWN and row["updated_at"] < settled_before][:limit]

    async def unsettled_messages(self, now, after, since, limit):
        def due(row):
            return row["status_check_due"] or row["updated_at"] + after

        return [record(Message, row) for row in sorted(self.messages.values(), key=lambda row: row["updated_at"])
                if row["status"] in domain.IN_FLIGHT and row["provider_sid"] is not None
                and row["created_at"] >= since and due(row) <= now][:limit]

    async def checked(self, message_id, checks, next_due) -> None:
        update(messages, self.messages[(message_id,)], {"status_checks": checks, "status_check_due": next_due})

    async def known_sids(self, sids, besides):
        return {row["provider_sid"] for row in self.messages.values()
                if row["provider_sid"] in sids and row["id"] != besides}

    async def conversations_page(self, business_ids, conversation_id, page):
        """store.conversations_of: each thread with its latest message's body, direction and status."""
        found = []
        for thread in self.threads.values():
            if thread["business_id"] in business_ids and conversation_id in (None, thread["id"]):
                last = self.messages.get((thread["last_message_id"],), {})
                found.append({**thread, "last_body": last.get("body"), "last_direction": last.get("direction"),
                              "last_status": last.get("status")})
        paged = page_of(found, conversations.c.last_message_at, conversations.c.id, page)
        return paged.map(lambda row: record(Conversation, row._mapping))

    async def messages_page(self, business_ids, conversation_id, direction, page):
        found = page_of([row for row in self.messages.values() if row["business_id"] in business_ids
                         and conversation_id in (None, row["conversation_id"])
                         and direction in (None, row["direction"])], messages.c.created_at, messages.c.id, page)
        return found.map(lambda row: record(Message, row._mapping))

    async def mark_read(self, conversation_id) -> None:
        update(conversations, self.threads[(conversation_id,)], {"unread_count": 0})


class MemoryConsent:
    """services.messaging.repositories.consent.ConsentRepository in memory."""

    def __init__(self, conn: MemoryConnection):
        self.consents = conn.rows(consent_events)
        self.dnc = conn.rows(dnc_entries)

    async def add_consent(self, **values) -> None:
        insert(self.consents, consent_events, {"id": len(self.consents) + 1, **values})

    async def consent_history(self, business_id, phone):
        return [record(ConsentEvent, row) for row in sorted(self.consents.values(), key=lambda row: row["id"])
                if (row["business_id"], row["phone"]) == (business_id, phone)]

    async def listed(self, business_id, phone):
        row = self._listed(business_id, phone)
        return record(DncEntry, row) if row is not None else None

    async def add_dnc(self, **values):
        row = self._listed(values["business_id"], values["phone"])
        return record(DncEntry, row if row is not None else insert(self.dnc, dnc_entries, values))

    async def remove_dnc(self, business_id, phone, **values):
        row = self._listed(business_id, phone)
        return record(DncEntry, update(dnc_entries, row, values)._mapping) if row is not None else None

    async def dnc_page(self, business_id, page):
        found = page_of([row for row in self.dnc.values() if row["business_id"] == business_id
                         and row["removed_at"] is None], dnc_entries.c.created_at, dnc_entries.c.id, page)
        return found.map(lambda row: record(DncEntry, row._mapping))

    def _listed(self, business_id, phone):
        return next((row for row in self.dnc.values() if (row["business_id"], row["phone"]) == (business_id, phone)
                     and row["removed_at"] is None), None)


class MemoryCompliance:
    """services.messaging.repositories.compliance.ComplianceRepository in memory."""

    def __init__(self, conn: MemoryConnection):
        self.consent = MemoryConsent(conn)
        self.decisions = conn.rows(compliance_decisions)
        self.touches = conn.rows(counted_touches)
        self.spend = conn.rows(daily_spend)

    async def standing(self, business_id, phone):
        """No national registry is loaded in memory."""
        entry = await self.consent.listed(business_id, phone)
        return CalleeFacts(entry.created_at if entry is not None else None, evidence_of(
            await self.consent.consent_history(business_id, phone)), None)

    async def standings(self, business_id, phones):
        return {phone: await self.standing(business_id, phone) for phone in phones}

    async def lock_callee(self, business_id, phone) -> None:
        """Nothing to do: a MemoryDatabase's transactions run one at a time."""

    async def recent_touches(self, business_id, phone, since):
        return [Counted(row["channel"], row["placed_at"]) for row in sorted(
            self.touches.values(), key=lambda row: row["placed_at"])
            if (row["business_id"], row["phone"]) == (business_id, phone) and row["placed_at"] > since
            and row["released_at"] is None]

    async def recent_touches_of(self, business_id, phones, since):
        return {phone: await self.recent_touches(business_id, phone, since) for phone in phones}

    async def add_decision(self, **values):
        return record(LoggedDecision, insert(self.decisions, compliance_decisions, values))

    async def count_touch(self, *, within, **values) -> bool:
        """store.count_touch: counted only under the day's limit of its channel (and call seconds)."""
        day, business_id, channel = within.day, values["business_id"], values["channel"]
        spent = self.spend.get((business_id, day, channel))
        seconds = self.spend.get((business_id, day, "call_seconds"), {}).get("used", 0)
        if (spent or {}).get("used", 0) >= within.limit or (
                within.seconds_limit is not None and seconds >= within.seconds_limit):
            return False
        if spent is None:
            insert(self.spend, daily_spend, {"business_id": business_id, "day": day, "what": channel, "used": 1})
        else:
            update(daily_spend, spent, {"used": spent["used"] + 1})
        insert(self.touches, counted_touches, values)
        return True

    async def release_touch(self, decision_id, business_ids, at):
        row = self.touches.get((decision_id,))
        if row is None or row["business_id"] not in business_ids or row["released_at"] is not None:
            return False
        update(counted_touches, row, {"released_at": at})
        spent = self.spend.get((row["business_id"], row["placed_at"].date(), row["channel"]))
        if spent is not None and spent["used"] > 0:
            update(daily_spend, spent, {"used": spent["used"] - 1})
        return True

    async def decisions_page(self, business_id, phone, lead_id, page):
        found = page_of([row for row in self.decisions.values() if row["business_id"] == business_id
                         and phone in (None, row["phone"]) and lead_id in (None, row["lead_id"])],
                        compliance_decisions.c.decided_at, compliance_decisions.c.id, page)
        return found.map(lambda row: record(LoggedDecision, row._mapping))


class MemorySpend:
    """services.messaging.repositories.spend.SpendRepository in memory."""

    def __init__(self, conn: MemoryConnection):
        self.spend = conn.rows(daily_spend)
        self.calls = conn.rows(call_seconds)
        self.emails = conn.rows(emails)

    async def spent_on(self, business_ids, day):
        return spent_on(self.spend, business_ids, day)

    async def api_emails_since(self, business_id, since):
        return sum(1 for row in self.emails.values()
                   if row["business_id"] == business_id and row["kind"] == "api" and row["created_at"] > since)

    async def add_call_seconds(self, ended):
        """store.add_call_seconds: each call once, its seconds added to its business's call_seconds of the day."""
        for call_id, business_id, day, seconds in ended:
            if (call_id,) in self.calls:
                continue
            insert(self.calls, call_seconds, {"call_id": call_id, "business_id": business_id, "day": day,
                                              "seconds": seconds})
            spent = self.spend.get((business_id, day, "call_seconds"))
            if spent is None:
                insert(self.spend, daily_spend, {"business_id": business_id, "day": day, "what": "call_seconds",
                                                 "used": seconds})
            else:
                update(daily_spend, spent, {"used": spent["used"] + seconds})


class MemoryEmails:
    """services.messaging.repositories.email.EmailRepository in memory."""

    def __init__(self, conn: MemoryConnection):
        self.emails = conn.rows(emails)
        self.approved = conn.rows(approved_recipients)

    async def lock_quota(self, business_id) -> None:
        """One writer at a time holds the in-memory database: nothing to lock."""

    async def api_emails_since(self, business_id, since):
        times = [row["created_at"] for row in self.emails.values()
                 if row["business_id"] == business_id and row["kind"] == "api" and row["created_at"] > since]
        return len(times), min(times, default=None)

    async def is_approved_recipient(self, business_id, address):
        return (business_id, address) in self.approved

    async def approve_recipient(self, business_id, address, approved_by, approved_at):
        if (business_id, address) not in self.approved:
            insert(self.approved, approved_recipients, {"business_id": business_id, "address": address,
                                                        "approved_by": approved_by, "approved_at": approved_at})

    async def queue(self, **values):
        if values.get("reference") is not None and any(
                (row["business_id"], row["reference"]) == (values["business_id"], values["reference"])
                for row in self.emails.values()):
            return None
        return record(Email, insert(self.emails, emails, values))

    async def email(self, business_ids, email_id):
        row = self.emails.get((email_id,))
        return record(Email, row) if row is not None and row["business_id"] in business_ids else None

    async def approve(self, email_id, business_ids, **values):
        row = self.emails.get((email_id,))
        if row is None or row["business_id"] not in business_ids or row["status"] != "pending_approval":
            return None
        return record(Email, update(emails, row, {"status": "approved", **values})._mapping)

    async def page(self, business_ids, status, page):
        found = page_of([row for row in self.emails.values() if row["business_id"] in business_ids
                         and (status is None or row["status"] == status)], emails.c.created_at, emails.c.id, page)
        return found.map(lambda row: record(Email, row._mapping))

    async def claim_due(self, now, duration, limit):
        due = sorted((row for row in self.emails.values() if row["status"] == "approved"
                      and row["next_attempt_at"] is not None and row["next_attempt_at"] <= now
                      and (row["lease_until"] is None or row["lease_until"] < utcnow())),
                     key=lambda row: row["next_attempt_at"])[:limit]
        return [(record(Email, row), take_lease(emails, row, duration)) for row in due]

    async def leased_update(self, email_id, token, values):
        row = self.emails.get((email_id,))
        if row is None or row["lease_token"] != token:  # core.leases.held: still the token's, run out or not
            return None
        return record(Email, update(emails, row, {**values, **leases.RELEASED})._mapping)


MEMORY = Repositories(messages=MemoryMessages, compliance=MemoryCompliance, consent=MemoryConsent, spend=MemorySpend,
                      emails=MemoryEmails)
