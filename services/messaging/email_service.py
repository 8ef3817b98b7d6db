"""The email queue: what goes out by email, who approved it, and its delivery.

Emails are queued by API callers (emails:write; approved at once when asked and the address is known to the
business, else held for the owner: domain.recipient_of) and by the
platform itself: the owner's notification of each agent prompt change (`agent.prompt_changed` with notify
owner), approved at once and queued once per event. The delivery loop takes due approved emails under a lease
(core.leases), hands each to the mail server with no transaction open, and records sent, or a retry with
backoff, or failed (domain.after_failed_send). A delivery that dies mid-way is taken again when its lease runs
out, so an email goes out at least once.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from contracts import messaging
from core import plans, tenant
from core.background import Periodic
from core.bus import business_event, subject_for
from core.contact import normalize_email
from core.errors import ServiceError, invalid, not_found
from core.events import Envelope
from core.ids import new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.standings import Standings, carried_only
from core.uow import UnitOfWork
from providers.email.adapter import EmailError, EmailSender
from services.messaging import domain, spend
from services.messaging.ports import Neighbours
from services.messaging.repositories.email import Email
from services.messaging.repositories.unit import MessagingUnit
from switchboard.v1 import events_pb2

log = logging.getLogger(__name__)
PROMPTS_SUBJECT = subject_for("agent.prompt_changed")
PROMPTS_CONSUMER = "messaging-owner-emails"
NOTICES_SUBJECT = subject_for("workspace.owner_notice")
NOTICES_CONSUMER = "messaging-owner-notices"
EMAILS_PAGE = (50, 100)
DELIVERY_LEASE = timedelta(seconds=120)
DELIVERY_BATCH = 20



class Emails:
    """An API caller's email goes out as its business (named in From, answers to the owner), only while the
    business is in good standing, within a daily quota, and to the owner or an address known to the business
    unless the owner approves it in person (domain.queued_status)."""

    def __init__(self, uow: UnitOfWork[MessagingUnit], others: Neighbours, daily_quota: int, *,
                 standings: Standings | None = None):
        self.uow = uow
        self.standings = standings or carried_only()  # may the business spend (core.standings)
        self.others = others  # asked as the tenant set below (services.messaging.ports)
        self.daily_quota = daily_quota

    async def queue(self, to: str, subject: str, body: str, business_id: str | None, approve: bool) -> Email:
        who = tenant.require_account()
        business_id = tenant.pick_business(who, business_id)
        await self.standings.require_good(business_id, "sending email")
        plan_id = (await self.standings.facts(business_id)).plan_id
        quota = spend.email_quota(plan_id, self.daily_quota)
        subject, body = domain.check_email_text(subject, body)
        to = normalize_email(to, "to")
        owner = await self.others.workspaces.owner(business_id)
        owner_email = owner.email if owner.email_confirmed else None  # an unconfirmed address is a stranger's
        known_lead = to != owner_email and await self.others.leads.is_known_email(business_id, to)
        in_person = who.owner_in_person
        now = utcnow()
        async with self.uow.transaction() as work:
            await work.emails.lock_quota(business_id)
            known = known_lead or await work.emails.is_approved_recipient(business_id, to)
            recipient = domain.recipient_of(to, owner_email, known)
            status = domain.queued_status(recipient, approve, in_person)
            approved = {"approved_by": who.actor, "approved_at": now, "next_attempt_at": now} \
                if status == "approved" else {}
            queued, oldest = await work.emails.api_emails_since(business_id, now - domain.EMAIL_WINDOW)
            if queued >= quota:
                wait = domain.quota_retry_after(oldest or now, now)  # none in the window: a quota of 0
                raise ServiceError("rate_limited", f"this business queued {queued} emails in the last 24 hours, its "
                                   f"quota ({plans.LIMIT_NAMES['emails']} is {quota} on the "
                                   f"{plan_id or plans.DEFAULT_PLAN} plan); try again in {wait} seconds",
                                   retry_after=str(wait), limit=plans.LIMIT_NAMES["emails"])
            if status == "approved" and domain.approves_address(recipient, in_person):
                await work.emails.approve_recipient(business_id, to, who.actor, now)
            queued_email = await work.emails.queue(
                id=new_id(), business_id=business_id, kind="api", to_address=to, subject=subject, body=body,
                status=status, recipient=recipient, on_behalf_of=owner.business_name, reply_to=owner_email,
                created_by=who.actor, created_at=now, updated_at=now, **approved)
        assert queued_email is not None  # it has no reference to clash with
        return queued_email

    async def approve(self, email_id: str) -> Email:
        who = tenant.require_account()
        require_uuid(email_id, "id")
        now = utcnow()
        async with self.uow.transaction() as work:
            current = await work.emails.email(who.business_ids, email_id)
            if current is None:
                raise not_found("email")
            await self.standings.require_good(str(current.business_id), "sending email")
            if why := domain.approval_refusal(current.recipient, who.owner_in_person):
                raise ServiceError("forbidden", why)
            row = await work.emails.approve(email_id, who.business_ids, approved_by=who.actor, approved_at=now,
                                            next_attempt_at=now, updated_at=now)
            if row is None:
                raise invalid(f"email {email_id} is {current.status.replace('_', ' ')}: only an email pending "
                              "approval can be approved")
            if current.kind == "api" and domain.approves_address(current.recipient, who.owner_in_person):
                await work.emails.approve_recipient(current.business_id, current.to_address, who.actor, now)
        return row

    async def list(self, status: str | None, page: Page) -> Paged:
        who = tenant.require_account()
        if status is not None and status not in messaging.EMAIL_STATUSES:
            raise invalid(f"status must be one of {', '.join(messaging.EMAIL_STATUSES)}")
        async with self.uow.read() as work:
            return await work.emails.page(who.business_ids, status, page)

    async def get(self, email_id: str) -> Email:
        who = tenant.require_account()
        require_uuid(email_id, "id")
        async with self.uow.read() as work:
            row = await work.emails.email(who.business_ids, email_id)
        if row is None:
            raise not_found("email")
        return row

    async def notify_owner(self, message: dict[str, Any]) -> None:
        """Queue the owner's email about an agent prompt change (once per event)."""
        event, change = business_event(message)
        assert isinstance(change, events_pb2.AgentPromptChanged)  # the consumer's subject
        if change.notify != "owner":
            return
        subject, body = domain.prompt_change_email(change.agent_name, list(change.fields), change.source,
                                                   change.version, change.reason if change.HasField("reason") else None)
        await self._to_owner(event, subject, body)

    async def pass_on_notice(self, message: dict[str, Any]) -> None:
        """Queue the owner's email another service asked for (`workspace.owner_notice`: billing), once per event."""
        event, notice = business_event(message)
        assert isinstance(notice, events_pb2.OwnerNotice)  # the consumer's subject
        await self._to_owner(event, notice.subject, notice.body)

    async def _to_owner(self, event: Envelope, subject: str, body: str) -> None:
        """The owner's notification, once per event. Before the owner confirmed the address it waits in the queue
        for the owner's approval in the dashboard instead of going out."""
        business_id = event.business_id
        assert business_id is not None  # business_event refuses an event that names no business
        with tenant.acting_as(tenant.acting_for(business_id, PROMPTS_CONSUMER)):
            owner = await self.others.workspaces.owner(business_id)
        now = utcnow()
        held = {"status": "pending_approval", "recipient": domain.OTHER} if not owner.email_confirmed else {
            "status": "approved", "recipient": domain.OWNER, "approved_by": "platform", "approved_at": now,
            "next_attempt_at": now}
        async with self.uow.transaction() as work:
            await work.emails.queue(id=new_id(), business_id=business_id, kind="owner_notification",
                                    to_address=owner.email, subject=subject, body=body, reference=event.event_id,
                                    created_by="platform", created_at=now, updated_at=now, **held)


class EmailDelivery(Periodic):
    """Sends due approved emails every `interval` seconds."""

    task_name = "email-delivery"

    def __init__(self, uow: UnitOfWork[MessagingUnit], sender: EmailSender, *, interval: float,
                 retry_scale: float):
        self.uow, self.sender = uow, sender
        self.interval, self.retry_scale = interval, retry_scale

    async def round(self) -> bool:
        return await self.deliver_due() >= DELIVERY_BATCH  # a full batch: more may be due

    async def deliver_due(self) -> int:
        """Send one batch of due emails; how many were taken."""
        async with self.uow.transaction() as work:
            claimed = await work.emails.claim_due(utcnow(), DELIVERY_LEASE, DELIVERY_BATCH)
        for row, token in claimed:
            await self.deliver(row, token)
        return len(claimed)

    async def deliver(self, row: Email, token: str) -> None:
        """Hand one leased email to the mail server and record what came of it."""
        attempts = row.attempts + 1
        try:
            message_id = await self.sender.send(to=row.to_address, subject=row.subject, body=row.body,
                                                reply_to=row.reply_to, on_behalf_of=row.on_behalf_of)
        except EmailError as exc:
            status = domain.after_failed_send(attempts, exc.permanent)
            changes = {"status": status, "attempts": attempts, "last_error": str(exc),
                       "next_attempt_at": utcnow() + domain.email_retry_delay(attempts, self.retry_scale)
                       if status == "approved" else None}
            log.info("email %s: try %d failed (%s), now %s", row.id, attempts, exc, status)
        else:
            changes = {"status": "sent", "attempts": attempts, "message_id": message_id, "sent_at": utcnow(),
                       "next_attempt_at": None, "last_error": None}
        async with self.uow.transaction() as work:
            await work.emails.leased_update(row.id, token, {**changes, "updated_at": utcnow()})
