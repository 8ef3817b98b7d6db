"""Calls in the soak: outbound calls placed through the API from a tenant's agent to fresh numbers, and inbound
calls the voice simulator rings to a tenant's number.

The voice simulator plays an outbound call by the dialled number's last four digits (its test numbers: 0001 no
answer, 0002 busy, 0003 voicemail, 0004 failed, any other answered), so the outcome travels with the call however
the actors' calls interleave; an inbound call's outcome is given with the ring. Every call POST carries an
Idempotency-Key, so the client's retries through a fault never place it twice; a repeat that meets the first
attempt still being placed (409) is sent again, as the answer asks, until it names the call.
"""
from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import aiohttp

from bench.soak.actors.pacing import fresh_key, paced
from bench.soak.actors.tenants import pick_tenant, refused_by_standing
from bench.soak.client import RETRY_FOR_SECONDS, at_daily_limit
from bench.soak.history import InboundRing
from bench.soak.load import LoadContext
from providers.voice.vapi.simulator.playback import TEST_NUMBERS
from tests.calling import VoiceSimulator, ring

AREAS = ("206", "212", "312", "415", "617")
# How often each outcome is asked for, outbound and inbound (weights).
OUTBOUND = {"answered": 6, "no-answer": 1, "busy": 1, "voicemail": 1, "failed": 1}
INBOUND = {"answered": 7, "voicemail": 2, "failed": 1}
STILL_PLACING_SECONDS = 2.0
LAST_DIGITS = {outcome: digits for digits, outcome in TEST_NUMBERS.items()}


def fresh_number(ctx: LoadContext, outcome: str = "answered") -> str:
    """A US number the simulator plays with `outcome` (answered: last four digits from 1000, no test number)."""
    digits = LAST_DIGITS.get(outcome) or str(ctx.rng.randint(1000, 9999))
    return f"+1{ctx.rng.choice(AREAS)}{ctx.rng.randint(200, 999)}{digits}"


def being_placed(status: int, body: Any) -> bool:
    """The 409 for a repeat of a call POST that is still being placed (the first attempt's answer was lost)."""
    return status == 409 and "still being placed" in str(body)


def draw(ctx: LoadContext, weights: dict[str, int]) -> str:
    return ctx.rng.choices(list(weights), list(weights.values()))[0]


async def outbound_calls(ctx: LoadContext) -> None:
    """POST /api/v1/calls at `profile.calls_per_minute`; each call the API accepted is in `history.calls`."""
    held: Counter[str] = Counter()
    limited: Counter[str] = Counter()

    async def place() -> None:
        tenant = pick_tenant(ctx)
        if tenant is None:
            return
        body = {"agent_id": tenant.agent_id, "to": fresh_number(ctx, draw(ctx, OUTBOUND))}
        key, deadline = fresh_key(ctx), time.monotonic() + RETRY_FOR_SECONDS
        while True:
            status, call = await ctx.client.request("POST", "/api/v1/calls", tenant=tenant, json=body,
                                                    idempotency_key=key)
            if not (being_placed(status, call) and time.monotonic() < deadline):
                break
            await asyncio.sleep(STILL_PLACING_SECONDS)  # what the answer asks: its call, once placed
        if status == 201:
            ctx.history.calls[call["id"]] = tenant.business_id
        elif refused_by_standing(status, call):
            held[tenant.business_id] += 1
        elif at_daily_limit(status, call):
            limited[call["error"]["limit"]] += 1
        else:
            ctx.history.notes.append(f"outbound_calls: POST /calls {body} answered {status}: {call}")

    await paced(ctx, ctx.profile.calls_per_minute, "outbound_calls", place)
    if held:
        ctx.history.notes.append(f"outbound_calls: {held.total()} calls refused 403 while their workspace was "
                                 "held (expected)")
    for limit, count in limited.items():
        ctx.history.notes.append(f"outbound_calls: {count} calls refused 429 at the plan's {limit} (expected)")


async def inbound_calls(ctx: LoadContext) -> None:
    """The voice simulator rings a tenant's number at `profile.inbound_calls_per_minute` from a fresh caller, some
    calls to voicemail or failing; each one rung is in `history.inbound`, with the words it ended with when no
    assistant took it (the ring answers after our answer to the provider's assistant-request)."""
    async with aiohttp.ClientSession() as session:
        voice = VoiceSimulator(session, f"http://127.0.0.1:{ctx.stack.process('voice-simulator').port}",
                               ctx.stack.home_secret("voice_api_key"))

        async def call_in() -> None:
            tenant = pick_tenant(ctx)
            if tenant is None or tenant.number is None:
                return
            outcome, caller, at = draw(ctx, INBOUND), fresh_number(ctx), time.monotonic()
            try:
                call = await ring(voice, tenant.number, caller, outcome)
            except AssertionError as not_rung:  # the control plane did not ring it (ring says why)
                ctx.history.notes.append(f"inbound_calls: {tenant.number} from {caller} not rung: {not_rung}")
                return
            refused = call.get("endedMessage") if call.get("status") == "ended" else None
            ctx.history.inbound.append(InboundRing(tenant.business_id, call["id"], outcome, at, refused))

        await paced(ctx, ctx.profile.inbound_calls_per_minute, "inbound_calls", call_in)
