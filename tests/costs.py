"""What one request costs over every process of the test stack (core.costs): the request goes to the gateway
with a fresh X-Cost-Tag, then every process is asked what that tag cost it."""
from __future__ import annotations

import uuid
from collections import Counter
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
        async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process(name).port}") as channel:
            reply = await costs_pb2_grpc.CostsStub(channel).TakeCosts(costs_pb2.TakeCostsRequest(tag=tag), timeout=5)
        _add(counts, name, dict(reply.counts))
    return Spent(+counts)


async def cost_of(stack, api, method: str, path: str, **kwargs) -> tuple[int, object, Spent]:
    """Send one request (Api.request's arguments) tagged, and what it cost."""
    tag = uuid.uuid4().hex
    headers = {**(kwargs.pop("headers", None) or {}), costs.HEADER: tag}
    status, body, _ = await api.request(method, path, headers=headers, **kwargs)
    return status, body, await take(stack, api, tag)
