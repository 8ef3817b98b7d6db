"""The soak's faults: a plan drawn from the profile's seed (`schedule`, printed by `describe` so that a failing run
can be replayed with the same seed), and its executor (`run_faults`), which records each fault's window in the
history: the ledger allows a 5xx only inside one, plus a short slack.

- kill: SIGKILL of a platform process (a service replica, its outbox relay with it; a worker; a gateway replica),
  every kind of process once before any twice; the launcher's supervision starts it again;
- pause: SIGSTOP, then SIGCONT a few seconds later, of one of them;
- postgres-restart, nats-restart: the embedded server stopped, down a moment, started again;
- provider-outage: the voice or SMS simulator answering 500 to a path prefix, or stalling past our clients'
  time-outs, until cleared (its control plane's fault with `times` null);
- partner-outage: the partner's webhook receiver refusing connections.

The stack's faults (kill, pause, the server restarts) run one at a time, each after the one before has recovered
(the stack answers ready again), so faults never pile up beyond what the stack can recover from: no kill during a
PostgreSQL restart, never both replicas of a kind down at once. The outages, outside the stack, run in their own turn
beside them, one at a time. The plan leaves the first and last tenth of the load quiet and reserves each fault a
span of its own (`Fault.span`): a fault's time is its earliest; it starts later if the one before recovered late."""
from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp

from bench.soak.history import FaultWindow, History
from bench.soak.partner import Partner
from bench.soak.profile import SoakProfile
from core import registry
from deploy.local.servers import port_is_free
from deploy.local.stack import SMS_SIMULATOR, VOICE_SIMULATOR
from providers.simulator_control import PREFIX

if TYPE_CHECKING:
    from deploy.local.stack import Stack

KILL, PAUSE, POSTGRES_RESTART, NATS_RESTART = "kill", "pause", "postgres-restart", "nats-restart"
PROVIDER_OUTAGE, PARTNER_OUTAGE = "provider-outage", "partner-outage"
KINDS = (KILL, PAUSE, POSTGRES_RESTART, NATS_RESTART, PROVIDER_OUTAGE, PARTNER_OUTAGE)
STACK_KINDS = frozenset({KILL, PAUSE, POSTGRES_RESTART, NATS_RESTART})  # one at a time, each after the last recovered
POSTGRES, NATS, PARTNER = "postgres", "nats", "partner"  # the targets that are no process of the stack

QUIET_EDGE = 0.1  # of the load's seconds, at its start and at its end: no fault
# The span a fault reserves: what it lasts and the stack's recovery after it.
KILL_SPAN = 8.0  # the supervisor's first backoff (1 s), the process's start, the gateways reaching it again
PAUSE_SECONDS = (3.0, 8.0)
PAUSE_RECOVERY = 4.0  # the paused process's peers' time-outs and reconnections
SERVER_DOWN_SECONDS = (1.0, 3.0)
SERVER_RECOVERY = 20.0  # every pool and subscription reconnected
PROVIDER_OUTAGE_SECONDS = (20.0, 60.0)
PARTNER_OUTAGE_SECONDS = 60.0  # "down for a minute", shorter only where the load is (at least the shortest outage)
# A stalled provider answers after this: past our clients' time-outs (voice 10 s, SMS 5 s)
STALL_SECONDS = 15.0
PROVIDER_PATHS = {VOICE_SIMULATOR: ("/call", "/"), SMS_SIMULATOR: ("/2010-04-01/",)}  # what an outage hits
RECOVERY_TIMEOUT = 120.0  # a fault's window ends at the latest this long after it was cleared (and it is noted)


@dataclass(frozen=True)
class Fault:
    at: float  # seconds after the load began: the earliest it starts
    kind: str  # KINDS
    target: str  # a process of the stack, POSTGRES, NATS, a simulator's process name or PARTNER
    seconds: float = 0.0  # a pause's, a server's time down, an outage's; 0 for a kill
    status: int = 0  # a provider outage's answer: 500, or 0 (stalling STALL_SECONDS)
    path: str = ""  # a provider outage: the path prefix it hits

    @property
    def span(self) -> float:
        """The seconds the plan reserves for it: what it lasts and, for the stack's faults, its recovery."""
        if self.kind == KILL:
            return KILL_SPAN
        if self.kind == PAUSE:
            return self.seconds + PAUSE_RECOVERY
        if self.kind in (POSTGRES_RESTART, NATS_RESTART):
            return self.seconds + SERVER_RECOVERY
        return self.seconds

    def line(self) -> str:
        """`+  12.3 s  kill  accounts-2  SIGKILL`: when, what, to which, how."""
        answer = "answering 500" if self.status else f"stalling {STALL_SECONDS:g} s"
        how = {KILL: "SIGKILL", PAUSE: f"SIGSTOP for {self.seconds:.1f} s, then SIGCONT",
               POSTGRES_RESTART: f"down {self.seconds:.1f} s", NATS_RESTART: f"down {self.seconds:.1f} s",
               PROVIDER_OUTAGE: f"{answer} on {self.path} for {self.seconds:.1f} s",
               PARTNER_OUTAGE: f"refusing connections for {self.seconds:.1f} s"}[self.kind]
        return f"+{self.at:6.1f} s  {self.kind:<16} {self.target:<24} {how}"


def kind_of(name: str) -> str | None:
    """The platform process `name` is a replica of (`accounts-2`: accounts), or None (a simulator, the mail
    catch-all: no process of the platform)."""
    if name in registry.PROCESSES:
        return name
    base, _, number = name.rpartition("-")
    return base if number.isdigit() and base in registry.PROCESSES else None


def schedule(profile: SoakProfile, process_names: Iterable[str]) -> list[Fault]:
    """The profile's faults drawn from random.Random(profile.seed) over its seconds, in time order; `process_names`:
    the stack's (Stack.processes), of which only the platform's are killed or paused. ValueError when the profile's
    faults do not fit its seconds."""
    rng = random.Random(profile.seed)
    names = sorted(set(process_names))
    by_kind: dict[str, list[str]] = {}
    for name in names:
        if (kind := kind_of(name)) is not None:
            by_kind.setdefault(kind, []).append(name)
    simulators = [s for s in (VOICE_SIMULATOR, SMS_SIMULATOR) if s in names]
    if (profile.kills or profile.pauses) and not by_kind:
        raise ValueError("no process of the platform among the names to kill or pause")
    if profile.provider_outages and not simulators:
        raise ValueError("no voice or SMS simulator among the names for a provider outage")

    in_stack = [Fault(0.0, KILL, target) for target in kill_targets(rng, by_kind, profile.kills)]
    for fault in (*(Fault(0.0, PAUSE, rng.choice([n for kind in sorted(by_kind) for n in by_kind[kind]]),
                          round(rng.uniform(*PAUSE_SECONDS), 1)) for _ in range(profile.pauses)),
                  *(Fault(0.0, POSTGRES_RESTART, POSTGRES, round(rng.uniform(*SERVER_DOWN_SECONDS), 1))
                    for _ in range(profile.postgres_restarts)),
                  *(Fault(0.0, NATS_RESTART, NATS, round(rng.uniform(*SERVER_DOWN_SECONDS), 1))
                    for _ in range(profile.nats_restarts))):
        in_stack.insert(rng.randint(0, len(in_stack)), fault)  # among the kills, which keep their order

    start, end = profile.seconds * QUIET_EDGE, profile.seconds * (1 - QUIET_EDGE)
    outages = profile.provider_outages + profile.partner_outages
    each = (end - start) / outages if outages else 0.0  # the longest an outage may last for them all to fit
    outside: list[Fault] = []
    for _ in range(profile.provider_outages):
        simulator = rng.choice(simulators)
        lasts = round(rng.uniform(PROVIDER_OUTAGE_SECONDS[0], max(PROVIDER_OUTAGE_SECONDS[0],
                                                                  min(PROVIDER_OUTAGE_SECONDS[1], each))), 1)
        outside.append(Fault(0.0, PROVIDER_OUTAGE, simulator, lasts, rng.choice((500, 0)),
                             rng.choice(PROVIDER_PATHS[simulator])))
    partner_lasts = round(max(PROVIDER_OUTAGE_SECONDS[0], min(PARTNER_OUTAGE_SECONDS, each)), 1)
    outside += [Fault(0.0, PARTNER_OUTAGE, PARTNER, partner_lasts) for _ in range(profile.partner_outages)]
    rng.shuffle(outside)

    plan = [*spread(rng, in_stack, start, end), *spread(rng, outside, start, end)]
    return sorted(plan, key=lambda f: f.at)


def kill_targets(rng: random.Random, by_kind: dict[str, list[str]], count: int) -> list[str]:
    """`count` processes to kill, in rounds: each round every kind once, in a random order, each time the replica
    of that kind killed least so far (ties drawn)."""
    killed: Counter[str] = Counter()
    targets: list[str] = []
    while len(targets) < count:
        kinds = sorted(by_kind)
        rng.shuffle(kinds)
        for kind in kinds[:count - len(targets)]:
            fewest = min(killed[n] for n in by_kind[kind])
            target = rng.choice([n for n in by_kind[kind] if killed[n] == fewest])
            killed[target] += 1
            targets.append(target)
    return targets


def spread(rng: random.Random, faults: list[Fault], start: float, end: float) -> list[Fault]:
    """`faults`, in their order, each given a time in [start, end] so that its span ends before the next one's
    time and the last's before `end`: the time left over is shared out in random gaps."""
    if not faults:
        return []
    needed = sum(f.span for f in faults)
    if needed > end - start:
        raise ValueError(f"{len(faults)} faults need {needed:.0f} s, more than the {end - start:.0f} s between "
                         "the quiet edges: lengthen the load or lower the fault counts")
    gaps = [rng.random() for _ in range(len(faults) + 1)]
    scale = (end - start - needed) / sum(gaps)
    at, placed = start, []
    for fault, gap in zip(faults, gaps, strict=False):
        at += gap * scale
        placed.append(Fault(at, fault.kind, fault.target, fault.seconds, fault.status, fault.path))
        at += fault.span
    return placed


def describe(plan: list[Fault], seed: int) -> str:
    """The plan, one line a fault, headed by its seed: what a failing run prints, to be replayed with that seed."""
    kinds = Counter(f.kind for f in plan)
    head = f"fault plan of seed {seed}: " + (", ".join(f"{kinds[k]} {k}" for k in KINDS if kinds[k]) or "no faults")
    return "\n".join([head, *(f"  {f.line()}" for f in plan)])


async def run_faults(plan: list[Fault], stack: Stack, partner: Partner, history: History, voice_url: str,
                     sms_url: str, started: float, *, until: float | None = None) -> None:
    """Inject `plan`'s faults, each at `started` (monotonic) + its time at the earliest, appending each one's window
    to `history.windows` as it closes. Turns the stack's supervision on first and leaves it on (a process killed
    after this returns is started again too). A fault it cannot see recover within RECOVERY_TIMEOUT is noted in
    `history.notes`, its window closed then. A fault that, late behind slow recoveries, would begin after `until`
    (monotonic: the load's quiet end) is not injected, and noted."""
    await asyncio.to_thread(stack.supervise)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        injector = Injector(stack, partner, history, http, {VOICE_SIMULATOR: voice_url, SMS_SIMULATOR: sms_url})
        await asyncio.gather(injector.in_turn([f for f in plan if f.kind in STACK_KINDS], started, until),
                             injector.in_turn([f for f in plan if f.kind not in STACK_KINDS], started, until))


class Injector:
    def __init__(self, stack: Stack, partner: Partner, history: History, http: aiohttp.ClientSession,
                 simulators: dict[str, str]):
        self.stack, self.partner, self.history, self.http, self.simulators = stack, partner, history, http, simulators
        self.inject: dict[str, Callable[[Fault], Awaitable[None]]] = {
            KILL: self.kill, PAUSE: self.pause, POSTGRES_RESTART: self.restart_server, NATS_RESTART: self.restart_server,
            PROVIDER_OUTAGE: self.provider_outage, PARTNER_OUTAGE: self.partner_outage}

    async def in_turn(self, faults: list[Fault], started: float, until: float | None) -> None:
        """Each of `faults` at its time, or once the one before it has closed if that is later (noted when it is
        more than a few seconds late); none after `until`."""
        for fault in sorted(faults, key=lambda f: f.at):
            if until is not None and max(time.monotonic(), started + fault.at) > until:
                self.history.notes.append(f"fault {fault.line()!r} not injected: it would have begun after the "
                                          "load's faults end")
                continue
            late = time.monotonic() - (started + fault.at)
            if late > 5:
                self.history.notes.append(f"fault {fault.line()!r} began {late:.0f} s late: the one before it "
                                          "recovered late")
            await asyncio.sleep(-late)  # negative (late): no sleep
            await self.inject[fault.kind](fault)

    def window(self, fault: Fault, start: float, end: float | None = None) -> None:
        self.history.windows.append(FaultWindow(fault.kind, fault.target, start, time.monotonic() if end is None
                                                else end))

    async def kill(self, fault: Fault) -> None:
        """SIGKILL; the window closes once the supervisor's new process listens on its port and the stack answers
        ready."""
        process = self.stack.process(fault.target)
        killed, start = process.proc, time.monotonic()
        await asyncio.to_thread(self.stack.kill, fault.target)

        def serving() -> bool:  # started again by the supervisor, and listening
            return process.proc is not killed and process.proc is not None and process.proc.poll() is None \
                and not port_is_free(process.port)
        deadline = start + RECOVERY_TIMEOUT
        while not serving() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        if not serving():
            self.history.notes.append(f"{fault.target} killed and not serving again after {RECOVERY_TIMEOUT:g} s "
                                      f"(restarts {self.stack.restarts.get(fault.target, 0)}; log {process.log})")
        await self.ready(fault, deadline)
        self.window(fault, start)

    async def pause(self, fault: Fault) -> None:
        start = time.monotonic()
        resume = await asyncio.to_thread(self.stack.pause, fault.target, fault.seconds)
        await asyncio.to_thread(resume.join)
        await self.ready(fault, time.monotonic() + RECOVERY_TIMEOUT)
        self.window(fault, start)

    async def restart_server(self, fault: Fault) -> None:
        start = time.monotonic()
        restart = self.stack.restart_postgres if fault.kind == POSTGRES_RESTART else self.stack.restart_nats
        await asyncio.to_thread(restart, fault.seconds)
        await self.ready(fault, time.monotonic() + RECOVERY_TIMEOUT)
        self.window(fault, start)

    async def ready(self, fault: Fault, deadline: float) -> None:
        """Until every gateway answers ready again, reaching every service (Stack.wait_ready), or `deadline`
        (noted)."""
        try:
            await asyncio.to_thread(self.stack.wait_ready, max(1.0, deadline - time.monotonic()))
        except RuntimeError as exc:
            self.history.notes.append(f"after {fault.kind} of {fault.target}: {exc}")

    async def provider_outage(self, fault: Fault) -> None:
        control = f"{self.simulators[fault.target]}{PREFIX}/faults"
        delay = 0.0 if fault.status else STALL_SECONDS
        start = time.monotonic()
        async with self.http.post(control, json={"path": fault.path, "status": fault.status, "times": None,
                                                 "delay_seconds": delay}) as r:
            r.raise_for_status()
        try:
            await asyncio.sleep(fault.seconds)
        finally:
            async with self.http.delete(control) as r:
                r.raise_for_status()
        self.window(fault, start, time.monotonic() + delay)  # the requests it stalled answer up to `delay` later

    async def partner_outage(self, fault: Fault) -> None:
        start = time.monotonic()
        await self.partner.down(True)
        try:
            await asyncio.sleep(fault.seconds)
        finally:
            await self.partner.down(False)
        self.window(fault, start)
