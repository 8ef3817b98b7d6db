"""The soak's settings: how long it runs, what load it offers and how many faults it injects. The default fits this
2-core machine with the scaled-out stack (REPLICAS=2) on it; `short()` is the profile `make test` runs."""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SoakProfile:
    seconds: float = 600.0  # the load and its faults (SOAK_MINUTES)
    quiet_seconds: float = 120.0  # after the load: no faults, no new work, retries and deliveries finish
    seed: int = 0
    # the load (per minute, over all tenants; an actor sleeps an exponential gap between its requests)
    tenants: int = 4  # signed up before the faults begin (half by the checkout, half by x402), each with agent+number
    signups_per_minute: float = 1.0  # more signups during the soak, paying either way
    calls_per_minute: float = 12.0  # outbound calls (some to voicemail, busy, failed)
    inbound_calls_per_minute: float = 6.0  # rung at the voice simulator
    texts_per_minute: float = 20.0  # sms/send
    replies_per_minute: float = 6.0  # inbound texts, some of them STOP
    run_touches: int = 300  # one communication run's touches, planned over the soak
    pipeline_runs_per_minute: float = 1.0  # the sales pipeline's runner
    evals_per_minute: float = 1.0
    pauses_per_minute: float = 0.5  # a workspace paused, then resumed
    reads_per_minute: float = 60.0  # lists and gets across every service
    teardowns: int = 1  # tenants torn down near the end of the load
    # the faults, spread over the load's seconds (faults.schedule draws them from the seed)
    kills: int = 12  # SIGKILL of a process (every kind once before any twice)
    pauses: int = 2  # SIGSTOP, then SIGCONT a few seconds later
    postgres_restarts: int = 1
    nats_restarts: int = 1
    provider_outages: int = 2  # the voice or SMS simulator answering 500 or stalling for a while
    partner_outages: int = 1  # the webhook receiver down for a minute

    def scaled(self, seconds: float) -> SoakProfile:
        return replace(self, seconds=seconds)


def short(seed: int = 55) -> SoakProfile:
    """The profile `make test` runs (about 60 s of load): a fixed seed, a few kills, no server restarts (the
    integration tests restart PostgreSQL and NATS on their own)."""
    return SoakProfile(seconds=60.0, quiet_seconds=45.0, seed=seed, tenants=2, signups_per_minute=1.0, run_touches=30,
                       kills=4, pauses=1, postgres_restarts=0, nats_restarts=0, provider_outages=1, partner_outages=0,
                       teardowns=0)
