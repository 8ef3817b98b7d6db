"""What one request costs over every process of the test stack (core.costs): the request goes to the gateway
with a fresh X-Cost-Tag, then every process is asked what that tag cost it."""
from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import grpc

from core import costs, registry
from switchboard.v1 import costs_pb2, costs_pb2_grpc


@dataclass(frozen=True)
class Spent:
    """Counts over every process: per kind (core.costs.KINDS) and each kind's details (which statement, which
    RPC), with the process that spent them."""

    counts: Counter

    def totals(self) -> dict[str, int]:
        return {kind: self.counts[kind] for kind in costs.KINDS}

    def details(self) -> list[str]:
        return sorted(f"{n} x {what}" for what, n in self.counts.items() if ":" in what)


def _add(counts: Counter, process: str, spent: dict) -> None:
    for what, n in spent.items():
        kind, _, detail = what.partition(":")
        counts[f"{kind}:{process}: {detail}" if detail else kind] += n


async def take(stack, api, tag: str) -> Spent:
    counts: Counter = Counter()
    async with api.session.get(f"{stack.base_url}/_costs/{tag}") as r:
        assert r.status == 200, await r.text()
        _add(counts, "gateway", await r.json())
    for name in [s.name for s in registry.SERVICES] + [w.name for w in registry.WORKERS]:
        _add(counts, name, await spent_at(stack.process(name).port, tag))
    return Spent(+counts)


async def spent_at(port: int, tag: str) -> dict[str, int]:
    """What `tag` cost the service or worker serving gRPC on `port` (taken: asked again, it answers nothing)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await costs_pb2_grpc.CostsStub(channel).TakeCosts(costs_pb2.TakeCostsRequest(tag=tag), timeout=5)
    return dict(reply.counts)


async def cost_of(stack, api, method: str, path: str, *, tag: str | None = None,
                  **kwargs) -> tuple[int, object, Spent]:
    """Send one request (Api.request's arguments) tagged (`tag`, else a fresh one), and what it cost."""
    tag = tag or uuid.uuid4().hex
    headers = {**(kwargs.pop("headers", None) or {}), costs.HEADER: tag}
    status, body, _ = await api.request(method, path, headers=headers, **kwargs)
    return status, body, await take(stack, api, tag)


async def settled_cost(stack, api, tag: str, done: Callable[[], Awaitable[bool]], *, quiet: float = 1.5,
                       timeout: float = 30) -> Spent:
    """What `tag` cost over every process, once `done()` is true and nothing more was counted under it for `quiet`
    seconds: for work left to consumers, which ends when the last of them is through."""
    counts: Counter = Counter()
    deadline = changed = time.monotonic()
    deadline += timeout
    while True:
        spent = await take(stack, api, tag)
        now = time.monotonic()
        if spent.counts:
            counts.update(spent.counts)
            changed = now
        elif now - changed >= quiet and await done():
            return Spent(+counts)
        assert now < deadline, f"the work under {tag} did not settle in {timeout}s: {sorted(counts.items())}"
        await asyncio.sleep(0.1)
