"""What the soak's load sent and saw, and when its faults ran: the ledger's input beside the platform's stores and
the simulators' records. Appended to by the load's actors and the fault executor; read once, after the quiet
period. Times are `time.monotonic()` seconds unless named `*_wall` (a UTC datetime, to compare with stored rows)."""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Attempt:
    """One HTTP attempt of the load: `status` 0 when no answer came (connection refused or reset, time-out)."""

    at: float
    method: str
    route: str  # the path without its query
    gateway: str  # the base URL it was sent to
    status: int
    account_id: str | None  # whose key sent it (None: no key, e.g. a signup)
    answered: float = 0.0  # when its answer (or the failure) came; `at` when it was never sent


@dataclass(frozen=True)
class Retried:
    """A request the load sent again after a 5xx or no answer: what the first attempt got and the last."""

    method: str
    route: str
    first_status: int
    final_status: int
    attempts: int
    settled: bool  # the last answer is final (not a transient error): a success, or the platform's refusal


@dataclass(frozen=True)
class FaultWindow:
    """A fault the executor injected: `kind` (faults.KINDS), its target (a process name, a simulator, the
    partner), from `start` to `end` (monotonic; the end is when it was cleared, or the process was back)."""

    kind: str
    target: str
    start: float
    end: float


@dataclass(frozen=True)
class InboundRing:
    """A call the voice simulator rang to a tenant's number: `refused` is the words the call ended with before any
    assistant took it (the provider's endedMessage, as the ring answered), None when an assistant took it."""

    business_id: str
    provider_call_id: str
    outcome: str
    at: float
    refused: str | None


@dataclass
class Tenant:
    """A business the load set up: its key (with every scope), account, agent and that agent's number."""

    business_id: str
    account_id: str
    key: str
    agent_id: str | None = None
    number: str | None = None


@dataclass
class History:
    started: float = field(default_factory=time.monotonic)
    started_wall: datetime = field(default_factory=datetime.now)
    attempts: list[Attempt] = field(default_factory=list)
    retried: list[Retried] = field(default_factory=list)
    windows: list[FaultWindow] = field(default_factory=list)
    tenants: dict[str, Tenant] = field(default_factory=dict)  # by business_id
    signups: Counter[str] = field(default_factory=Counter)  # by payment: "checkout", "x402"
    calls: dict[str, str] = field(default_factory=dict)  # our call id → business_id: every call POST /calls accepted
    inbound: list[InboundRing] = field(default_factory=list)  # every call rung at the simulator
    texts: dict[str, str] = field(default_factory=dict)  # message_sid → business_id: every text sms/send accepted
    # (from, to, acknowledged_wall): a STOP the SMS simulator delivered to our webhook and we answered 2xx
    stops: list[tuple[str, str, datetime]] = field(default_factory=list)
    runs: dict[str, str] = field(default_factory=dict)  # communication run id → business_id
    evals: dict[str, str] = field(default_factory=dict)  # eval run id → business_id
    webhooks: dict[str, str] = field(default_factory=dict)  # subscription id → business_id
    torn_down: set[str] = field(default_factory=set)  # business ids the load tore down
    # business_id → (start, end) while the load held its workspace (paused, or canceled for a teardown: no end)
    held: dict[str, list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    notes: list[str] = field(default_factory=list)  # what an actor could not do, and why (printed in the report)

    def record(self, attempt: Attempt) -> None:
        self.attempts.append(attempt)

    def answered(self, account_id: str | None = None) -> int:
        """The attempts a gateway answered (any status), of one account's keys or of all."""
        return sum(1 for a in self.attempts if a.status and (account_id is None or a.account_id == account_id))

    def was_held(self, business_id: str, at: float, slack: float) -> bool:
        """Whether the business's workspace was held at `at`, give or take `slack` seconds (its standing is cached
        for a moment after a change)."""
        return any(start - slack <= at <= end + slack for start, end in self.held.get(business_id, ()))

    def in_window(self, at: float, slack: float, until: float | None = None) -> bool:
        """Whether `at` (or the span from `at` to `until`: a request in flight) meets a fault's window, or the
        `slack` seconds after it ended (recovery)."""
        return any(w.start <= (at if until is None else max(at, until)) and at <= w.end + slack
                   for w in self.windows)
