"""The number each agent texts from, kept in the messaging process so a send asks the agents service nothing
(issue 38: that RPC was an eighth of the stack's CPU per text).

A kept sender is forgotten as soon as this process hears a `phone_number.assigned` or `phone_number.released`
naming its agent or its number (a plain NATS subscription to those events as the relay publishes them, in every
replica), and after SENDER_TTL_SECONDS at most. Events can only be missed while NATS is away: until this process
has subscribed, while it is disconnected, and after each reconnection (the cache is then emptied), senders are
asked of the agents service as before. An answer asked for before an event arrived is not kept (a generation
counter), so a number moved during the RPC is never kept for the old agent.

Tenancy: a kept sender is answered only to a caller of its business; anyone else is asked of the agents service,
which answers them 404 as before.
"""
from __future__ import annotations

import asyncio
import json
import logging

from cachetools import TTLCache
from nats.aio.msg import Msg

from core import tenant
from core.background import Background
from core.bus import EventBus, HeardInvalidations, subject_for
from services.messaging.ports import Agents, NumberRoute, Sender

log = logging.getLogger(__name__)

SENDER_TTL_SECONDS = 60.0
SENDERS_KEPT = 50_000
NUMBER_EVENTS = subject_for("phone_number.*")  # phone_number.assigned, phone_number.released


class CachedSenders(Background):
    """An Agents port that keeps senders (see the module); `start()` subscribes once the bus is connected."""

    task_name = "sender-cache"

    def __init__(self, agents: Agents, bus: EventBus, *, ttl: float = SENDER_TTL_SECONDS):
        self.agents, self.bus = agents, bus
        self._kept: TTLCache[str, Sender] = TTLCache(maxsize=SENDERS_KEPT, ttl=ttl)
        self._generation = 0
        self.heard = HeardInvalidations(self.forget_all)

    async def run(self) -> None:
        while self.bus.nc is None:
            await asyncio.sleep(0.2)
        nats = self.bus.nc
        await nats.subscribe(NUMBER_EVENTS, cb=self._on_number_event)
        await nats.flush()  # the server has the subscription: from here on no event is missed while connected
        self.heard.attach(nats)

    def forget_all(self) -> None:
        self._generation += 1
        self._kept.clear()

    def forget(self, agent_id: str | None, phone_number: str | None) -> None:
        self._generation += 1
        for kept_agent, sender in list(self._kept.items()):
            if kept_agent == agent_id or (phone_number and sender.phone_number == phone_number):
                self._kept.pop(kept_agent, None)

    async def _on_number_event(self, msg: Msg) -> None:
        try:
            data = json.loads(msg.data)["data"]
            self.forget(data.get("agent_id"), data.get("phone_number"))
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("sender cache: an undecodable event on %s: forgetting every sender", msg.subject)
            self.forget_all()

    async def sender(self, agent_id: str) -> Sender:
        if not self.heard.trusted:
            return await self.agents.sender(agent_id)
        kept = self._kept.get(agent_id)
        if kept is not None and kept.business_id in tenant.require_account().business_ids:
            return kept
        generation = self._generation
        sender = await self.agents.sender(agent_id)
        if generation == self._generation:
            self._kept[agent_id] = sender
        return sender

    async def route(self, phone_number: str) -> NumberRoute | None:
        return await self.agents.route(phone_number)
