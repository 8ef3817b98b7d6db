"""Messaging gRPC servicer: requests into the messaging use cases, their records (records.py) into replies."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from core import data_retention, standings
from core.bus import PROVIDER_STREAM
from core.grpc_server import Runtime
from core.ids import utcnow
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct, timestamp
from core.pagination import Page
from providers import configured
from providers.messaging import signatures
from providers.messaging.webhooks import STATUS_SUBJECT
from services.messaging import domain, provider_service, spend
from services.messaging.compliance_service import DECISIONS_PAGE, CalleeStanding, Compliance
from services.messaging.consent_service import Consents, conversational_until, evidence_of
from services.messaging.data_retention import DataRetention
from services.messaging.email_service import (
    EMAILS_PAGE,
    NOTICES_CONSUMER,
    NOTICES_SUBJECT,
    PROMPTS_CONSUMER,
    PROMPTS_SUBJECT,
    EmailDelivery,
    Emails,
)
from services.messaging.erasure import Erased, Erasures, person
from services.messaging.export_pages import MessagingExport
from services.messaging.national_registry import Subscription
from services.messaging.ports import grpc_neighbours
from services.messaging.provider_service import ProviderRequests
from services.messaging.reconciliation import Reconciliation
from services.messaging.records import ConsentEvent, Conversation, DncEntry, LoggedDecision, Message
from services.messaging.repositories.email import Email
from services.messaging.repositories.unit import messaging_uow
from services.messaging.senders import CachedSenders
from services.messaging.service import CONVERSATIONS_PAGE, MESSAGES_PAGE, NewText, Sent, Texts
from services.messaging.suppression import Suppression
from switchboard.v1 import common_pb2, messaging_pb2, messaging_pb2_grpc

DNC_PAGE = (50, 100)


def business_hours_of(request: messaging_pb2.SendSmsRequest | messaging_pb2.DecideCallRequest) -> tuple[int, int] | None:
    """The business's own calling hours a request carries, as (start hour, end hour); None when it carries none."""
    if not request.HasField("business_hours"):
        return None
    return request.business_hours.start_hour, request.business_hours.end_hour


def call_to_decide(request: messaging_pb2.DecideCallRequest) -> domain.CallToDecide:
    return domain.CallToDecide(
        business_id=request.business_id, phone=request.phone, actor=request.actor,
        **{f: optional(request, f) for f in ("timezone", "lead_id", "lead_state", "lead_status", "sender",
                                             "reference")},
        lead_converted_at=timestamp(request, "lead_converted_at"),
        lead_last_inbound_at=timestamp(request, "lead_last_inbound_at"), business_hours=business_hours_of(request))


def new_text(request: messaging_pb2.SendSmsRequest) -> NewText:
    return NewText(to=request.to, agent_id=request.from_agent_id, body=request.message,
                   **{f: optional(request, f) for f in ("lead_id", "idempotency_key", "callee_timezone", "actor",
                                                        "reference", "external_ref", "touch_id",
                                                        "requested_on_call")},
                   business_hours=business_hours_of(request))


def sent_message(sent: Sent) -> messaging_pb2.SmsSendReply:
    row = sent.message
    return messaging_pb2.SmsSendReply(success=True, message_sid=row.provider_sid, to=row.to_number,
                                      message_id=str(row.id), conversation_id=str(row.conversation_id),
                                      status=row.status, **{"from": sent.from_number})


def decision_message(row: LoggedDecision) -> common_pb2.ComplianceDecision:
    """A logged decision on the wire."""
    msg = common_pb2.ComplianceDecision(
        id=row.id, business_id=row.business_id, channel=row.channel, phone=row.phone, lead_id=row.lead_id,
        outcome=row.outcome, rule=row.rule, source=row.source,
        code=row.code, message=row.message, actor=row.actor, reference=row.reference, inputs=struct(row.inputs))
    set_timestamp(msg, "not_before", row.not_before)
    set_timestamp(msg, "decided_at", row.decided_at)
    return msg


def standing_message(found: CalleeStanding) -> messaging_pb2.CalleeStanding:
    standing = found.standing
    msg = messaging_pb2.CalleeStanding(phone=found.phone, platform_dnc=standing.platform_dnc,
                                       consent=standing.consent, national=standing.national,
                                       national_listed=standing.national_listed)
    set_timestamp(msg, "business_dnc_since", standing.business_dnc_since)
    set_timestamp(msg, "national_refreshed_at", standing.national_refreshed_at)
    for counted in found.recent:
        msg.recent_touches.add(channel=counted.channel).at.FromDatetime(counted.at)
    return msg


def conversation_message(row: Conversation) -> messaging_pb2.Conversation:
    msg = messaging_pb2.Conversation(
        id=str(row.id), business_id=str(row.business_id), business_number=row.business_number,
        contact_number=row.contact_number, agent_id=row.agent_id, lead_id=row.lead_id,
        message_count=row.inbound_count + row.outbound_count, inbound_count=row.inbound_count,
        outbound_count=row.outbound_count, unread_count=row.unread_count,
        last_message_preview=row.last_body[:domain.PREVIEW_LENGTH] if row.last_body is not None else None,
        last_message_direction=row.last_direction, last_message_status=row.last_status)
    set_timestamp(msg, "last_message_at", row.last_message_at)
    set_timestamp(msg, "created_at", row.created_at)
    return msg


def message_message(row: Message) -> messaging_pb2.Message:
    sender: dict[str, Any] = {"from": row.from_number}  # a keyword Python reserves
    msg = messaging_pb2.Message(
        id=row.id, conversation_id=row.conversation_id, business_id=row.business_id, direction=row.direction,
        to=row.to_number, body=row.body, status=row.status, message_sid=row.provider_sid, error_code=row.error_code,
        error_message=row.error_message, agent_id=row.agent_id, lead_id=row.lead_id, **sender)
    set_timestamp(msg, "created_at", row.created_at)
    set_timestamp(msg, "updated_at", row.updated_at)
    return msg


def consent_message(business_id: str, phone: str, history: list[ConsentEvent],
                    now: datetime) -> messaging_pb2.Consent:
    state = domain.consent_state(evidence_of(history), now)
    msg = messaging_pb2.Consent(business_id=business_id, phone=phone, state=state, can_text=domain.may_text(state))
    for row in history:
        change = msg.history.add(kind=row.kind, source=row.source, actor=row.actor, reference=row.reference,
                                 note=row.note)
        set_timestamp(change, "at", row.created_at)
    if state == "conversational":
        set_timestamp(msg, "conversational_until", conversational_until(history))
    return msg


def dnc_message(row: DncEntry) -> messaging_pb2.DncEntry:
    msg = messaging_pb2.DncEntry(id=row.id, business_id=row.business_id, phone=row.phone,
                                 reason=row.reason, added_by=row.added_by, removed_reason=row.removed_reason)
    set_timestamp(msg, "created_at", row.created_at)
    set_timestamp(msg, "removed_at", row.removed_at)
    return msg


def email_message(row: Email) -> messaging_pb2.Email:
    msg = messaging_pb2.Email(id=str(row.id), business_id=str(row.business_id), kind=row.kind, to=row.to_address,
                              subject=row.subject, body=row.body, status=row.status, attempts=row.attempts,
                              last_error=row.last_error, message_id=row.message_id, created_by=row.created_by,
                              approved_by=row.approved_by, recipient=row.recipient)
    for field in ("approved_at", "next_attempt_at", "sent_at", "created_at", "updated_at"):
        set_timestamp(msg, field, getattr(row, field))
    return msg


def day_spend_message(found: spend.DaySpend) -> messaging_pb2.DailySpend:
    limits = found.limits
    msg = messaging_pb2.DailySpend(
        business_id=found.business_id, plan_id=found.plan_id, day=found.day.isoformat(),
        limits=messaging_pb2.DailyLimits(calls_per_day=limits.calls, call_minutes_per_day=limits.call_minutes,
                                         texts_per_day=limits.texts, emails_per_day=limits.emails),
        today=messaging_pb2.DailyUse(calls=found.calls, call_minutes=found.call_minutes, texts=found.texts,
                                     emails=found.emails))
    set_timestamp(msg, "resets_at", found.resets_at)
    return msg


def erasure_report(erased: Erased) -> common_pb2.ErasureReport:
    return common_pb2.ErasureReport(
        items=[common_pb2.ErasedItem(what=what, action=action, count=count)
               for what, action, count in erased.removed.items()],
        message_ids=erased.message_ids)


class MessagingServicer(messaging_pb2_grpc.MessagingServicer):
    def __init__(self, texts: Texts, consents: Consents, compliance: Compliance, provider: ProviderRequests,
                 emails: Emails, spending: spend.Spending, erasures: Erasures, retention: DataRetention,
                 export: MessagingExport):
        self.texts, self.consents, self.compliance = texts, consents, compliance
        self.provider, self.emails, self.spending = provider, emails, spending
        self.erasures, self.retention, self.export = erasures, retention, export

    async def ErasePerson(self, request: common_pb2.ErasureRequest, context: Context) -> common_pb2.ErasureReport:
        if request.whole_business:
            erased, more = await self.erasures.erase_business(request.business_id, request.erasure_id)
            report = erasure_report(erased)
            del report.message_ids[:]  # every text of the business: the steps after take it whole
            report.more = more
            return report
        return erasure_report(await self.erasures.erase(person(
            request.business_id, request.erasure_id, request.phones, request.emails, request.message_ids,
            request.suppress)))

    async def ApplyRetention(self, request: common_pb2.RetentionRequest,
                             context: Context) -> common_pb2.RetentionReport:
        """The retention job's step (services.messaging.data_retention)."""
        applied = await self.retention.apply(data_retention.asked(request))
        return data_retention.report(applied.items(), applied.more)
    async def ExportPage(self, request: common_pb2.ExportPageRequest, context: Context) -> common_pb2.ExportPageReply:
        return await self.export.page(request)

    async def SendSms(self, request: messaging_pb2.SendSmsRequest, context: Context) -> messaging_pb2.SmsSendReply:
        return sent_message(await self.texts.send(new_text(request)))

    async def PlaceSms(self, request: messaging_pb2.SendSmsRequest, context: Context) -> messaging_pb2.PlaceSmsReply:
        placed = await self.texts.place(new_text(request))
        if isinstance(placed, Sent):
            return messaging_pb2.PlaceSmsReply(sent=sent_message(placed))
        return messaging_pb2.PlaceSmsReply(deferred=decision_message(placed))

    async def HandleInboundMessage(self, request: messaging_pb2.ProviderRequest,
                                   context: Context) -> messaging_pb2.ProviderReply:
        body = await self.provider.inbound(dict(request.params))
        return messaging_pb2.ProviderReply(content_type=signatures.TWIML, body=body)

    async def ListConversations(self, request: messaging_pb2.ListConversationsRequest,
                                context: Context) -> messaging_pb2.ListConversationsReply:
        paged = await self.texts.conversations(optional(request, "id"), Page.of(request.page, *CONVERSATIONS_PAGE))
        return messaging_pb2.ListConversationsReply(conversations=[conversation_message(r) for r in paged.rows],
                                                    page=paged.info())

    async def ListMessages(self, request: messaging_pb2.ListMessagesRequest,
                           context: Context) -> messaging_pb2.ListMessagesReply:
        paged = await self.texts.messages(optional(request, "conversation_id"), optional(request, "direction"),
                                          Page.of(request.page, *MESSAGES_PAGE))
        return messaging_pb2.ListMessagesReply(messages=[message_message(r) for r in paged.rows], page=paged.info())

    async def GetConsent(self, request: messaging_pb2.GetConsentRequest, context: Context) -> messaging_pb2.Consent:
        business_id, phone, history = await self.consents.get(request.phone, optional(request, "business_id"))
        return consent_message(business_id, phone, history, utcnow())

    async def RecordConsent(self, request: messaging_pb2.RecordConsentRequest,
                            context: Context) -> messaging_pb2.Consent:
        business_id, phone, history = await self.consents.record(request.phone, optional(request, "business_id"),
                                                                 request.state, optional(request, "note"))
        return consent_message(business_id, phone, history, utcnow())

    async def AddDnc(self, request: messaging_pb2.AddDncRequest, context: Context) -> messaging_pb2.DncEntry:
        return dnc_message(await self.consents.add_dnc(request.phone, optional(request, "business_id"),
                                                       optional(request, "reason")))

    async def CheckDnc(self, request: messaging_pb2.CheckDncRequest, context: Context) -> messaging_pb2.DncCheck:
        found = await self.consents.check_dnc(request.phone, optional(request, "business_id"))
        check = messaging_pb2.DncCheck(phone=found.phone, business_id=found.business_id, listed=found.listed,
                                       platform=found.platform)
        if found.entry is not None:
            check.entry.CopyFrom(dnc_message(found.entry))
        return check

    async def ListDnc(self, request: messaging_pb2.ListDncRequest, context: Context) -> messaging_pb2.ListDncReply:
        paged = await self.consents.list_dnc(optional(request, "business_id"), Page.of(request.page, *DNC_PAGE))
        return messaging_pb2.ListDncReply(entries=[dnc_message(r) for r in paged.rows], page=paged.info())

    async def RemoveDnc(self, request: messaging_pb2.RemoveDncRequest, context: Context) -> messaging_pb2.DncEntry:
        return dnc_message(await self.consents.remove_dnc(request.phone, optional(request, "business_id"),
                                                          request.reason))

    async def CheckProvider(self, request: messaging_pb2.CheckProviderRequest,
                            context: Context) -> messaging_pb2.ProviderStatus:
        return messaging_pb2.ProviderStatus(status=await self.texts.provider_status())

    async def DecideCall(self, request: messaging_pb2.DecideCallRequest,
                         context: Context) -> common_pb2.ComplianceDecision:
        return decision_message(await self.compliance.decide_call(call_to_decide(request)))

    async def ReleaseCallSlot(self, request: messaging_pb2.ReleaseCallSlotRequest,
                              context: Context) -> messaging_pb2.ReleaseCallSlotReply:
        await self.compliance.release_touch(request.decision_id)
        return messaging_pb2.ReleaseCallSlotReply()

    async def GetDailySpend(self, request: messaging_pb2.GetDailySpendRequest,
                            context: Context) -> messaging_pb2.GetDailySpendReply:
        return messaging_pb2.GetDailySpendReply(businesses=[day_spend_message(d) for d in await self.spending.today()])

    async def GetStandings(self, request: messaging_pb2.GetStandingsRequest,
                           context: Context) -> messaging_pb2.GetStandingsReply:
        found = await self.compliance.standings(request.business_id, list(request.phones))
        return messaging_pb2.GetStandingsReply(standings=[standing_message(f) for f in found])

    async def ListComplianceDecisions(self, request: messaging_pb2.ListComplianceDecisionsRequest,
                                      context: Context) -> messaging_pb2.ListComplianceDecisionsReply:
        paged = await self.compliance.decisions(optional(request, "business_id"), optional(request, "phone"),
                                                optional(request, "lead_id"), Page.of(request.page, *DECISIONS_PAGE))
        return messaging_pb2.ListComplianceDecisionsReply(decisions=[decision_message(r) for r in paged.rows],
                                                          page=paged.info())

    async def QueueEmail(self, request: messaging_pb2.QueueEmailRequest, context: Context) -> messaging_pb2.Email:
        return email_message(await self.emails.queue(request.to, request.subject, request.body,
                                                     optional(request, "business_id"), not request.hold_for_approval))

    async def ApproveEmail(self, request: messaging_pb2.ApproveEmailRequest, context: Context) -> messaging_pb2.Email:
        return email_message(await self.emails.approve(request.id))

    async def ListEmails(self, request: messaging_pb2.ListEmailsRequest,
                         context: Context) -> messaging_pb2.ListEmailsReply:
        if request.HasField("id"):
            return messaging_pb2.ListEmailsReply(emails=[email_message(await self.emails.get(request.id))])
        paged = await self.emails.list(optional(request, "status"), Page.of(request.page, *EMAILS_PAGE))
        return messaging_pb2.ListEmailsReply(emails=[email_message(r) for r in paged.rows], page=paged.info())


def build(runtime: Runtime) -> MessagingServicer:
    s = runtime.settings
    sms = runtime.closing(configured.sms(s))
    uow = messaging_uow(runtime.db)
    suppression = Suppression(s.privacy_hash_key.reveal())  # the erased numbers' hashes (suppression.py)
    consents = Consents(uow, frozenset(s.platform_dnc), suppression=suppression)
    held = standings.heard_by(runtime)
    compliance = Compliance(uow, consents.platform_dnc, s.compliance_policy(),
                            subscription=Subscription.of(s.national_dnc_area_codes), standings=held,
                            suppression=suppression)
    others = grpc_neighbours(runtime.client)
    senders = CachedSenders(others.agents, runtime.bus)  # the number each agent texts from, kept (senders.py)
    runtime.run(senders)
    others = replace(others, agents=senders)
    texts = Texts(uow, sms, compliance, others, s.public_base_url, standings=held)
    provider = ProviderRequests(uow, others, keywords_answered_by=s.sms_provider_opt_out)
    runtime.consume(provider_service.CALLS_CONSUMER, provider.record_call,
                    filter_subject=provider_service.CALLS_SUBJECT)
    # Status callbacks the gateway stored: retried until they apply (a database outage of any length loses none);
    # only one that can never apply is terminated.
    runtime.consume(provider_service.STATUS_CONSUMER, provider.apply_statuses, stream=PROVIDER_STREAM,
                    filter_subject=STATUS_SUBJECT, batch=100, batched=True, max_deliver=-1)
    runtime.run(Reconciliation(uow, texts, sms, interval=s.sms_reconcile_seconds,
                               give_up=timedelta(minutes=s.sms_unknown_give_up_minutes),
                               check_after=timedelta(seconds=s.sms_status_check_after_seconds)))
    emails = Emails(uow, others, s.email_daily_quota, standings=held)
    runtime.consume(spend.ENDED_CONSUMER, spend.EndedCalls(uow).record_ended,
                    filter_subject=spend.ENDED_SUBJECT, batch=250, batched=True)
    runtime.consume(PROMPTS_CONSUMER, emails.notify_owner, filter_subject=PROMPTS_SUBJECT)
    runtime.consume(NOTICES_CONSUMER, emails.pass_on_notice, filter_subject=NOTICES_SUBJECT)
    runtime.run(EmailDelivery(uow, configured.mail(s), interval=s.email_delivery_interval_seconds,
                              retry_scale=s.email_retry_scale))
    return MessagingServicer(texts, consents, compliance, provider, emails,
                             spend.Spending(uow, held, s.email_daily_quota), Erasures(uow, sms, suppression),
                             DataRetention(uow, sms, suppression), MessagingExport(uow, message_message, email_message))
