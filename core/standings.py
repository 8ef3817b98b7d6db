"""A business's standing (core.standing) and plan where money is spent, in every process that spends it.

A request the gateway authenticated carries each of its businesses' standing in its signed token: that is used as
it is, with no round trip. Work no gateway vouched for (an inbound call, a communication run's touch, the pipeline
runner, a worker's token) asks the accounts service (GetWorkspace), and the answer is kept `TTL_SECONDS` in this
process: forgotten at once when a `workspace.standing_changed` event names the business (a plain NATS subscription
to the EVENTS stream's subject, so every replica hears it), and not trusted at all while this process is not
connected to NATS or across a reconnection (core.bus.HeardInvalidations). What the accounts service cannot tell
(it is unreachable, or has no such workspace) is `unknown`, which is held: nothing is spent on a guess.

The plan (what a business may spend a day: core.plans) is read the same way, also for a request whose token has
the standing: a business's first spend in TTL_SECONDS costs one GetWorkspace, the rest none.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core import standing, tenant
from core.bus import EventBus, HeardInvalidations, subject_for
from core.errors import ServiceError
from switchboard.v1 import accounts_pb2

log = logging.getLogger(__name__)

TTL_SECONDS = 30.0
KEPT = 10_000
SUBJECT = subject_for("workspace.standing_changed")


@dataclass(frozen=True)
class Facts:
    """What spending needs to know of a business."""

    standing: str
    plan_id: str = ""


UNKNOWN_FACTS = Facts(standing.UNKNOWN)
Ask = Callable[[str], Awaitable[Facts]]


def asking(accounts: Any) -> Ask:
    """Ask the accounts service (a core.rpc.Client of it) for a business's facts, as the current caller; what it
    cannot answer is unknown."""
    async def ask(business_id: str) -> Facts:
        try:
            found = await accounts.GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=business_id))
        except ServiceError as exc:
            log.warning("standing of business %s unknown (held): accounts answered %s", business_id, exc.code)
            return UNKNOWN_FACTS
        except Exception as exc:  # noqa: BLE001 - unreachable, timed out: unknown, so held
            log.warning("standing of business %s unknown (held): %s", business_id, exc)
            return UNKNOWN_FACTS
        return Facts(found.standing or standing.UNKNOWN, found.plan_id)
    return ask


class Standings:
    """Each business's facts as the accounts service gave them, kept briefly and forgotten when its standing
    changes (see the module's doc)."""

    def __init__(self, ask: Ask, *, ttl: float = TTL_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.ask, self.ttl, self.clock = ask, ttl, clock
        self._kept: dict[str, tuple[Facts, float]] = {}
        self.heard = HeardInvalidations(self._kept.clear)  # until attached, nothing is kept

    async def facts(self, business_id: str) -> Facts:
        caching = self.heard.trusted
        found = self._kept.get(business_id) if caching else None
        if found is not None and self.clock() - found[1] < self.ttl:
            return found[0]
        facts = await self.ask(business_id)
        if caching and facts.standing != standing.UNKNOWN:
            if len(self._kept) >= KEPT:
                self._kept.clear()
            self._kept[business_id] = (facts, self.clock())
        return facts

    async def standing_of(self, business_id: str) -> str:
        """The standing the caller's token carries (the gateway's word), else the accounts service's."""
        carried = tenant.current().standing_of(business_id)
        return carried or (await self.facts(business_id)).standing

    async def require_good(self, business_id: str, action: str) -> None:
        """Refuse `action` (403 forbidden saying what to do) for a business not in good standing, or whose standing
        is unknown."""
        value = await self.standing_of(business_id)
        if not standing.is_good(value):
            raise standing.refusal(value, action)

    async def is_good(self, business_id: str) -> bool:
        return standing.is_good(await self.standing_of(business_id))

    def forget(self, business_id: str) -> None:
        self._kept.pop(business_id, None)

    async def _on_change(self, msg: Any) -> None:
        try:
            business_id = json.loads(msg.data).get("business_id")
        except (ValueError, AttributeError):
            business_id = None
        if isinstance(business_id, str):
            self.forget(business_id)
        else:
            self._kept.clear()

    async def attach(self, bus: EventBus) -> None:
        """Hear the standing changes once NATS is reached (until then nothing is kept: every spend asks)."""
        bus.start()
        while not await bus.wait_connected(5.0):
            log.warning("standings: NATS not reachable yet; every spend asks the accounts service until it is")
        nc = bus.nc
        assert nc is not None  # connected
        await nc.subscribe(SUBJECT, cb=self._on_change)
        self.heard.attach(nc)


def heard_by(runtime: Any) -> Standings:
    """A Standings of a process (core.grpc_server.Runtime) asking the accounts service as its callers, hearing the
    changes for its lifetime."""
    kept = Standings(asking(runtime.client("accounts")))
    task = asyncio.create_task(kept.attach(runtime.bus), name="standings-attach")

    async def stop() -> None:
        task.cancel()
    runtime.on_stop.append(stop)
    return kept


async def _nobody_asked(business_id: str) -> Facts:
    return UNKNOWN_FACTS


def carried_only() -> Standings:
    """Standings with no accounts service to ask: only what the caller's token carries counts (a use case's tests
    that give none); any other business is unknown, so held."""
    return Standings(_nobody_asked)
