"""The per-key rate limit shared by the gateway replicas, with nothing added to a request's path.

Each replica decides alone, from its own token bucket per key (gateway.ratelimit.TokenBuckets: N requests a minute,
bursts up to N), and every KEY_RATE_LIMIT_SHARE_SECONDS (0.5 s) publishes on core NATS how many requests of each key
it let through since it last did; every replica charges the others' counts to its own buckets. So each replica's
bucket follows the key's use on all of them, late by at most one interval (and NATS's delivery, milliseconds).

The bound: a replica decides without the others' counts of the last interval, so across R replicas a key gets
beyond its N at most what it was let through at the other R-1 replicas within one interval, and never more than
(R-1)*N (a full bucket holds N). That excess is charged as soon as it is heard (a bucket goes down to -N at most: a
debt the refill pays back first), so over longer spans the key's rate is N a minute. A key alternating between two
replicas at 10 requests a second gets at most about 3 more than N; a burst faster than the interval may get up to 2N
at once, and then waits until the debt is refilled.

While NATS is away each replica limits alone (up to R*N a minute): the limit falls back to a per-replica one rather
than refuse requests, and counts made then are not sent later.
"""
from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg

from core import registry
from core.background import Periodic
from gateway.ratelimit import TokenBuckets

log = logging.getLogger(__name__)

# Core NATS (not JetStream): a lost message only widens the bound for one interval.
SUBJECT = registry.RATELIMIT_TAKEN_SUBJECT
KEYS_PER_MESSAGE = 2000  # about 100 kB a message, well under NATS's 1 MB payload limit


class SharedTokenBuckets(TokenBuckets):
    """Token buckets that count what they let through (`drain`) and take what other replicas let through
    (`charge`)."""

    def __init__(self, limit: int, period_seconds: float = 60.0, **kwargs: Any) -> None:
        super().__init__(limit, period_seconds, **kwargs)
        self._taken: Counter[str] = Counter()

    def take(self, key: str) -> float:
        wait = super().take(key)
        if not wait:
            self._taken[key] += 1
        return wait

    def charge(self, key: str, count: int) -> None:
        """`count` requests of `key` let through by another replica: taken from this bucket, down to -capacity."""
        now = self.clock()
        self._set(key, max(-self.capacity, self._tokens(key, now) - count), now)

    def drain(self) -> Counter[str]:
        """What this replica let through since the last drain."""
        taken, self._taken = self._taken, Counter()
        return taken


class LimitSharing(Periodic):
    """Publishes this replica's counts every `interval` seconds and charges the other replicas' (`attach`)."""

    task_name = "ratelimit-sharing"

    def __init__(self, buckets: SharedTokenBuckets, interval: float):
        self.buckets, self.interval = buckets, interval
        self.replica = uuid.uuid4().hex  # this process: its own messages come back to it and are skipped
        self.nc: Client | None = None

    async def attach(self, nc: Client) -> None:
        await nc.subscribe(SUBJECT, cb=self._heard)
        self.nc = nc
        self.start()

    async def _heard(self, msg: Msg) -> None:
        try:
            message = json.loads(msg.data)
            if message["replica"] == self.replica:
                return
            for key, count in message["taken"].items():
                self.buckets.charge(key, int(count))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("ratelimit-sharing: unreadable message skipped (%s)", type(exc).__name__)

    async def round(self) -> bool:
        taken = self.buckets.drain()
        if not taken or self.nc is None or not self.nc.is_connected:
            return False
        items = list(taken.items())
        for start in range(0, len(items), KEYS_PER_MESSAGE):
            chunk = dict(items[start:start + KEYS_PER_MESSAGE])
            await self.nc.publish(SUBJECT, json.dumps({"replica": self.replica, "taken": chunk}).encode())
        return False
