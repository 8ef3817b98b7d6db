"""The platform's health (services.sdr.health_service) with an in-memory port: every service's readiness asked at
each report, the providers' status at most once per TTL (shared while a check runs, a failed check not kept); and
the gateway's route over it, which answers even when the sdr service does not."""
import asyncio
from types import SimpleNamespace

import grpc
import pytest

from core import registry
from gateway.routes.accounts import health
from services.sdr.health_service import CachedProviders, Health
from switchboard.v1 import sdr_pb2
from tests.unit.fakes import FakeClock

NAMES = tuple(s.name for s in registry.SERVICES)


class InMemorySources:
    """`HealthSources` from dicts; every provider asked is kept in `asked`."""

    def __init__(self, ready: dict[str, str], providers: dict[str, str]):
        self.ready, self.providers, self.asked = ready, providers, []

    async def readiness(self, service):
        return self.ready.get(service, "ok")

    async def provider(self, kind):
        self.asked.append(kind)
        return self.providers.get(kind, "ok")


async def test_the_providers_are_asked_at_most_once_per_ttl():
    clock, calls = FakeClock(), []

    async def check():
        calls.append(1)
        await asyncio.sleep(0.01)
        return {"voice": f"ok-{len(calls)}"}

    cached = CachedProviders(check, ttl=10.0, clock=clock)
    together = await asyncio.gather(*(cached.statuses() for _ in range(5)))
    assert together == [{"voice": "ok-1"}] * 5 and len(calls) == 1  # callers during a check share it
    clock.now += 9.9
    assert await cached.statuses() == {"voice": "ok-1"} and len(calls) == 1
    clock.now += 0.1
    assert await cached.statuses() == {"voice": "ok-2"} and len(calls) == 2


async def test_a_failed_provider_check_is_not_kept():
    outcomes = [RuntimeError("boom"), {"voice": "ok"}]

    async def check():
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    cached = CachedProviders(check, ttl=10.0, clock=FakeClock())
    with pytest.raises(RuntimeError):
        await cached.statuses()
    assert await cached.statuses() == {"voice": "ok"}


async def test_the_report_asks_every_service_each_time_and_the_providers_once_per_ttl():
    clock = FakeClock()
    sources = InMemorySources({"evals": "not_serving", "webhooks": "unreachable"}, {"voice": "rejected_credentials"})
    report = Health(sources, NAMES, ttl=10.0, clock=clock)
    first = await report.report()
    assert first == {"services": {**dict.fromkeys(NAMES, "ok"), "evals": "not_serving", "webhooks": "unreachable"},
                     "providers": {"voice": "rejected_credentials", "messaging": "ok", "payments": "ok"}}
    sources.ready, sources.providers = {}, {}  # all well again
    again = await report.report()
    assert again["services"] == dict.fromkeys(NAMES, "ok") and again["providers"] == first["providers"]
    assert sorted(sources.asked) == ["messaging", "payments", "voice"]  # asked once within the TTL
    clock.now += 10.0
    assert set((await report.report())["providers"].values()) == {"ok"} and len(sources.asked) == 6
    # The reply carries it whole.
    assert sdr_pb2.PlatformHealth(**first).services["evals"] == "not_serving"


class FakeSdr:
    def __init__(self, reply: sdr_pb2.PlatformHealth | None):
        self.reply = reply

    async def GetHealth(self, request, timeout=None):
        if self.reply is None:
            raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                       "connection refused")
        return self.reply


def _context(sdr: FakeSdr, nats_connected: bool = True) -> SimpleNamespace:
    deps = SimpleNamespace(bus=SimpleNamespace(is_connected=nats_connected), auth=SimpleNamespace(listening=True))
    return SimpleNamespace(deps=deps, rpc=lambda service: sdr if service == "sdr" else None)


async def test_the_route_is_the_sdr_services_report_beside_the_gateways_queue():
    well = sdr_pb2.PlatformHealth(services=dict.fromkeys(NAMES, "ok"),
                                  providers=sdr_pb2.ProviderStatuses(voice="ok", messaging="ok", payments="ok"))
    body = await health(_context(FakeSdr(well)))
    assert (body["status"], body["api"], body["queue"]) == ("ok", "ok", "ok")
    assert list(body["services"]) == list(NAMES) and set(body["services"].values()) == {"ok"}
    assert body["providers"] == {"voice": "ok", "messaging": "ok", "payments": "ok"} and body["checked_at"][-1] == "Z"
    assert set(body) == {"status", "api", "queue", "services", "providers", "checked_at"}
    queue_down = await health(_context(FakeSdr(well), nats_connected=False))
    assert (queue_down["status"], queue_down["queue"]) == ("degraded", "unreachable")
    refused = sdr_pb2.PlatformHealth(services=well.services, providers=sdr_pb2.ProviderStatuses(
        voice="ok", messaging="refused", payments="ok"))
    assert (await health(_context(FakeSdr(refused))))["status"] == "degraded"


async def test_the_route_answers_while_the_sdr_service_does_not():
    body = await health(_context(FakeSdr(None)))
    assert (body["status"], body["queue"]) == ("degraded", "ok")
    assert body["services"] == {**dict.fromkeys(NAMES, "unknown"), "sdr": "unreachable"}
    assert body["providers"] == {"voice": "unknown", "messaging": "unknown", "payments": "unknown"}
