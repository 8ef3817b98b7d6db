"""The service registry: every process of the platform, declared once.

Settings (addresses and ports), the gateway's clients, the local launcher, migrations, readiness, the
Dockerfile and the Kubernetes manifests (`python -m deploy.generate`) all derive from this table. Adding a
service is a folder under `services/`, a proto and one `Service` entry here.

Each process declares the secret settings it reads (`secrets`: variables of core.settings.SECRET_FIELDS); it is
given those and no other (`SECRETS`).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the registry is read by tools that never load gRPC
    import grpc
    from google.protobuf.descriptor import ServiceDescriptor


def env_prefix(name: str) -> str:
    return name.upper().replace("-", "_")


def grpc_port_env(name: str) -> str:
    """The variable holding the gRPC port a process of this name listens on (a service's, or a worker's health)."""
    return f"{env_prefix(name)}_GRPC_PORT"


@dataclass(frozen=True)
class Worker:
    """A background process of a service (no RPCs of its own; it serves gRPC health on `port`).
    `module` has `build(runtime)`, which starts its components (see core.grpc_server.Runtime.run)."""

    name: str
    module: str
    port: int
    replicas: int = 2
    summary: str = ""
    secrets: tuple[str, ...] = ()  # the secret settings it reads (see SECRETS)
    rpc_to: tuple[str, ...] = ()  # the services it calls (see REACHES)
    # The RPCs it makes, by full method name (/package.Service/Method): the services it calls refuse it any other
    # (core.caller.may_make), so its key, alone, cannot do what its work never does.
    rpcs: tuple[str, ...] = ()
    internet: bool = False  # it calls hosts outside the cluster: providers, partners' webhooks (see REACHES)
    # Scaled on CPU between `replicas` and this many (a HorizontalPodAutoscaler; deploy.generate): set only for a
    # worker whose replicas share its work (leases, a shared consumer), so that more of them do more of it.
    max_replicas: int | None = None

    @property
    def port_env(self) -> str:
        return grpc_port_env(self.name)


@dataclass(frozen=True)
class Service:
    """One gRPC service: `services/<name>/` with `servicer.build(runtime)`, `store.py` and (when `schema`)
    `migrations/`; proto `switchboard/v1/<name>.proto` defining the gRPC service `grpc_name`, each of its rpcs with
    its deadline (core.deadlines)."""

    name: str
    port: int
    grpc_name: str
    summary: str
    schema: bool = True  # has a Postgres schema of its own, with migrations
    outbox: bool = True  # emits events through store.outbox (an outbox relay runs in the process)
    workers: tuple[Worker, ...] = ()
    replicas: int = 2
    secrets: tuple[str, ...] = ()  # the secret settings it reads (see SECRETS)
    rpc_to: tuple[str, ...] = ()  # the other services it calls (see REACHES)
    internet: bool = False  # it calls hosts outside the cluster: providers, partners' webhooks (see REACHES)

    @property
    def module(self) -> str:
        return f"services.{self.name}"

    @property
    def addr_env(self) -> str:
        return f"{env_prefix(self.name)}_ADDR"

    @property
    def port_env(self) -> str:
        return grpc_port_env(self.name)

    @property
    def full_name(self) -> str:
        return f"switchboard.v1.{self.grpc_name}"

    def descriptor(self) -> ServiceDescriptor:
        module = importlib.import_module(f"switchboard.v1.{self.name}_pb2")
        found: ServiceDescriptor = module.DESCRIPTOR.services_by_name[self.grpc_name]
        return found

    def stub(self, channel: grpc.aio.Channel) -> Any:
        """The generated stub (its modules have no type stubs: grpc_tools writes none for them)."""
        return getattr(importlib.import_module(f"switchboard.v1.{self.name}_pb2_grpc"), f"{self.grpc_name}Stub")(channel)


# Every service and worker connects to PostgreSQL (core.grpc_server), so each declares DATABASE_URL. `rpc_to` lists
# the services a process calls: core.grpc_server.Runtime gives it clients of those alone, and the network policies
# (deploy.generate) let it reach those alone.
_SDR_NEIGHBOURS = ("agents", "accounts", "messaging", "calls")  # services.sdr.ports.grpc_neighbours
# The RPCs of those adapters, the sdr workers' only calls (tests/unit/test_registry.py reads them off ports.py).
_SDR_NEIGHBOUR_RPCS = tuple(f"/switchboard.v1.{rpc}" for rpc in (
    "Agents/ListAgents", "Agents/LookupAgents", "Agents/GetCallingProfile", "Accounts/GetWorkspaceOwner",
    "Messaging/GetStandings", "Messaging/QueueEmail", "Messaging/SendSms", "Messaging/PlaceSms", "Calls/CreateCall",
    "Calls/PlaceCall", "Calls/GetCall",
    "Accounts/GetWorkspace"))  # core.standings: a business's standing before its touch is placed
# The services holding a business's customers' personal data: the accounts service's privacy jobs ask each to erase
# a person (ErasePerson) and to apply the business's retention (ApplyRetention), and no other process may.
PERSONAL_DATA_SERVICES = ("sdr", "calls", "messaging", "webhooks")
# A torn-down business's deletion asks these (ErasePerson with whole_business): the agents service deletes its
# assistants at the voice provider, then the services holding personal data delete everything of the business.
TEARDOWN_SERVICES = ("agents", *PERSONAL_DATA_SERVICES)
# The services holding a business's records besides accounts: its export asks each for pages of its kinds
# (ExportPage), and no other process may.
EXPORT_SERVICES = ("agents", "calls", "sdr", "messaging", "evals", "webhooks")
SERVICES: tuple[Service, ...] = (
    # Keys, sessions and sign-in links are stored as HMACs under subkeys of SWITCHBOARD_SECRET_KEY (and, during a
    # rotation, of the one before it): accounts holds them.
    Service("accounts", 50051, "Accounts", "users, workspaces, keys, sessions, signup, payments, usage",
            secrets=("DATABASE_URL", "SWITCHBOARD_SECRET_KEY", "SWITCHBOARD_SECRET_KEY_PREVIOUS", "PAYMENTS_API_KEY",
                     "SMTP_PASSWORD"),
            rpc_to=tuple(dict.fromkeys((*TEARDOWN_SERVICES, *EXPORT_SERVICES))), internet=True),
    # It buys the pool's numbers from the SMS provider (services.agents.stock): SMS_AUTH_TOKEN.
    Service("agents", 50052, "Agents", "agents, prompts, versions, phone numbers and the pool",
            secrets=("DATABASE_URL", "VOICE_API_KEY", "VOICE_WEBHOOK_SECRET", "WEBHOOK_SECRETS_KEY", "SMS_AUTH_TOKEN"),
            rpc_to=("evals", "accounts"),
            internet=True),
    # The runs scheduler claims due touches under leases (run several) and applies the outcomes of their calls.
    # The sdr service also gathers every service's health (services.sdr.health_service), its own too: through its
    # Service address, which may reach another replica.
    Service("sdr", 50053, "Sdr", "leads, scoring, the pipeline audit, communication runs and the analytics reports",
            secrets=("DATABASE_URL",),
            rpc_to=("accounts", "agents", "sdr", "calls", "messaging", "evals", "webhooks"),
            workers=(Worker("runs-scheduler", "services.sdr.runs_scheduler", 50065,
                            summary="communication runs: executes due touches (run several)",
                            secrets=("DATABASE_URL",), rpc_to=_SDR_NEIGHBOURS, rpcs=_SDR_NEIGHBOUR_RPCS,
                            max_replicas=6),
                     # Not autoscaled: it works once per two-hour window, so its CPU tells nothing of a backlog;
                     # the second replica is a standby (a run of a dead one is taken over when its lease ends).
                     Worker("sdr-runner", "services.sdr.pipeline_runner", 50066,
                            summary="the sales pipeline's two-hourly runner (run several: one run per window)",
                            secrets=("DATABASE_URL",), rpc_to=_SDR_NEIGHBOURS, rpcs=_SDR_NEIGHBOUR_RPCS))),
    Service("calls", 50055, "Calls", "outbound and inbound calls and their records",
            secrets=("DATABASE_URL", "VOICE_API_KEY", "VOICE_WEBHOOK_SECRET", "RECORDING_LINKS_SECRET"),
            rpc_to=("agents", "sdr", "accounts", "messaging"), internet=True),
    Service("messaging", 50056, "Messaging", "SMS, conversations, consent and do-not-call",
            secrets=("DATABASE_URL", "SMS_AUTH_TOKEN", "SMTP_PASSWORD", "PRIVACY_HASH_KEY"),
            rpc_to=("agents", "sdr", "accounts"),
            internet=True),
    Service("evals", 50057, "Evals", "eval scenarios mirrored to the voice provider", outbox=False,
            secrets=("DATABASE_URL", "VOICE_API_KEY"), rpc_to=("agents", "accounts"), internet=True),
    # The webhooks service sends a subscription's test event; the dispatcher delivers every event.
    Service("webhooks", 50054, "Webhooks", "webhook subscriptions, event history and deliveries", outbox=False,
            secrets=("DATABASE_URL", "WEBHOOK_SECRETS_KEY"), internet=True,
            workers=(Worker("webhooks-dispatcher", "services.webhooks.dispatcher", 50064,
                            summary="webhook delivery (run several)",
                            secrets=("DATABASE_URL", "WEBHOOK_SECRETS_KEY"), internet=True, max_replicas=8),)),
)

BY_NAME = {s.name: s for s in SERVICES}
WORKERS: tuple[Worker, ...] = tuple(w for s in SERVICES for w in s.workers)
WORKERS_BY_NAME = {w.name: w for w in WORKERS}
GATEWAY = "gateway"
# Every process of the platform by name: the gateway, the services and their workers.
PROCESSES: tuple[str, ...] = (GATEWAY, *(s.name for s in SERVICES), *(w.name for w in WORKERS))

# The gateway (the public HTTP API: deploy/k8s/base/gateway.yaml) verifies the providers' webhooks and the sales
# pipeline runner's bearer; it reaches no database. It calls every service, and the internet (the call recordings it
# streams from the voice provider).
GATEWAY_SECRETS = ("SMS_AUTH_TOKEN", "PAYMENTS_WEBHOOK_SECRET", "VOICE_WEBHOOK_SECRET", "SDR_RUNNER_SECRET")


@dataclass(frozen=True)
class Reach:
    """Where a process may connect: the services it calls (their gRPC ports), and whether hosts outside the cluster.
    Every process also reaches NATS, and every one but the gateway PostgreSQL."""

    services: tuple[str, ...]
    internet: bool
    database: bool = True


REACHES: dict[str, Reach] = {
    GATEWAY: Reach(tuple(s.name for s in SERVICES), internet=True, database=False),
    **{s.name: Reach(s.rpc_to, s.internet) for s in SERVICES},
    **{w.name: Reach(w.rpc_to, w.internet) for w in WORKERS},
}


def callers_of(service_name: str) -> tuple[str, ...]:
    """The processes that declare they call `service_name` (REACHES), in the registry's order: the issuers whose
    caller context that service accepts (core.caller), and the pods its network policy lets in (deploy.generate)."""
    return tuple(process for process, reach in REACHES.items() if service_name in reach.services)


# The RPCs that only some of a service's callers may make, by full method name: the others are refused
# `unauthorized` whatever caller they vouch for (core.caller.Verifier). The gateway alone records usage (its
# metering of calls and recordings) and alone runs the sales pipeline's window (for the CronJob's bearer); the calls
# service alone records what a caller said on one of its calls.
RPC_CALLERS: dict[str, tuple[str, ...]] = {
    "/switchboard.v1.Accounts/RecordUsage": (GATEWAY,),
    "/switchboard.v1.Sdr/RunScheduled": (GATEWAY,),
    "/switchboard.v1.Sdr/RecordCallerLead": ("calls",),  # names a call: the calls service's word alone
    **{f"/switchboard.v1.{BY_NAME[name].grpc_name}/ErasePerson": ("accounts",) for name in TEARDOWN_SERVICES},
    **{f"/switchboard.v1.{BY_NAME[name].grpc_name}/ApplyRetention": ("accounts",) for name in PERSONAL_DATA_SERVICES},
    **{f"/switchboard.v1.{BY_NAME[name].grpc_name}/ExportPage": ("accounts",) for name in EXPORT_SERVICES},
}


def may_call(process: str, service_name: str) -> bool:
    """Whether `process` declares that it calls the service `service_name` (through its address, so a call to its
    own service is declared too); a process the registry does not know may call none."""
    reach = REACHES.get(process)
    return reach is not None and service_name in reach.services


# Each process's secret settings: the only ones it is given, by the local launcher (deploy.local.stack) and the
# Kubernetes manifests (deploy.generate; gateway.yaml and migrate-job.yaml by hand, checked by the tests), and the
# only ones it can read (core.settings.load withholds the others). `migrate` is the migrations job (core.migrate).
# Every process of PROCESSES also holds its own key to sign the caller context it sends (core.caller), and the seed
# of its own NATS user (BUS below).
CALLER_SIGNING_KEY = "CALLER_SIGNING_KEY"
NATS_SEED = "NATS_SEED"  # its own NATS user's nkey seed (core.nats_auth)
# A service with an outbox also reads DIRECT_DATABASE_URL (its relay's LISTEN needs a session of its own, past a
# transaction pooler: core.settings), and so does the national registry's import (its advisory lock).
DIRECT_DATABASE_URL = "DIRECT_DATABASE_URL"
_OWN_SECRETS = ((GATEWAY, GATEWAY_SECRETS),
                *((s.name, (*s.secrets, *((DIRECT_DATABASE_URL,) if s.outbox else ()))) for s in SERVICES),
                *((w.name, w.secrets) for w in WORKERS))
# `sdr-runner-cron` is the Kubernetes CronJob that calls POST /api/sdr/runner (deploy.sdr_runner_cron).
SDR_RUNNER_CRON = "sdr-runner-cron"
# `national-dnc-import` is the operator's import of the national do-not-call registry into the messaging schema
# (python -m services.messaging.registry; its CronJob, deploy/k8s/base/national-dnc-import-cronjob.yaml).
NATIONAL_DNC_IMPORT = "national-dnc-import"
SECRETS: dict[str, tuple[str, ...]] = {"migrate": ("DATABASE_URL",), SDR_RUNNER_CRON: ("SDR_RUNNER_SECRET",),
                                       NATIONAL_DNC_IMPORT: ("DATABASE_URL", DIRECT_DATABASE_URL),
                                       **{name: (*own, CALLER_SIGNING_KEY, NATS_SEED) for name, own in _OWN_SECRETS}}
# The cluster's jobs, which run to completion rather than serve: the local launcher starts none.
JOBS = ("migrate", SDR_RUNNER_CRON, NATIONAL_DNC_IMPORT)


def database_role(process: str) -> str | None:
    """The PostgreSQL role whose DATABASE_URL `process` is given (core.db_roles): a service's own, which its workers
    share (they run its code over its tables); the national do-not-call import's own; None for the migrations job,
    which connects as the owner of the schemas."""
    if process == "migrate":
        return None
    if process == NATIONAL_DNC_IMPORT or process in BY_NAME:
        return process
    for s in SERVICES:
        if any(w.name == process for w in s.workers):
            return s.name
    raise LookupError(f"{process!r} is given no DATABASE_URL (core.registry.SECRETS)")


def service(name: str) -> Service:
    try:
        return BY_NAME[name]
    except KeyError:
        raise LookupError(f"no service {name!r} in core.registry.SERVICES") from None


def worker(name: str) -> Worker:
    return WORKERS_BY_NAME[name]


# -- NATS: what each process publishes and consumes ---------------------------------------------------------------
# Each process signs in to NATS as its own user (an nkey: NATS_SEED, a secret of every process) allowed exactly what
# it declares here and nothing else (core.nats_auth turns BUS into the server's authorization, for the local server
# and deploy/nats-auth-values.generated.yaml). Checked where the code acts: core.outbox refuses to record an event
# type its service does not declare, core.grpc_server.Runtime.consume a consumer its process does not declare.
EVENTS_STREAM = "EVENTS"  # events.<type>: every service's outbox (core.bus)
PROVIDER_STREAM = "PROVIDER"  # provider.<provider>.<kind>: the providers' verified webhook messages (core.bus)
DEADLETTER_STREAM = "DEADLETTERS"  # deadletter.<stream>.<consumer>: what a consumer gave up on (core.deadletters)
AUTH_INVALIDATE_SUBJECT = "switchboard.auth.invalidate"  # accounts tells the gateways which account's keys to forget
RATELIMIT_TAKEN_SUBJECT = "switchboard.ratelimit.taken"  # the gateways tell each other what their keys took
# Every process that spends money for a business forgets its cached standing when it changes (core.standings).
STANDING_CHANGED_SUBJECT = "events.workspace.standing_changed"


@dataclass(frozen=True)
class Consumer:
    """A durable JetStream consumer a process runs (core.bus.DurableConsumer): its name, filter subject and stream."""

    durable: str
    subject: str
    stream: str = EVENTS_STREAM


@dataclass(frozen=True)
class BusUse:
    """What one process does on NATS. A process creates the streams it publishes to when they are missing (the
    services with an outbox EVENTS, the gateway PROVIDER, every process with a consumer or an outbox DEADLETTERS:
    its relay sets aside there an event NATS never takes, core.outbox); the others only wait for them."""

    events: tuple[str, ...] = ()  # the event types its outbox relay publishes (events.<type>)
    provider: tuple[str, ...] = ()  # the PROVIDER subjects it stores the providers' verified messages on
    consumers: tuple[Consumer, ...] = ()
    publishes: tuple[str, ...] = ()  # plain NATS subjects it publishes (no JetStream)
    subscribes: tuple[str, ...] = ()  # plain NATS subjects it listens to

    @property
    def creates(self) -> tuple[str, ...]:
        """The streams this process creates when missing: those it publishes to."""
        return (*((EVENTS_STREAM,) if self.events else ()), *((PROVIDER_STREAM,) if self.provider else ()),
                *((DEADLETTER_STREAM,) if self.consumers or self.events else ()))


BUS: dict[str, BusUse] = {
    GATEWAY: BusUse(provider=("provider.voice.messages", "provider.sms.status", "provider.payments.events"),
                    publishes=(RATELIMIT_TAKEN_SUBJECT,),
                    subscribes=(RATELIMIT_TAKEN_SUBJECT, AUTH_INVALIDATE_SUBJECT)),
    "accounts": BusUse(
        events=("workspace.paused", "workspace.canceled", "workspace.teardown_completed",
                       "workspace.standing_changed", "workspace.owner_notice", "erasure.completed"),
        consumers=(Consumer("accounts-payment-events", "provider.payments.events", PROVIDER_STREAM),
                   Consumer("accounts-call-usage", "events.call.*"),
                   Consumer("accounts-standing-invalidation", "events.workspace.standing_changed")),
        publishes=(AUTH_INVALIDATE_SUBJECT,)),
    "agents": BusUse(events=("agent.prompt_changed", "phone_number.assigned", "phone_number.released"),
                     consumers=(Consumer("agents-workspace-teardown", "events.workspace.teardown_completed"),),
                     subscribes=(STANDING_CHANGED_SUBJECT,)),
    "sdr": BusUse(
        events=("lead.created", "lead.scored", "dispatcher.briefing_created", "communication.touch_completed",
                       "communication.touch_failed", "communication.touch_deferred", "communication.run_ended",
                       "booking.created", "booking.rescheduled", "booking.canceled"),
        consumers=(Consumer("sdr-voicemails", "events.voicemail.received"),
                   Consumer("sdr-calls", "events.call.completed"),
                   Consumer("sdr-sms", "events.sms.received"),
                   Consumer("sdr-held-businesses", "events.workspace.standing_changed")),
        subscribes=(STANDING_CHANGED_SUBJECT,)),
    # The sdr service relays its workers' events too (they write its outbox): the workers publish nothing.
    "runs-scheduler": BusUse(consumers=(Consumer("sdr-run-calls", "events.call.*"),),
                             subscribes=(STANDING_CHANGED_SUBJECT,)),
    "sdr-runner": BusUse(subscribes=(STANDING_CHANGED_SUBJECT,)),
    "calls": BusUse(events=("call.received", "call.started", "call.completed", "call.failed",
                                   "voicemail.received"),
                    consumers=(Consumer("calls-provider-messages", "provider.voice.messages", PROVIDER_STREAM),),
                    subscribes=(STANDING_CHANGED_SUBJECT,)),
    "messaging": BusUse(
        events=("sms.received", "sms.sent", "sms.delivered", "sms.failed"),
        consumers=(Consumer("messaging-calls", "events.call.received"),
                   Consumer("messaging-sms-status", "provider.sms.status", PROVIDER_STREAM),
                   Consumer("messaging-owner-emails", "events.agent.prompt_changed"),
                   Consumer("messaging-owner-notices", "events.workspace.owner_notice"),
                   Consumer("messaging-call-minutes", "events.call.completed")),
        subscribes=("events.phone_number.*",  # the senders' cache (services.messaging.senders)
                    STANDING_CHANGED_SUBJECT)),
    "evals": BusUse(subscribes=(STANDING_CHANGED_SUBJECT,)),
    "webhooks": BusUse(),  # its test event goes straight to the partner, never on the bus
    "webhooks-dispatcher": BusUse(consumers=(Consumer("webhooks-dispatcher", "events.>"),)),
}


def relay_consumer(process: str) -> str:
    """The name an outbox relay's dead letters are stored under, as a consumer's are (`deadletter.EVENTS.<it>`:
    core.outbox, core.nats_auth): an event of `process`'s outbox that NATS never takes."""
    return f"outbox-{process}"


def may_publish_event(process: str, event_type: str) -> bool:
    use = BUS.get(process)
    return use is not None and event_type in use.events


def declares_consumer(process: str, consumer: Consumer) -> bool:
    use = BUS.get(process)
    return use is not None and consumer in use.consumers
