"""Texts in the soak: sends through the API to recipients who opted in, and their replies texted in at the SMS
simulator, some of them STOP.

Each tenant texts recipients of its own, each opted in through the API first, in a zone whose texting window
(08:00-21:00 local, and the states' own rules) is open now and until after the load, picked by the current time
(tests.texting's zones), and at most TEXTS_PER_RECIPIENT times (under the platform's cap of texts to one person
a day). A recipient replies only while no text to them is in flight, so a STOP is never overtaken by a text sent
before it; once our webhook acknowledged the STOP (the simulator says it answered 2xx) it is in `history.stops`
and a share of later sends still goes to that recipient: the platform must refuse each (the ledger checks none
reached the provider after the STOP). Both flows share the recipients, so they are one actor, `texting`.
"""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp

from bench.soak.actors.pacing import fresh_key, paced
from bench.soak.actors.tenants import live_tenants, pick_tenant, refused_by_standing
from bench.soak.client import at_daily_limit
from bench.soak.history import Tenant
from bench.soak.load import LoadContext
from core.compliance import decision as compliance
from core.compliance.rules import SMS
from tests.texting import ZONED, SmsSimulator

TEXTS_PER_RECIPIENT = 6  # the platform allows 10 texts to one person in 24 hours (COMPLIANCE_TEXTS_PER_24H)
NEW_RECIPIENT_SHARE = 0.25  # of the sends, to someone new, while the tenant's others may still be texted
AFTER_STOP_SHARE = 0.1  # of the sends, to a recipient whose STOP was acknowledged (the platform must refuse)
STOP_SHARE = 0.3  # of the replies
REPLIES = ("Thanks, that works.", "What time tomorrow?", "Can you call me instead?", "Sounds good")
WINDOW_MARGIN = timedelta(minutes=15)  # a recipient's texting window stays open this long past the load's end
TEXTING, STOPPING, STOPPED = "texting", "stopping", "stopped"  # STOPPING: a STOP sent, not yet acknowledged


@dataclass
class Recipient:
    phone: str
    tenant: Tenant
    texts: int = 0  # sends tried (counted before each is sent, so concurrent sends keep under the cap)
    in_flight: int = 0  # sends and replies on their way
    state: str = TEXTING


@dataclass
class Texting:
    """The recipients of every tenant, and what the platform refused as expected (reported at the end)."""

    ctx: LoadContext
    recipients: list[Recipient] = field(default_factory=list)
    expected: Counter[str] = field(default_factory=Counter)

    def live(self, r: Recipient) -> bool:
        return r.tenant in live_tenants(self.ctx)

    def textable(self, tenant: Tenant, now: datetime) -> list[Recipient]:
        return [r for r in self.recipients if r.tenant is tenant and r.state == TEXTING
                and r.texts < TEXTS_PER_RECIPIENT and compliance.open_to(SMS, r.phone, now)]

    def new_phone(self, now: datetime) -> str | None:
        """A number no recipient has, in a zone whose window is open now and until after the load."""
        until = now + timedelta(seconds=max(0.0, self.ctx.ends_at - time.monotonic())) + WINDOW_MARGIN
        zones = [z for z in ZONED if all(compliance.open_to(SMS, z.format("5000"), at) for at in (now, until))]
        taken = {r.phone for r in self.recipients}
        for _ in range(10):
            phone = self.ctx.rng.choice(zones).format(self.ctx.rng.randint(1000, 9999)) if zones else None
            if phone not in taken:
                return phone
        return None


async def texting(ctx: LoadContext) -> None:
    """Sends at `profile.texts_per_minute` and replies at `profile.replies_per_minute`, over shared recipients."""
    state = Texting(ctx)
    async with aiohttp.ClientSession() as session:
        sms = SmsSimulator(session, f"http://127.0.0.1:{ctx.stack.process('sms-simulator').port}")
        await asyncio.gather(paced(ctx, ctx.profile.texts_per_minute, "texts", lambda: _send(state)),
                             paced(ctx, ctx.profile.replies_per_minute, "replies", lambda: _reply(state, sms)))
    if state.expected:
        ctx.history.notes.append("texts: refused as expected: " + ", ".join(
            f"{n} {why}" for why, n in sorted(state.expected.items())))


async def _send(state: Texting) -> None:
    ctx, now = state.ctx, datetime.now(UTC)
    stopped = [r for r in state.recipients if r.state == STOPPED and state.live(r)]
    if stopped and ctx.rng.random() < AFTER_STOP_SHARE:
        recipient: Recipient | None = ctx.rng.choice(stopped)
    else:
        tenant = pick_tenant(ctx)
        if tenant is None:
            return
        recipient = await _recipient(state, tenant, now)
    if recipient is None:
        return
    after_stop = recipient.state == STOPPED
    recipient.texts += 1
    recipient.in_flight += 1
    try:
        status, sent = await ctx.client.request("POST", "/api/v1/sms/send", tenant=recipient.tenant,
                                                idempotency_key=fresh_key(ctx), json={
                                                    "to": recipient.phone, "from_agent_id": recipient.tenant.agent_id,
                                                    "message": f"Your quote is ready (#{recipient.texts})."})
    finally:
        recipient.in_flight -= 1
    _record(state, recipient, after_stop, status, sent)


def _record(state: Texting, recipient: Recipient, after_stop: bool, status: int, sent: Any) -> None:
    history = state.ctx.history
    code = sent.get("error", {}).get("code") if isinstance(sent, dict) else None
    if status == 200 and sent.get("message_sid"):
        history.texts[sent["message_sid"]] = recipient.tenant.business_id
        if after_stop:
            history.notes.append(f"texts: a text to {recipient.phone} after their STOP to {recipient.tenant.number} "
                                 f"was accepted: {sent}")
    elif status == 200 and sent.get("status") == "failed":  # a repeat after the provider refused it (a fault)
        state.expected["failed at the provider (200 with status failed, no sid)"] += 1
    elif after_stop and status == 400 and code == "number_opted_out":
        state.expected["after STOP (400 number_opted_out)"] += 1
    elif refused_by_standing(status, sent):
        state.expected["while the workspace was held (403)"] += 1
    elif at_daily_limit(status, sent):
        state.expected[f"at the plan's {sent['error']['limit']} (429)"] += 1
    else:
        history.notes.append(f"texts: sms/send to {recipient.phone} answered {status}: {sent}")


async def _recipient(state: Texting, tenant: Tenant, now: datetime) -> Recipient | None:
    """One of the tenant's recipients who may be texted now, or someone new, opted in first."""
    ctx = state.ctx
    known = state.textable(tenant, now)
    if known and ctx.rng.random() >= NEW_RECIPIENT_SHARE:
        return ctx.rng.choice(known)
    phone = state.new_phone(now)
    if phone is None:
        ctx.history.notes.append(f"texts: no new recipient whose texting window is open at {now:%H:%M} UTC")
        return None
    status, consent = await ctx.client.request("POST", "/api/v1/sms/consent", tenant=tenant, json={
        "phone": phone, "business_id": tenant.business_id, "state": "opted_in", "note": "soak: a web form"})
    if status != 201:
        ctx.history.notes.append(f"texts: the opt-in of {phone} answered {status}: {consent}")
        return None
    recipient = Recipient(phone, tenant)
    state.recipients.append(recipient)
    return recipient


async def _reply(state: Texting, sms: SmsSimulator) -> None:
    """A recipient with no text in flight texts the tenant's number back: STOP (again, when an earlier STOP was not
    acknowledged) or a few words."""
    ctx = state.ctx
    stopping = [r for r in state.recipients if r.state == STOPPING and r.in_flight == 0 and state.live(r)]
    texted = [r for r in state.recipients if r.state == TEXTING and r.texts and r.in_flight == 0 and state.live(r)]
    if not (stopping or texted):
        return
    recipient = ctx.rng.choice(stopping or texted)
    stop = recipient.state == STOPPING or ctx.rng.random() < STOP_SHARE
    body = "STOP" if stop else ctx.rng.choice(REPLIES)
    if stop:
        recipient.state = STOPPING  # no text goes to them from now on
    recipient.in_flight += 1
    try:
        status, answer = await sms.control("POST", "/inbound", {"from": recipient.phone, "to": recipient.tenant.number,
                                                                "body": body})
    finally:
        recipient.in_flight -= 1
    acknowledged = status == 201 and 200 <= answer.get("status", 0) < 300
    if acknowledged and stop:
        recipient.state = STOPPED
        ctx.history.stops.append((recipient.phone, str(recipient.tenant.number), datetime.now(UTC)))
    elif not acknowledged:
        ctx.history.notes.append(f"replies: {body!r} from {recipient.phone} to {recipient.tenant.number} was not "
                                 f"acknowledged ({status}: {answer}){'; sent again later' if stop else ''}")
