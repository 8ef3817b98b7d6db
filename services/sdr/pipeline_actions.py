"""The sales pipeline's actions on one lead (POST /api/sdr/action): call, sms and email touch the lead; skip records
a choice; pause and resume flip its `paused`. Each writes one activity entry.

A touch is made in three steps, so no transaction is held while another service or a provider works:
1. under the lead's row lock: the checks (a closed or paused lead is 409; the cadence, 429 with the exact
   nextAllowedAt) and a claim, a `pending` activity entry for the lead's next touch number (unique while it is not
   failed: two racing requests cannot both touch);
2. the touch itself: a call through Calls.CreateCall with compliance enforce (actor pipeline: a refusal or a
   deferral is its compliance code), a text through Messaging.SendSms with its checks, an email through the email
   queue; the call and the text carry an idempotency key derived from the claim;
3. the entry `done` and the lead's touch_count and last_touch in one transaction, or the entry `failed` (the touch
   number is free again) with the error passed on.
A request repeated within the touch gap (the same lead and action) answers the first result again
(`replayed`), so a retried request never touches twice. A touch left `pending` by a process that died is taken
over by the next request for the same action after PENDING_LEASE, with the same claim and so the same idempotency
key: a call or text the provider already took is not made again (an email may be, once: the queue has no key).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from contracts import pipeline as pipeline_contract
from core import tenant
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, rfc3339, utcnow
from core.standings import Standings, carried_only
from core.uow import UnitOfWork
from services.sdr import pipeline_domain as rules
from services.sdr.business_agents import only_agent_with_number
from services.sdr.pipeline_records import Activity
from services.sdr.pipeline_service import Pipeline, signals_of
from services.sdr.ports import Neighbours, Touch
from services.sdr.repository import SdrUnit

CHANNEL_FIELD = {"call": "phone", "sms": "phone", "email": "email"}
PENDING_LEASE = timedelta(minutes=10)  # a touch pending longer was abandoned by the process making it


@dataclass(frozen=True)
class ActionResult:
    success: bool
    action: str
    lead_id: str
    detail: str
    replayed: bool = False


def touch_message(business_name: str, first_name: str | None) -> str:
    """The pipeline's follow-up text."""
    hello = f"Hi {first_name}," if first_name else "Hi,"
    return f"{hello} it's {business_name} following up on your enquiry. Reply here or call us back. Reply STOP to opt out."


def touch_email(business_name: str, first_name: str | None) -> tuple[str, str]:
    """The pipeline's follow-up email: (subject, body)."""
    hello = f"Hi {first_name}," if first_name else "Hello,"
    return (f"Following up from {business_name}",
            f"{hello}\n\nThanks for getting in touch with {business_name}. We'd be glad to help: reply to this email "
            f"or give us a call, whichever suits you.\n\nBest regards,\n{business_name}")


class Actions:
    def __init__(self, uow: UnitOfWork[SdrUnit], pipeline: Pipeline, others: Neighbours, *,
                 standings: Standings | None = None):
        self.uow, self.pipeline = uow, pipeline
        self.standings = standings or carried_only()  # may the business spend (core.standings)
        self.others = others  # asked as the caller (services.sdr.ports)

    async def act(self, business_id: str, lead_id: str, action: str, origin: str = "api",
                  window_id: str | None = None) -> ActionResult:
        """The action done (`origin` api or runner; `window_id`: the scheduled run making it)."""
        who = tenant.require_account()
        business_id = tenant.require_business(who, business_id)
        require_uuid(lead_id, "leadId")
        if action not in pipeline_contract.ACTIONS:
            raise invalid(f"action must be one of {', '.join(pipeline_contract.ACTIONS)}")
        if action in rules.TOUCHES:
            await self.standings.require_good(business_id, "reaching out to leads")
        config = (await self.pipeline.config(business_id)).config
        now = utcnow()
        async with self.uow.transaction() as work:
            lead = await work.pipeline.lock_lead(business_id, lead_id)
            if lead is None:
                raise not_found("lead")
            if action not in rules.TOUCHES:
                return await self._record(work, lead, action, origin, window_id, now)
            _check_touchable(lead, action)
            earlier = await work.pipeline.latest_done(lead_id, action, now - config.touch_gap)
            if earlier is not None:
                return ActionResult(True, action, lead_id, earlier.detail, replayed=True)
            stop = rules.cadence_stop(signals_of(lead), config, now)
            if stop is not None:
                at = stop.next_allowed_at
                raise ServiceError("rate_limited", stop.reason + (f"; the next touch is allowed at {rfc3339(at)}" if at
                                   else "; no further touch is allowed"), next_allowed_at=rfc3339(at) if at else "")
            claim = await work.pipeline.touch_pending(lead_id)
            if claim is not None:
                _check_abandoned(claim, action, now)  # taken over: made again with its key, so made once
                claim = await work.pipeline.finish_activity(str(claim.id), {"updated_at": now})
            else:
                claim = await work.pipeline.add_activity(
                    id=new_id(), business_id=business_id, lead_id=lead_id, action=action, status="pending",
                    detail=f"{action} being made", touch_number=lead.touch_count + 1, origin=origin,
                    window_id=window_id, created_at=now, updated_at=now)
        try:
            reference, detail = await self._touch(action, lead, config, str(claim.id))
        except ServiceError as err:
            async with self.uow.transaction() as work:
                await work.pipeline.finish_activity(str(claim.id), {"status": "failed", "detail": err.message[:1000],
                                                                  "updated_at": utcnow()})
            raise
        done = utcnow()
        async with self.uow.transaction() as work:
            await work.pipeline.finish_activity(str(claim.id), {"status": "done", "detail": detail,
                                                              "reference": reference, "updated_at": done})
            await work.pipeline.count_touch(lead_id, done)
        return ActionResult(True, action, lead_id, detail)

    @staticmethod
    async def _record(work: SdrUnit, lead: Any, action: str, origin: str, window_id: str | None, now: datetime) -> ActionResult:
        """skip, pause or resume: the lead's flag and the entry, in one transaction."""
        if action == "skip":
            detail = "skipped: no touch this time"
        else:
            paused = action == "pause"
            detail = (f"already {'paused' if paused else 'active'}" if lead.paused == paused else
                      "paused: the pipeline leaves the lead alone until it is resumed" if paused else
                      "resumed: the pipeline works the lead again")
            await work.pipeline.set_paused(str(lead.id), paused, now)
        await work.pipeline.add_activity(id=new_id(), business_id=str(lead.business_id), lead_id=str(lead.id),
                                 action=action, status="done", detail=detail, origin=origin, window_id=window_id,
                                 created_at=now, updated_at=now)
        return ActionResult(True, action, str(lead.id), detail)

    async def _touch(self, action: str, lead: Any, config: rules.Config, claim_id: str) -> tuple[str, str]:
        """Make the touch: (the reference of what it made, what it did)."""
        if action == "email":
            subject, body = touch_email(await self._business_name(lead), lead.first_name)
            email = await self.others.messaging.queue_email(lead.email, subject, body, str(lead.business_id))
            return email.id, f"email queued to {lead.email} ({email.status})"
        agent_id = config.sdr_agent_id or only_agent_with_number(
            await self.others.agents.numbers(str(lead.business_id)), "sdr_agent_id")
        touch = Touch(agent_id, lead.phone, f"pipeline:{claim_id}", "pipeline", claim_id,
                      (config.business_hours_start, config.business_hours_end), lead_id=str(lead.id))
        if action == "call":
            call = await self.others.calls.create_call(touch)
            return call.id, f"call placed to {lead.phone} ({call.status})"
        sent = await self.others.messaging.send_text(touch, touch_message(await self._business_name(lead),
                                                                          lead.first_name))
        return sent.id, f"text sent to {lead.phone} ({sent.status})"


    async def _business_name(self, lead: Any) -> str:
        """The name the pipeline's texts and emails sign with (a call's agent introduces the business itself)."""
        return (await self.others.accounts.owner(str(lead.business_id))).business_name


def _check_abandoned(claim: Activity, action: str, now: datetime) -> None:
    """A pending touch may be taken over by the same action once it has been left for PENDING_LEASE (the process
    making it died: no provider call takes that long); until then, or by another action, it is 409."""
    if now - claim.updated_at < PENDING_LEASE:
        raise ServiceError("conflict", "a touch of this lead is being made; retry in a moment")
    if claim.action != action:
        raise ServiceError("conflict", f"an earlier {claim.action} of this lead was left unfinished; send that "
                           f"action again to finish it (with the same idempotency, it is made once)")


def _check_touchable(lead: Any, action: str) -> None:
    if lead.status in rules.CLOSED_STATUSES:
        raise ServiceError("conflict", f"the lead is {lead.status}: the pipeline does not touch it")
    if lead.paused:
        raise ServiceError("conflict", "the lead is paused: resume it first")
    if not getattr(lead, CHANNEL_FIELD[action]):
        raise invalid(f"the lead has no {CHANNEL_FIELD[action]} to {action}")
