"""Token-bucket rate limits, kept in each gateway replica's memory: per key (and session), and per client address
on the public routes (gateway.publiclimits).

Each bucket gets `limit` requests per `period_seconds` per replica with bursts up to the
same number; a refused request learns from Retry-After when a token is back. The per-key limit is shared by the
replicas (gateway.sharedlimit).
(Signup's per-address limit is enforced in the accounts service, so it holds
across replicas.)
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable


class TokenBuckets:
    def __init__(self, limit: int, period_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000):
        self.capacity = float(limit)
        self.rate = limit / period_seconds
        self.clock = clock
        self.max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        """0 when the request may go ahead, else the seconds until it could."""
        now = self.clock()
        tokens = self._tokens(key, now)
        if tokens >= 1.0:
            self._set(key, tokens - 1.0, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate

    def _tokens(self, key: str, now: float) -> float:
        tokens, stamp = self._buckets.get(key, (self.capacity, now))
        return min(self.capacity, tokens + (now - stamp) * self.rate)

    def _set(self, key: str, tokens: float, now: float) -> None:
        if len(self._buckets) >= self.max_keys and key not in self._buckets:
            self._buckets.clear()  # bounded memory; full buckets are the default anyway
        self._buckets[key] = (tokens, now)


def retry_after_header(wait_seconds: float) -> str:
    return str(max(1, math.ceil(wait_seconds)))
