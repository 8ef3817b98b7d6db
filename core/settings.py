"""Process settings from environment variables, with safe local defaults.

Each setting is declared once, in `Settings`: its type (with its allowed values or range), its default and its
variable. A bad value stops the process at start with one line per variable naming what to fix (`load`).
Secrets are wrapped in `Secret` so that printing or logging a Settings object never shows them.

A process reads only the secrets core.registry declares for it (`load(process)`): outside the local stack each must
be given, and reading any other is an error. Secrets for one purpose (`DERIVED_SECRETS`) are derived from the server
secret by whoever provisions the processes, never by the processes themselves.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, get_args
from urllib.parse import urlsplit

from cryptography.fernet import Fernet
from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    GetCoreSchemaHandler,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import core_schema
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from core import plans, registry, x402_defaults
from core.compliance.decision import Policy


class Secret(str):
    """A string whose repr/str in logs is masked; use `.reveal()` for the value."""

    def reveal(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """As a setting's type: any string, kept as a Secret."""
        return core_schema.no_info_after_validator_function(cls, core_schema.str_schema())


class Withheld(Secret):
    """A secret setting this process is not given (core.registry.SECRETS): reading it raises, naming the variable,
    rather than passing on an empty or development value."""

    why: str

    @classmethod
    def of(cls, variable: str, process: str) -> Withheld:
        withheld = cls()
        withheld.why = f"{process} is not given {variable}: declare it in core.registry if {process} reads it"
        return withheld

    def reveal(self) -> str:
        raise RuntimeError(self.why)


SIGNUP_LIMIT_PER_HOUR = 5  # default; the rate limit per client address
DEV_SECRET = "dev-only-insecure-secret-change-me"


def derive_secret(secret: str, purpose: str) -> str:
    """A secret for one purpose, derived from the server secret (HMAC-SHA256)."""
    return hmac.new(secret.encode(), purpose.encode(), hashlib.sha256).hexdigest()


def derive_sealing_key(secret: str) -> str:
    """The key that seals webhook signing secrets at rest (a Fernet key), derived from the server secret as the
    webhooks service always derived it, so that secrets sealed before stay readable."""
    return base64.urlsafe_b64encode(hashlib.sha256(b"switchboard/webhook-secrets/v1:" + secret.encode()).digest()).decode()


# The secrets for one purpose, each its own variable given only to the processes that read it (core.registry),
# and how whoever provisions the processes derives them from the server secret, SWITCHBOARD_SECRET_KEY (the local
# launcher; `python -m deploy.secrets` for a deployment): {variable: derivation}.
DERIVED_SECRETS: dict[str, Callable[[str], str]] = {
    "VOICE_WEBHOOK_SECRET": partial(derive_secret, purpose="voice-webhook"),
    "SDR_RUNNER_SECRET": partial(derive_secret, purpose="sdr-runner"),
    "RECORDING_LINKS_SECRET": partial(derive_secret, purpose="recording-links"),
    "WEBHOOK_SECRETS_KEY": derive_sealing_key,
    "PRIVACY_HASH_KEY": partial(derive_secret, purpose="privacy-hash"),
}


def derived_secrets(secret: str) -> dict[str, str]:
    """Each purpose's secret derived from the server secret `secret`: {variable: value}."""
    return {variable: derive(secret) for variable, derive in DERIVED_SECRETS.items()}


DEV_DERIVED = derived_secrets(DEV_SECRET)  # their defaults, for the local stack only (refused outside it: `load`)


def _fernet_key(value: Secret) -> Secret:
    try:
        Fernet(value.reveal())
    except ValueError:
        raise ValueError("must be a Fernet key, 32 bytes in url-safe base64 (python -m deploy.secrets derives it "
                         "from SWITCHBOARD_SECRET_KEY)") from None
    return value


def _items(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """A comma-separated variable as its items (blanks dropped); a default is already a tuple."""
    return tuple(p.strip() for p in value.split(",") if p.strip()) if isinstance(value, str) else value


def _area_codes(value: tuple[str, ...]) -> tuple[str, ...]:
    """NANP area codes (three digits, the first 2-9), or `*` alone for every one."""
    if value == ("*",):
        return value
    wrong = [v for v in value if not (len(v) == 3 and v.isdigit() and v[0] not in "01")]
    if wrong:
        raise ValueError(f"{', '.join(wrong)}: give three-digit area codes (e.g. 415,212), comma-separated, or * for "
                         "every area code")
    return value


def _networks(value: str | tuple[str, ...]) -> Networks:
    """Addresses or CIDR ranges (an address is its own /32 or /128)."""
    try:
        return tuple(ip_network(p, strict=False) for p in _items(value))
    except ValueError as exc:
        raise ValueError(f"{exc} (give addresses or CIDR ranges, comma-separated)") from None


def _pem_file(path: Path | None) -> Path | None:
    """A readable file holding PEM, checked at start: a missing mount stops the process, not its first call."""
    if path is not None:
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"cannot read {path} ({exc.strerror})") from None
        if b"-----BEGIN " not in text:
            raise ValueError(f"{path} holds no PEM block")
    return path


Networks = tuple[IPv4Network | IPv6Network, ...]
Port = Annotated[int, Field(ge=1, le=65535)]
Url = Annotated[str, AfterValidator(lambda url: url.rstrip("/"))]
Items = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_items)]
PemFile = Annotated[Path | None, BeforeValidator(lambda v: v or None), AfterValidator(_pem_file)]
LogLevel = Literal["CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "NOTSET"]  # logging's names

def _grpc_ports() -> dict[str, Any]:
    """Each process's port: its variable's text when set (validated as the field's ports), else the registry's."""
    processes: tuple[registry.Service | registry.Worker, ...] = (*registry.SERVICES, *registry.WORKERS)
    return {p.name: os.environ.get(p.port_env) or p.port for p in processes}


class Settings(BaseSettings):
    """Read from the environment when constructed (`load()`); immutable (`model_copy(update=...)` for a variant)."""

    model_config = SettingsConfigDict(frozen=True, case_sensitive=True, validate_default=True, allow_inf_nan=False)

    database_url: Secret = Field(Secret("postgresql://postgres@127.0.0.1:5432/switchboard"), alias="DATABASE_URL")
    # The same role's URL straight to PostgreSQL, when DATABASE_URL goes through a transaction pooler (PgBouncer):
    # for what needs a session of its own, the outbox relay's LISTEN and the national registry import's advisory
    # lock (README, "Operations: database connections"). Empty: DATABASE_URL is direct already.
    direct_database_url: Secret = Field(Secret(""), alias="DIRECT_DATABASE_URL")
    # Each process's connections to DATABASE_URL: SQLAlchemy's pool (its size, and the overflow it may open beyond
    # it under load) and the raw asyncpg pool of the hot reads. Unset: its kind's default (DATABASE_POOLS); the
    # connection budget (README, "Operations: database connections") is pods x these.
    database_pool_size: PositiveInt | None = Field(None, alias="DATABASE_POOL_SIZE")
    database_max_overflow: NonNegativeInt | None = Field(None, alias="DATABASE_MAX_OVERFLOW")
    database_raw_pool_size: PositiveInt | None = Field(None, alias="DATABASE_RAW_POOL_SIZE")
    # The drivers' prepared-statement caches (asyncpg's statement_cache_size, SQLAlchemy's
    # prepared_statement_cache_size): on, each statement after its first is one round trip. Turn off only behind a
    # transaction pooler that cannot keep prepared statements (PgBouncer before 1.21, or max_prepared_statements
    # = 0): every statement then costs a second Parse.
    database_statement_cache: bool = Field(True, alias="DATABASE_STATEMENT_CACHE")
    nats_url: str = Field("nats://127.0.0.1:4222", alias="NATS_URL")
    # Copies of each JetStream stream the cluster keeps (3 on a 3-node cluster, deploy/nats-values.yaml); used when
    # a process creates the streams, that is on a new cluster.
    nats_stream_replicas: int = Field(1, alias="NATS_STREAM_REPLICAS", ge=1, le=5)
    # The streams' limits, set on create and on every start (an existing stream gets them: core.bus.ensure_stream).
    # Together well under JetStream's volume (10 Gi in deploy/nats-values.yaml), which must also hold the file
    # store's overhead. EVENTS is history its consumers read within seconds: when full, the oldest go (`old`), so
    # publishing never stops; PROVIDER holds messages not yet applied: when full, a new one is refused (`new`)
    # and the provider, answered 503, sends it again later. DEADLETTERS keeps what the consumers gave up on long
    # enough for an operator to look, replay or drop it; when full a new dead letter is refused (always `new`: one
    # is never dropped unseen) and its message stays on its own stream, retried (core.bus.DurableConsumer).
    nats_events_max_age_days: PositiveFloat = Field(7.0, alias="NATS_EVENTS_MAX_AGE_DAYS")
    nats_events_max_bytes: PositiveInt = Field(4 * 1024 ** 3, alias="NATS_EVENTS_MAX_BYTES")
    nats_events_discard: Literal["old", "new"] = Field("old", alias="NATS_EVENTS_DISCARD")
    nats_provider_max_age_days: PositiveFloat = Field(7.0, alias="NATS_PROVIDER_MAX_AGE_DAYS")
    nats_provider_max_bytes: PositiveInt = Field(2 * 1024 ** 3, alias="NATS_PROVIDER_MAX_BYTES")
    nats_provider_discard: Literal["old", "new"] = Field("new", alias="NATS_PROVIDER_DISCARD")
    nats_deadletters_max_age_days: PositiveFloat = Field(30.0, alias="NATS_DEADLETTERS_MAX_AGE_DAYS")
    nats_deadletters_max_bytes: PositiveInt = Field(512 * 1024 ** 2, alias="NATS_DEADLETTERS_MAX_BYTES")
    # Retention of the platform's own records (core.retention), swept by each service a batch at a time: published
    # outbox rows; consumers' inbox ids (at least as long as either stream keeps a message, which could be
    # delivered again until then); finished webhook deliveries with their attempts; the usage log's API request
    # entries (a call's entry stays: the balance's minutes_used sums them).
    retention_outbox_days: PositiveFloat = Field(3.0, alias="RETENTION_OUTBOX_DAYS")
    retention_inbox_days: PositiveFloat = Field(14.0, alias="RETENTION_INBOX_DAYS")
    retention_webhook_deliveries_days: PositiveFloat = Field(30.0, alias="RETENTION_WEBHOOK_DELIVERIES_DAYS")
    retention_usage_days: PositiveFloat = Field(400.0, alias="RETENTION_USAGE_DAYS")
    retention_interval_seconds: PositiveFloat = Field(300.0, alias="RETENTION_INTERVAL_SECONDS")
    retention_batch: PositiveInt = Field(1000, alias="RETENTION_BATCH")
    home: Annotated[Path, AfterValidator(Path.resolve)] = Field(Path(".switchboard"), alias="SWITCHBOARD_HOME")
    http_host: str = Field("127.0.0.1", alias="HOST")
    http_port: Port = Field(8080, alias="PORT")
    # Where users reach the gateway (links in emails, OAuth, provider callbacks); the local port by default.
    public_base_url: Url = Field(default_factory=lambda s: f"http://127.0.0.1:{s['http_port']}",
                                 alias="PUBLIC_BASE_URL")
    # Per process of core.registry: where its gRPC server is reached (<NAME>_ADDR, e.g. SDR_ADDR), and the port it
    # listens on (<NAME>_GRPC_PORT, e.g. WEBHOOKS_DISPATCHER_GRPC_PORT); the registry's port by default. The registry
    # names these variables, so they are read here rather than one field each.
    addresses: dict[str, str] = Field(default_factory=lambda: {
        s.name: os.environ.get(s.addr_env, f"127.0.0.1:{s.port}") for s in registry.SERVICES})
    grpc_ports: dict[str, Port] = Field(default_factory=_grpc_ports)
    # The server secret: keys, sessions and sign-in links are stored as HMACs under it (the accounts service), and
    # the secrets of DERIVED_SECRETS are derived from it where the processes are provisioned.
    secret_key: Secret = Field(Secret(DEV_SECRET), alias="SWITCHBOARD_SECRET_KEY")
    # Its version (services.accounts.secret_keys: each stored hash and token names the version it was made under),
    # and during a rotation the secret of the version before it, still accepted (README, "Rotating the server
    # secret"); empty: none.
    secret_key_version: int = Field(1, ge=1, alias="SWITCHBOARD_SECRET_KEY_VERSION")
    secret_key_previous: Secret = Field(Secret(""), alias="SWITCHBOARD_SECRET_KEY_PREVIOUS")
    # The signed caller context between processes (core.caller): this process's signing key '<process>:<version>=
    # <base64url seed>' and the public keys it accepts '<process>:<version>=<base64url key>,...' (two versions of a
    # process's key during a rotation; of a longer list, only its callers' are kept: core.registry.callers_of).
    # Unset: derived from the server secret, one pair per process (the local stack).
    caller_signing_key: Secret = Field(Secret(""), alias="CALLER_SIGNING_KEY")
    caller_verify_keys: str = Field("", alias="CALLER_VERIFY_KEYS")
    # This process's NATS user: its nkey seed (`SU...`: core.nats_auth). Unset on the local stack: derived from the
    # server secret. NATS_TLS_CA: the CA file that signed the NATS server's certificate when NATS_URL is tls://
    # (unset: the system's trusted CAs).
    nats_seed: Secret = Field(Secret(""), alias="NATS_SEED")
    nats_tls_ca: str = Field("", alias="NATS_TLS_CA")
    # A durable consumer's deliveries of a message before it gives up on it and stores it as a dead letter
    # (core.deadletters), and the delay before its first retry, doubled each time up to a minute: 20 deliveries
    # from 0.5 s span about 14 minutes.
    consumer_max_deliver: PositiveInt = Field(20, alias="CONSUMER_MAX_DELIVER")
    consumer_retry_seconds: PositiveFloat = Field(0.5, alias="CONSUMER_RETRY_SECONDS")
    # The outbox relay's passes on which the event at the head of its outbox was refused while NATS took those after
    # it, before the relay stores it as a dead letter and goes on (core.outbox.poisoned): 5 take about 13 s with
    # the relay's backoff, which an outage, refusing all, never counts toward.
    outbox_poison_after: PositiveInt = Field(5, alias="OUTBOX_POISON_AFTER")
    log_level: Annotated[LogLevel, BeforeValidator(str.upper)] = Field("INFO", alias="LOG_LEVEL")
    # Peers whose X-Forwarded-For header is trusted (the load balancer or ingress controller): addresses or ranges.
    trusted_proxies: Annotated[Networks, NoDecode, BeforeValidator(_networks)] = Field((), alias="TRUSTED_PROXIES")
    # Browser origins besides public_base_url's that may call the assistant connector (/api/mcp).
    mcp_allowed_origins: Items = Field((), alias="MCP_ALLOWED_ORIGINS")
    signup_limit_per_hour: NonNegativeInt = Field(SIGNUP_LIMIT_PER_HOUR, alias="SIGNUP_LIMIT_PER_HOUR")
    key_rate_limit_per_minute: PositiveInt = Field(600, alias="KEY_RATE_LIMIT_PER_MINUTE")
    # How often each gateway replica tells the others what its keys used (gateway.sharedlimit): the per-key limit
    # holds across replicas to within what a key is let through at the others in this long.
    key_rate_limit_share_seconds: PositiveFloat = Field(0.5, alias="KEY_RATE_LIMIT_SHARE_SECONDS")
    # Per client address and gateway replica: requests to the public routes and pages (gateway.publiclimits), and
    # of those, OAuth client registrations and authorization requests (each stores or fetches a client).
    public_rate_limit_per_minute: PositiveInt = Field(120, alias="PUBLIC_RATE_LIMIT_PER_MINUTE")
    oauth_limit_per_hour: PositiveInt = Field(60, alias="OAUTH_LIMIT_PER_HOUR")
    # Mutual TLS between processes, on when these three are set (all or none; `grpc_tls`): this process's
    # certificate chain and private key, which it serves and presents as a client, and the CA bundle that signs its
    # peers' certificates (PEM files; Kubernetes mounts them from a cert-manager Secret, deploy/k8s/README.md).
    grpc_tls_cert: PemFile = Field(None, alias="GRPC_TLS_CERT")
    grpc_tls_key: PemFile = Field(None, alias="GRPC_TLS_KEY")
    grpc_tls_ca: PemFile = Field(None, alias="GRPC_TLS_CA")
    # Also serve the health check, alone and in plaintext, on this port (0: not): the kubelet's gRPC probes do not
    # speak TLS.
    grpc_health_port: Annotated[int, Field(ge=0, le=65535)] = Field(0, alias="GRPC_HEALTH_PORT")
    # local: the embedded stack (`make run`, the tests); production: every deployment, staging included.
    environment: Literal["local", "production"] = Field("production", alias="SWITCHBOARD_ENV")
    # Serve the process's metrics for a Prometheus scrape on this port (/metrics; 0: not), by default 9464 in
    # production and off on the local stack (whose launcher gives each process a port of its own when asked:
    # core.metrics, deploy.local.stack).
    metrics_port: Annotated[int, Field(ge=0, le=65535)] = Field(
        default_factory=lambda s: 9464 if s["environment"] == "production" else 0, alias="METRICS_PORT")
    # Where a process's gRPC server listens: loopback on the local stack, every address of the pod elsewhere.
    grpc_host: str = Field(default_factory=lambda s: "127.0.0.1" if s["environment"] == "local" else "[::]",
                           alias="GRPC_HOST")
    # Balancing gRPC over a service's replicas (core.rpc.channel_options, core.grpc_server.server_options). A client
    # resolves a service's name to every replica (a headless Service on Kubernetes) and sends its calls round robin;
    # it learns of new replicas only when it resolves the name again, which it does when a connection closes. So a
    # server closes each connection after GRPC_MAX_CONNECTION_AGE_SECONDS (GOAWAY: the client reconnects and
    # resolves again, and a new pod gets its share within that long), letting calls in flight finish for
    # GRPC_MAX_CONNECTION_AGE_GRACE_SECONDS: the longest deadline any rpc declares (60 s) fits in it. A client
    # resolves a name at most once per GRPC_DNS_MIN_RESOLUTION_SECONDS (gRPC's own default, 30 s).
    grpc_max_connection_age_seconds: PositiveFloat = Field(300.0, alias="GRPC_MAX_CONNECTION_AGE_SECONDS")
    grpc_max_connection_age_grace_seconds: PositiveFloat = Field(60.0, alias="GRPC_MAX_CONNECTION_AGE_GRACE_SECONDS")
    grpc_dns_min_resolution_seconds: PositiveFloat = Field(30.0, alias="GRPC_DNS_MIN_RESOLUTION_SECONDS")
    # Keepalive: both ends ping a connection every GRPC_KEEPALIVE_SECONDS, busy or idle, and drop it when a ping is
    # unanswered for GRPC_KEEPALIVE_TIMEOUT_SECONDS (a pod gone without closing its connections is noticed in
    # seconds, not at the kernel's TCP timeout). A server accepts a client's pings as often as every
    # GRPC_MIN_PING_INTERVAL_SECONDS: no more than the keepalive (checked here), so that it never answers a client
    # of the same settings with GOAWAY too_many_pings; with half of it, a rollout that lowers the keepalive to no
    # less than that is safe while old servers still run.
    grpc_keepalive_seconds: PositiveFloat = Field(30.0, alias="GRPC_KEEPALIVE_SECONDS")
    grpc_keepalive_timeout_seconds: PositiveFloat = Field(10.0, alias="GRPC_KEEPALIVE_TIMEOUT_SECONDS")
    grpc_min_ping_interval_seconds: PositiveFloat = Field(15.0, alias="GRPC_MIN_PING_INTERVAL_SECONDS")
    # Shutting down (core.grpc_server.serve, gateway.serving): on SIGTERM a process reports unready at once and
    # goes on serving, new requests too, for SHUTDOWN_DELAY_SECONDS, while whatever routes to it (a load balancer
    # polling readiness, the local stack's callers) stops sending; then it refuses new requests and lets those in
    # flight finish within their deadlines. On Kubernetes the pod's preStop hook sleeps this default before the
    # SIGTERM instead (deploy/generate.py), while endpoints drop the terminating pod, and the ConfigMap sets 0.
    shutdown_delay_seconds: NonNegativeFloat = Field(5.0, alias="SHUTDOWN_DELAY_SECONDS")
    # Count what each request tagged with X-Cost-Tag costs (core.costs); the test stack turns it on.
    count_costs: bool = Field(False, alias="SWITCHBOARD_COUNT_COSTS")
    # The voice-AI provider (its public REST API; the local stack points it at the simulator).
    voice_api_url: Url = Field("https://api.vapi.ai", alias="VOICE_API_URL")
    voice_api_key: Secret = Field(Secret(""), alias="VOICE_API_KEY")
    # Per attempt; with its retries a call stays inside the 30 s deadline of the rpcs that wait on it (options.proto).
    voice_timeout_seconds: PositiveFloat = Field(5.0, alias="VOICE_TIMEOUT_SECONDS")
    # Our SIP trunk credential at the voice provider: pool numbers are imported through it.
    voice_sip_credential_id: str = Field("", alias="VOICE_SIP_CREDENTIAL_ID")
    # Signs the provider's server messages (call statuses, end-of-call reports): the HMAC secret of the webhook
    # credential we register at the provider.
    voice_webhook_secret: Secret = Field(Secret(DEV_DERIVED["VOICE_WEBHOOK_SECRET"]), alias="VOICE_WEBHOOK_SECRET")
    # How the provider authenticates them: hmac (signature and timestamp headers) or bearer (the secret as a token).
    voice_webhook_auth: Annotated[Literal["hmac", "bearer"], BeforeValidator(lambda v: v.strip().lower())] = Field(
        "hmac", alias="VOICE_WEBHOOK_AUTH")
    # The id of that webhook credential at the provider. Empty: found by name, else created (and its id logged).
    voice_webhook_credential_id: str = Field("", alias="VOICE_WEBHOOK_CREDENTIAL_ID")
    # Where the provider keeps call recordings: the only origins (scheme://host[:port]) the recording proxy fetches
    # from (comma-separated). Empty: the default of `recording_origins`.
    voice_recording_origins: Items = Field((), alias="VOICE_RECORDING_ORIGINS")
    # The messaging (SMS) provider: Twilio's REST API (the local stack points it at the simulator).
    sms_api_url: Url = Field("https://api.twilio.com", alias="SMS_API_URL")
    sms_account_sid: str = Field("", alias="SMS_ACCOUNT_SID")
    # The account's auth token: the messaging service's REST credential, and the key the provider signs its
    # webhooks with (the gateway checks X-Twilio-Signature with it).
    sms_auth_token: Secret = Field(Secret(""), alias="SMS_AUTH_TOKEN")
    sms_timeout_seconds: PositiveFloat = Field(5.0, alias="SMS_TIMEOUT_SECONDS")
    # Texts of unknown outcome (the provider did not answer the send): how often the provider is asked about them,
    # and after how long one it has no record of counts as never sent.
    sms_reconcile_seconds: PositiveFloat = Field(30.0, alias="SMS_RECONCILE_SECONDS")
    sms_unknown_give_up_minutes: NonNegativeFloat = Field(10.0, alias="SMS_UNKNOWN_GIVE_UP_MINUTES")
    # Texts the provider took that have not reached an outcome (their status callbacks may have been lost: the
    # provider does not resend one we answered with an error): how long after their last change the provider is
    # asked, the wait doubling after each answer that changes nothing (services.messaging.reconciliation).
    sms_status_check_after_seconds: PositiveFloat = Field(600.0, alias="SMS_STATUS_CHECK_AFTER_SECONDS")
    # Who answers STOP, START and HELP: `twilio` (the provider's default opt-out handling, or Advanced Opt-Out on a
    # Messaging Service: it replies itself, so our TwiML answers keywords with nothing) or `ours` (the account's
    # built-in opt-out handling turned off by Twilio Support: our TwiML replies are the only ones). Either way a
    # keyword is recorded as consent evidence.
    sms_provider_opt_out: Annotated[Literal["twilio", "ours"], BeforeValidator(lambda v: v.strip().lower())] = Field(
        "twilio", alias="SMS_PROVIDER_OPT_OUT")
    # Outgoing email (the owner's notifications, queued emails): an SMTP server; the local stack runs a catch-all.
    smtp_host: str = Field("localhost", alias="SMTP_HOST")
    smtp_port: Port = Field(25, alias="SMTP_PORT")
    smtp_username: str = Field("", alias="SMTP_USERNAME")
    smtp_password: Secret = Field(Secret(""), alias="SMTP_PASSWORD")
    smtp_starttls: bool = Field(False, alias="SMTP_STARTTLS")
    email_from: str = Field("Switchboard <notifications@switchboard.local>", alias="EMAIL_FROM")
    email_delivery_interval_seconds: PositiveFloat = Field(5.0, alias="EMAIL_DELIVERY_INTERVAL_SECONDS")
    # Multiplies the retry backoff (tests shrink it).
    email_retry_scale: NonNegativeFloat = Field(1.0, alias="EMAIL_RETRY_SCALE")
    # Emails a business may queue through the API in any 24 hours (the owner's own notifications do not count).
    email_daily_quota: NonNegativeInt = Field(200, alias="EMAIL_DAILY_QUOTA")
    # Pool numbers a business may hold while its subscription is in its trial.
    trial_pool_numbers: NonNegativeInt = Field(3, alias="TRIAL_POOL_NUMBERS")
    # The platform-wide do-not-call list (E.164 numbers no business may text, comma-separated), beside each
    # business's own.
    platform_dnc: Items = Field((), alias="PLATFORM_DNC")
    # The national do-not-call registry: the area codes the operator subscribes to at the FTC (comma-separated, or
    # * for the whole registry). Only their files are imported (python -m services.messaging.registry), and only
    # they are consulted: a number of another area code is decided as not_subscribed, one subscribed with no file
    # imported yet as not_loaded (neither is refused for it), and one whose data is older than 31 days is refused
    # (dnc_registry_stale). Empty: none.
    national_dnc_area_codes: Annotated[Items, AfterValidator(_area_codes)] = Field((), alias="NATIONAL_DNC_AREA_CODES")
    # Outbound compliance: the most calls, and the most texts, a business may place to one person in any 24 hours,
    # whatever path placed them (a state's cap may be stricter: Florida's counts calls and texts together).
    compliance_calls_per_24h: NonNegativeInt = Field(3, alias="COMPLIANCE_CALLS_PER_24H")
    compliance_texts_per_24h: NonNegativeInt = Field(10, alias="COMPLIANCE_TEXTS_PER_24H")
    # JSON inventory of carrier numbers loaded into the pool at start-up (see services.agents.pool): local use only.
    number_pool_file: str = Field("", alias="NUMBER_POOL_FILE")
    # Numbers bought from the SMS provider (services.agents.stock): a country or area code someone asked for, or
    # took a number of, within NUMBER_IDLE_RELEASE_DAYS, is refilled up to NUMBER_STOCK_TARGET free numbers once it
    # has fewer than NUMBER_STOCK_LOW; a bought number left free that long where nobody asked is given back.
    number_stock_low: PositiveInt = Field(2, alias="NUMBER_STOCK_LOW")
    number_stock_target: PositiveInt = Field(5, alias="NUMBER_STOCK_TARGET")
    number_stock_interval_seconds: PositiveFloat = Field(300.0, alias="NUMBER_STOCK_INTERVAL_SECONDS")
    number_idle_release_days: PositiveFloat = Field(30.0, alias="NUMBER_IDLE_RELEASE_DAYS")
    # The most numbers the stock job buys in any 24 hours over every place: asking for many area codes cannot spend
    # more (a refill held back by it waits for a later round).
    number_purchases_per_day: NonNegativeInt = Field(100, alias="NUMBER_PURCHASES_PER_DAY")
    # Checkout price ids signup accepts as plan_id: `plan=price_id,...` read as {price_id: plan} (core.plans).
    # Empty: none (the local default names the payment simulator's prices).
    checkout_prices: Annotated[dict[str, str], NoDecode, BeforeValidator(plans.parse_checkout_prices)] = Field(
        # the default is the variable's text, parsed (validate_default) like the environment's
        plans.LOCAL_CHECKOUT_PRICES, alias="CHECKOUT_PRICES")  # type: ignore[arg-type]
    # The payment provider (hosted card checkout, Stripe's API: the accounts service) and the signing secret of our
    # webhook endpoint there (the gateway verifies the provider's events with it).
    payments_api_url: Url = Field("https://api.stripe.com", alias="PAYMENTS_API_URL")
    payments_api_key: Secret = Field(Secret(""), alias="PAYMENTS_API_KEY")
    payments_webhook_secret: Secret = Field(Secret(""), alias="PAYMENTS_WEBHOOK_SECRET")
    payments_timeout_seconds: PositiveFloat = Field(10.0, alias="PAYMENTS_TIMEOUT_SECONDS")
    # x402: the facilitator that verifies and settles payments, and what a payment must be (network, asset,
    # receiving address).
    x402_facilitator_url: Url = Field("https://x402.org/facilitator", alias="X402_FACILITATOR_URL")
    x402_network: str = Field(x402_defaults.DEFAULT_NETWORK, alias="X402_NETWORK")
    x402_asset: str = Field(x402_defaults.DEFAULT_ASSET, alias="X402_ASSET")
    # The token's EIP-712 domain, which payers sign over.
    x402_asset_name: str = Field(x402_defaults.DEFAULT_ASSET_NAME, alias="X402_ASSET_NAME")
    x402_asset_version: str = Field(x402_defaults.DEFAULT_ASSET_VERSION, alias="X402_ASSET_VERSION")
    x402_pay_to: str = Field("", alias="X402_PAY_TO")
    # Each facilitator call (a settlement: twice that).
    x402_timeout_seconds: PositiveFloat = Field(10.0, alias="X402_TIMEOUT_SECONDS")
    # An overdue subscription's workspace is paused this long after its first failed payment (0: at once).
    payment_grace_hours: NonNegativeFloat = Field(72.0, alias="PAYMENT_GRACE_HOURS")
    # How often the billing worker looks for due provisioning steps and overdue subscriptions, and the first
    # retry delay of a provisioning step (doubling up to 64 times it).
    billing_interval_seconds: PositiveFloat = Field(30.0, alias="BILLING_INTERVAL_SECONDS")
    provisioning_retry_seconds: PositiveFloat = Field(5.0, alias="PROVISIONING_RETRY_SECONDS")
    # Erasures of a person (services.accounts.privacy): how often the runner looks for due ones (a new one starts at
    # once), and the first retry delay of a failed step (doubling, up to an hour; failed after ERASURE_MAX_ATTEMPTS).
    erasure_interval_seconds: PositiveFloat = Field(10.0, alias="ERASURE_INTERVAL_SECONDS")
    erasure_retry_seconds: PositiveFloat = Field(10.0, alias="ERASURE_RETRY_SECONDS")
    erasure_max_attempts: PositiveInt = Field(20, alias="ERASURE_MAX_ATTEMPTS")
    # Backups and erasure (docs/privacy.md, "Backups"): an erasure must reach every copy within the legal deadline
    # (ERASURE_DEADLINE_DAYS, a month), so a backup is kept at most BACKUP_RETENTION_DAYS (below the deadline), and
    # a completed erasure's replay entry (services.accounts.privacy.replay) as long, to erase again what a restored
    # backup brings back. BACKUP_DIR is where `python -m deploy.backup` writes the database's dumps.
    erasure_deadline_days: PositiveFloat = Field(30.0, alias="ERASURE_DEADLINE_DAYS")
    backup_retention_days: PositiveFloat = Field(25.0, alias="BACKUP_RETENTION_DAYS")
    backup_dir: Path | None = Field(None, alias="BACKUP_DIR")
    # The retention a business sets for its customers' personal data (services.accounts.privacy.data_retention): how
    # often the job looks for businesses due (each is due a day after its last round), and when a business whose
    # round had a service fail is due again.
    privacy_retention_interval_seconds: PositiveFloat = Field(3600.0, alias="PRIVACY_RETENTION_INTERVAL_SECONDS")
    privacy_retention_retry_seconds: PositiveFloat = Field(600.0, alias="PRIVACY_RETENTION_RETRY_SECONDS")
    # A torn-down workspace's customers' personal data is deleted everywhere this long after its teardown (the grace
    # period, for billing disputes: docs/privacy.md "Teardown deletes"); the erasure runner's interval and retry
    # delay pace the deletion too.
    teardown_grace_days: NonNegativeFloat = Field(30.0, alias="TEARDOWN_GRACE_DAYS")
    # Exports of a business's data (services.accounts.privacy exports): how often the runner looks for due ones (a new
    # one starts at once) and the first retry delay of a failed page (doubling, up to an hour; failed after
    # EXPORT_MAX_ATTEMPTS); how long a completed archive is kept, and how long a signed download link works.
    export_interval_seconds: PositiveFloat = Field(10.0, alias="EXPORT_INTERVAL_SECONDS")
    export_retry_seconds: PositiveFloat = Field(10.0, alias="EXPORT_RETRY_SECONDS")
    export_max_attempts: PositiveInt = Field(20, alias="EXPORT_MAX_ATTEMPTS")
    export_retention_hours: PositiveFloat = Field(168.0, alias="EXPORT_RETENTION_HOURS")
    export_link_seconds: PositiveInt = Field(3600, alias="EXPORT_LINK_SECONDS")
    # Eval runs: how many of this process's runs may be in flight at the voice provider at once (its rate limit is
    # per organisation), and how often an unfinished run is polled.
    eval_run_concurrency: PositiveInt = Field(5, alias="EVAL_RUN_CONCURRENCY")
    eval_poll_seconds: PositiveFloat = Field(1.0, alias="EVAL_POLL_SECONDS")
    # The lease on an unfinished run of the replica driving it (renewed every third of it): a replica that dies
    # has its runs taken over by another this long after (services.evals.run_service).
    eval_run_lease_seconds: PositiveFloat = Field(30.0, alias="EVAL_RUN_LEASE_SECONDS")
    # How long an agent's eval gate waits for its runs before refusing the change as unfinished (it must fit, with
    # the provider sync, inside the deadline of Agents.UpdateAgent and the other gated writes: agents.proto).
    eval_gate_max_wait_seconds: NonNegativeFloat = Field(20.0, alias="EVAL_GATE_MAX_WAIT_SECONDS")
    # Webhook delivery: loopback receivers outside the local stack, the claim lease, and a factor on the retry
    # schedule and the disabling window (tests shorten both).
    webhooks_allow_loopback: bool = Field(False, alias="WEBHOOKS_ALLOW_LOOPBACK")
    webhook_lease_seconds: PositiveFloat = Field(60.0, alias="WEBHOOK_LEASE_SECONDS")
    webhook_retry_scale: NonNegativeFloat = Field(1.0, alias="WEBHOOK_RETRY_SCALE")
    # The calls reaper: how often it looks, and how long past its max_duration a call may stay without outcome.
    calls_reaper_interval_seconds: PositiveFloat = Field(30.0, alias="CALLS_REAPER_INTERVAL_SECONDS")
    calls_reaper_margin_seconds: NonNegativeFloat = Field(120.0, alias="CALLS_REAPER_MARGIN_SECONDS")
    # The inbound calls' reconciliation (services.calls.inbound_reconciliation): how often the provider's list of
    # calls is read for inbound calls its server messages never told us of, and how far back it reads.
    calls_reconcile_seconds: PositiveFloat = Field(60.0, alias="CALLS_RECONCILE_SECONDS")
    calls_reconcile_lookback_minutes: PositiveFloat = Field(60.0, alias="CALLS_RECONCILE_LOOKBACK_MINUTES")
    # How long a call's Idempotency-Key claim holds while its request places the call; a retry takes over a claim
    # whose lease lapsed (services.calls.service). Longer than the provider's create can take after the call is
    # recorded: the webhook credential's read and the create, each up to 4 attempts of VOICE_TIMEOUT_SECONDS with
    # backoffs of up to 5 s between them (providers.voice.vapi.client): 2 x (4 x 5 + 3 x 5) = 70 s by default.
    idempotency_lease_seconds: PositiveFloat = Field(120.0, alias="IDEMPOTENCY_LEASE_SECONDS")
    # The communication runs' scheduler: how often it looks for due touches when idle, how long a claim lasts
    # (a touch whose scheduler died is claimed again after it), and the most calls of one business in flight.
    runs_poll_seconds: PositiveFloat = Field(0.2, alias="RUNS_POLL_SECONDS")
    runs_lease_seconds: PositiveFloat = Field(60.0, alias="RUNS_LEASE_SECONDS")
    runs_calls_in_flight: PositiveInt = Field(10, alias="RUNS_CALLS_IN_FLIGHT")
    # Touches one scheduler replica executes at once.
    runs_concurrency: PositiveInt = Field(20, alias="RUNS_CONCURRENCY")
    # The sales pipeline's scheduled runner: how often the sdr-runner worker looks for businesses whose two-hour
    # window has not run yet.
    sdr_runner_poll_seconds: PositiveFloat = Field(60.0, alias="SDR_RUNNER_POLL_SECONDS")
    # The server secret POST /api/sdr/runner takes (Authorization: Bearer ...).
    sdr_runner_secret: Secret = Field(Secret(DEV_DERIVED["SDR_RUNNER_SECRET"]), alias="SDR_RUNNER_SECRET")
    # Signs the links to call recordings the calls service hands out, and checks them when one is fetched.
    recording_links_secret: Secret = Field(Secret(DEV_DERIVED["RECORDING_LINKS_SECRET"]),
                                           alias="RECORDING_LINKS_SECRET")
    # Keys the suppression hash of an erased person's phone number (HMAC-SHA256: services.messaging.suppression),
    # which keeps them on the do-not-contact list and in the evidence logs without their number. Never rotated: a
    # new key would let every erased person who opted out be texted again.
    privacy_hash_key: Secret = Field(Secret(DEV_DERIVED["PRIVACY_HASH_KEY"]), alias="PRIVACY_HASH_KEY")
    # Seals the businesses' webhook signing secrets at rest (the webhooks service and its dispatcher).
    webhook_secrets_key: Annotated[Secret, AfterValidator(_fernet_key)] = Field(
        Secret(DEV_DERIVED["WEBHOOK_SECRETS_KEY"]), alias="WEBHOOK_SECRETS_KEY")

    @field_validator("*", mode="before")
    @classmethod
    def _empty_number_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        """PORT= (set but empty) is the default of a number or switch (or an unset one), as if unset; empty text
        stays empty."""
        assert info.field_name is not None  # a field validator's
        default = cls.model_fields[info.field_name].default
        return default if value == "" and (default is None or isinstance(default, (int, float))) else value

    @model_validator(mode="after")
    def _previous_secret_has_a_version(self) -> Settings:
        if self.secret_key_previous.reveal() and self.secret_key_version < 2:
            raise ValueError("SWITCHBOARD_SECRET_KEY_PREVIOUS: is the version before SWITCHBOARD_SECRET_KEY_VERSION, "
                             "so that must be 2 or more (raise it by one with each new SWITCHBOARD_SECRET_KEY)")
        return self

    @model_validator(mode="after")
    def _grpc_tls_all_or_none(self) -> Settings:
        files = {"GRPC_TLS_CERT": self.grpc_tls_cert, "GRPC_TLS_KEY": self.grpc_tls_key,
                 "GRPC_TLS_CA": self.grpc_tls_ca}
        missing = [variable for variable, path in files.items() if path is None]
        if 0 < len(missing) < len(files):
            given = ", ".join(v for v in files if v not in missing)
            raise ValueError("\n".join(f"{v}: must be set with {given} (mutual TLS needs all three)" for v in missing))
        return self

    @model_validator(mode="after")
    def _servers_accept_their_clients_pings(self) -> Settings:
        if self.grpc_min_ping_interval_seconds > self.grpc_keepalive_seconds:
            raise ValueError("GRPC_MIN_PING_INTERVAL_SECONDS: must be at most GRPC_KEEPALIVE_SECONDS, or a server "
                             "would close its clients' connections for pinging too often (GOAWAY too_many_pings)")
        return self

    @model_validator(mode="after")
    def _inbox_outlasts_the_streams(self) -> Settings:
        longest = max(self.nats_events_max_age_days, self.nats_provider_max_age_days)
        if self.retention_inbox_days < longest:
            raise ValueError(f"RETENTION_INBOX_DAYS: must be at least {longest:g} (NATS_EVENTS_MAX_AGE_DAYS, "
                             "NATS_PROVIDER_MAX_AGE_DAYS), or a message still on a stream could be applied twice")
        return self

    @model_validator(mode="after")
    def _backups_expire_before_the_erasure_deadline(self) -> Settings:
        if self.backup_retention_days >= self.erasure_deadline_days:
            raise ValueError(f"BACKUP_RETENTION_DAYS: must be below ERASURE_DEADLINE_DAYS "
                             f"({self.erasure_deadline_days:g}), or a backup would keep an erased person's data past "
                             "the deadline")
        return self

    @model_validator(mode="after")
    def _number_stock_target_above_low(self) -> Settings:
        if self.number_stock_target < self.number_stock_low:
            raise ValueError("NUMBER_STOCK_TARGET: must be at least NUMBER_STOCK_LOW (a refill buys up to the target)")
        return self

    def grpc_tls(self) -> GrpcTls | None:
        """The PEM files of mutual TLS between processes, read now; None when GRPC_TLS_* are unset: plaintext
        (the embedded stack's default)."""
        if self.grpc_tls_cert is None or self.grpc_tls_key is None or self.grpc_tls_ca is None:
            return None
        return GrpcTls(self.grpc_tls_cert.read_bytes(), self.grpc_tls_key.read_bytes(), self.grpc_tls_ca.read_bytes())

    def compliance_policy(self) -> Policy:
        """The platform's caps of the outbound compliance decision."""
        return Policy(calls_per_24h=self.compliance_calls_per_24h, texts_per_24h=self.compliance_texts_per_24h)

    def database_pool(self, kind: ProcessKind) -> DatabasePool:
        """The connections a process of `kind` may open to DATABASE_URL: DATABASE_POOL_SIZE, DATABASE_MAX_OVERFLOW
        and DATABASE_RAW_POOL_SIZE where set, its kind's default (DATABASE_POOLS) for the others."""
        default = DATABASE_POOLS[kind]
        return DatabasePool(
            self.database_pool_size if self.database_pool_size is not None else default.size,
            self.database_max_overflow if self.database_max_overflow is not None else default.overflow,
            self.database_raw_pool_size if self.database_raw_pool_size is not None else default.raw)

    def direct_database(self) -> str:
        """The URL for a connection that needs a session of its own: DIRECT_DATABASE_URL, else DATABASE_URL."""
        return self.direct_database_url.reveal() or self.database_url.reveal()

    @property
    def webhook_lease(self) -> timedelta:
        """A claimed delivery is due again after this (its dispatcher died mid-delivery); it must outlast a
        delivery attempt (services.webhooks.domain.DELIVERY_TIMEOUT_SECONDS)."""
        return timedelta(seconds=self.webhook_lease_seconds)

    @property
    def recording_origins(self) -> tuple[str, ...]:
        """VOICE_RECORDING_ORIGINS, else where the configured voice provider serves recordings: Vapi's storage for
        Vapi's API, the API's own origin otherwise (the simulator's, on the embedded stack)."""
        if self.voice_recording_origins:
            return self.voice_recording_origins
        return ("https://storage.vapi.ai",) if urlsplit(self.voice_api_url).hostname == "api.vapi.ai" \
            else (self.voice_api_url,)

    def __repr_args__(self) -> list[tuple[str | None, Any]]:  # repr and str: never print secrets, even by accident
        return [("nats_url", self.nats_url), ("http_port", self.http_port), ("home", str(self.home))]


ProcessKind = Literal["service", "worker"]  # the kinds of process that connect to PostgreSQL (the gateway does not)


class DatabasePool(NamedTuple):
    """What one process may hold open to DATABASE_URL at most: size + overflow (SQLAlchemy's) + raw (asyncpg's)."""

    size: int
    overflow: int
    raw: int

    @property
    def most(self) -> int:
        return self.size + self.overflow + self.raw


# Each kind's default pools. A service serves RPCs: its writes (SQLAlchemy, one connection per unit of work, never
# held across an RPC) and its hot reads (the raw pool) each get 5, and writes may burst to 8. A worker's work is
# claimed in batches and its reads go through SQLAlchemy too: 3 and a burst of 2, and 1 raw connection. Sized so that
# the production overlay fits its budget (deploy.budget); raise them with the budget, not alone.
DATABASE_POOLS: dict[ProcessKind, DatabasePool] = {"service": DatabasePool(5, 3, 5), "worker": DatabasePool(3, 2, 1)}


class GrpcTls(NamedTuple):
    """This process's certificate chain and private key, and the CA bundle its peers' certificates chain to (PEM)."""

    cert: bytes
    key: bytes
    ca: bytes


# Secrets a process is given only at times (a rotation's previous value): unset is a choice, not a mistake.
# DIRECT_DATABASE_URL is only given where DATABASE_URL goes through a pooler.
OPTIONAL_SECRETS = frozenset({"SWITCHBOARD_SECRET_KEY_PREVIOUS", "DIRECT_DATABASE_URL"})
# Every secret setting: {variable: field}.
SECRET_FIELDS = {f.alias: name for name, f in Settings.model_fields.items() if f.alias and f.annotation is Secret}


def load(process: str | None = None) -> Settings:
    """The settings of this process's environment; a bad value ends the process with what to fix.

    A `process` of core.registry.SECRETS reads its own secrets only: outside the local stack each must be given
    (a development default is refused), and the others are withheld (`Withheld`)."""
    try:
        loaded = Settings()
    except ValidationError as exc:
        raise SystemExit("\n".join(_problems(exc))) from None
    if process is None:
        return loaded
    own = registry.SECRETS[process]
    missing = [variable for variable in own
               if variable not in OPTIONAL_SECRETS and not _given(loaded, SECRET_FIELDS[variable])]
    if missing and loaded.environment != "local":
        raise SystemExit("\n".join(f"{variable}: must be set ({process} reads it; outside the local stack a secret "
                                   "has no default)" for variable in missing))
    return loaded.model_copy(update={field: Withheld.of(variable, process)
                                     for variable, field in SECRET_FIELDS.items() if variable not in own})


def _given(loaded: Settings, field: str) -> bool:
    """Set in the environment and, for a secret with a development default, to a value of its own (empty stays a
    choice for the others: an SMTP server that takes no password)."""
    default = Settings.model_fields[field].default
    return field in loaded.model_fields_set and not (default and getattr(loaded, field) in (default, ""))


def _problems(exc: ValidationError) -> list[str]:
    """`VARIABLE: must be ... (got 'value')`, one line per bad variable."""
    by_variable = {f.alias: name for name, f in Settings.model_fields.items() if f.alias}
    lines = []
    for error in exc.errors(include_url=False):
        if error["type"] == "default_factory_not_called":  # follows from another variable's error
            continue
        if not error["loc"]:  # a rule over several variables (its message names them)
            lines.append(str(error["ctx"]["error"]))
            continue
        first, *item = error["loc"]
        # the variable when it was set, the field when its default was checked
        name = by_variable.get(str(first), str(first))
        field = Settings.model_fields[name]
        variable = registry.grpc_port_env(str(item[0])) if name == "grpc_ports" else field.alias
        if error["type"] == "value_error":
            lines.append(f"{variable}: {error['ctx']['error']}")
            continue
        if error["type"] == "literal_error":
            must = f"must be one of {', '.join(get_args(field.annotation))}"
        else:
            must = error["msg"].replace("Input should be", "must be")
        lines.append(f"{variable}: {must} (got {error['input']!r})")
    return lines
