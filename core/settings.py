"""Process settings from environment variables, with safe local defaults.

Secrets are wrapped in `Secret` so that printing or logging a Settings object
never shows them.
"""
from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from datetime import timedelta
from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from urllib.parse import urlsplit

from core import plans, registry
from providers import x402


class Secret(str):
    """A string whose repr/str in logs is masked; use `.reveal()` for the value."""

    def reveal(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


SIGNUP_LIMIT_PER_HOUR = 5  # default; the rate limit per client address
DEV_SECRET = "dev-only-insecure-secret-change-me"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


def derive_secret(secret: str, purpose: str) -> str:
    """A secret for one purpose, derived from the server secret (HMAC-SHA256)."""
    return hmac.new(secret.encode(), purpose.encode(), hashlib.sha256).hexdigest()


def _list(name: str, default: str = "") -> tuple[str, ...]:
    return tuple(p.strip() for p in os.environ.get(name, default).split(",") if p.strip())


Networks = tuple[IPv4Network | IPv6Network, ...]


def _networks(name: str) -> Networks:
    """Comma-separated addresses or CIDR ranges (an address is its own /32 or /128)."""
    try:
        return tuple(ip_network(p, strict=False) for p in _list(name))
    except ValueError as exc:
        raise SystemExit(f"{name}: {exc} (give addresses or CIDR ranges, comma-separated)") from None


@dataclass(frozen=True)
class Settings:
    database_url: Secret
    nats_url: str
    home: Path
    http_host: str
    http_port: int
    public_base_url: str
    # Per process of core.registry: where its gRPC server is reached, and the port it listens on.
    addresses: dict[str, str]
    grpc_ports: dict[str, int]
    secret_key: Secret
    log_level: str
    # Peers whose X-Forwarded-For header is trusted (the load balancer or ingress controller): addresses or ranges.
    trusted_proxies: Networks = field(default=())
    # Browser origins besides public_base_url's that may call the assistant connector (/api/mcp).
    mcp_allowed_origins: tuple[str, ...] = field(default=())
    signup_limit_per_hour: int = SIGNUP_LIMIT_PER_HOUR
    key_rate_limit_per_minute: int = 600
    # Per client address and gateway replica: requests to the public routes and pages (gateway.publiclimits), and
    # of those, OAuth client registrations and authorization requests (each stores or fetches a client).
    public_rate_limit_per_minute: int = 120
    oauth_limit_per_hour: int = 60
    grpc_timeout_seconds: float = 10.0
    environment: str = "production"
    # The voice-AI provider (its public REST API; the local stack points it at the simulator).
    voice_api_url: str = "https://api.vapi.ai"
    voice_api_key: Secret = Secret("")
    # Per attempt; with retries the whole call stays inside the gateway's 30 s deadline for agents calls.
    voice_timeout_seconds: float = 5.0
    # Our SIP trunk credential at the voice provider: pool numbers are imported through it.
    voice_sip_credential_id: str = ""
    # Signs the provider's server messages (call statuses, end-of-call reports): the HMAC secret of the webhook
    # credential we register at the provider. Derived from the secret key unless VOICE_WEBHOOK_SECRET is set.
    voice_webhook_secret: Secret = Secret("")
    # How the provider authenticates them: hmac (signature and timestamp headers) or bearer (the secret as a token).
    voice_webhook_auth: str = "hmac"
    # Where the provider keeps call recordings: the only origins (scheme://host[:port]) the recording proxy fetches
    # from (VOICE_RECORDING_ORIGINS, comma-separated). Empty: the default of `recording_origins`.
    voice_recording_origins: tuple[str, ...] = field(default=())
    # The messaging (SMS) provider: Twilio's REST API (the local stack points it at the simulator).
    sms_api_url: str = "https://api.twilio.com"
    sms_account_sid: str = ""
    sms_auth_token: Secret = Secret("")
    sms_timeout_seconds: float = 5.0
    # Texts of unknown outcome (the provider did not answer the send): how often the provider is asked about them,
    # and after how long one it has no record of counts as never sent.
    sms_reconcile_seconds: float = 30.0
    sms_unknown_give_up_minutes: float = 10.0
    # Outgoing email (the owner's notifications, queued emails): an SMTP server; the local stack runs a catch-all.
    smtp_host: str = "localhost"
    smtp_port: int = 25
    smtp_username: str = ""
    smtp_password: Secret = Secret("")
    smtp_starttls: bool = False
    email_from: str = "Switchboard <notifications@switchboard.local>"
    email_delivery_interval_seconds: float = 5.0
    email_retry_scale: float = 1.0  # multiplies the retry backoff (tests shrink it)
    # Emails a business may queue through the API in any 24 hours (the owner's own notifications do not count).
    email_daily_quota: int = 200
    # Pool numbers a business may hold while its subscription is in its trial.
    trial_pool_numbers: int = 3
    # The platform-wide do-not-call list (E.164 numbers no business may text), beside each business's own.
    platform_dnc: tuple[str, ...] = field(default=())
    # Outbound compliance: the most calls a business may place to one person in 24 hours where no state sets a cap.
    compliance_calls_per_24h: int = 3
    # JSON inventory of carrier numbers loaded into the pool at start-up (see services.agents.pool).
    number_pool_file: str = ""
    # Checkout price ids signup accepts as plan_id: {price_id: plan} (core.plans).
    checkout_prices: dict[str, str] = field(default_factory=dict)
    # The payment provider (hosted card checkout, Stripe's API) and its webhook signing secret.
    payments_api_url: str = "https://api.stripe.com"
    payments_api_key: Secret = field(default_factory=lambda: Secret(""))
    payments_webhook_secret: Secret = field(default_factory=lambda: Secret(""))
    payments_timeout_seconds: float = 10.0
    # x402: the facilitator that verifies and settles payments, and what a payment must be (network, asset,
    # receiving address).
    x402_facilitator_url: str = "https://x402.org/facilitator"
    x402_network: str = x402.DEFAULT_NETWORK
    x402_asset: str = x402.DEFAULT_ASSET
    x402_asset_name: str = x402.DEFAULT_ASSET_NAME  # the token's EIP-712 domain, which payers sign over
    x402_asset_version: str = x402.DEFAULT_ASSET_VERSION
    x402_pay_to: str = ""
    x402_timeout_seconds: float = 10.0  # each facilitator call (a settlement: twice that)
    # An overdue subscription's workspace is paused this long after its first failed payment.
    payment_grace_hours: float = 72.0
    # How often the billing worker looks for due provisioning steps and overdue subscriptions, and the first
    # retry delay of a provisioning step (doubling up to 64 times it).
    billing_interval_seconds: float = 30.0
    provisioning_retry_seconds: float = 5.0
    # Eval runs: how many of this process's runs may be in flight at the voice provider at once (its rate limit is
    # per organisation), and how often an unfinished run is polled.
    eval_run_concurrency: int = 5
    eval_poll_seconds: float = 1.0
    # How long an agent's eval gate waits for its runs before refusing the change as unfinished (it must fit, with
    # the provider sync, inside the agents deadline: core.registry.PROVIDER_WAIT_SECONDS).
    eval_gate_max_wait_seconds: float = 20.0
    # Webhook delivery: loopback receivers outside the local stack, the claim lease, and a factor on the retry
    # schedule and the disabling window (tests shorten both).
    webhooks_allow_loopback: bool = False
    webhook_lease_seconds: float = 60.0
    webhook_retry_scale: float = 1.0
    # The calls reaper: how often it looks, and how long past its max_duration a call may stay without outcome.
    calls_reaper_interval_seconds: float = 30.0
    calls_reaper_margin_seconds: float = 120.0
    # The communication runs' scheduler: how often it looks for due touches when idle, how long a claim lasts
    # (a touch whose scheduler died is claimed again after it), and the most calls of one business in flight.
    runs_poll_seconds: float = 0.2
    runs_lease_seconds: float = 60.0
    runs_calls_in_flight: int = 10
    runs_concurrency: int = 20  # touches one scheduler replica executes at once
    # The sales pipeline's scheduled runner: how often the sdr-runner worker looks for businesses whose two-hour
    # window has not run yet.
    sdr_runner_poll_seconds: float = 60.0
    # The server secret POST /api/sdr/runner takes (Authorization: Bearer ...); derived from the server secret
    # unless set.
    sdr_runner_secret: Secret = Secret("")

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

    def derived_secret(self, purpose: str) -> str:
        """A secret for one purpose (e.g. signing recording URLs), derived from the server secret."""
        return derive_secret(self.secret_key.reveal(), purpose)

    def require_real_secret(self) -> None:
        """Outside the local stack, refuse to start with the built-in development secret."""
        if self.environment != "local" and self.secret_key.reveal() == DEV_SECRET:
            raise SystemExit("SWITCHBOARD_SECRET_KEY must be set (a long random value) outside the local stack")

    def __repr__(self) -> str:  # never print secrets, even by accident
        return f"Settings(nats_url={self.nats_url!r}, http_port={self.http_port}, home={str(self.home)!r})"


def load() -> Settings:
    home = Path(os.environ.get("SWITCHBOARD_HOME", ".switchboard")).resolve()
    port = _int("PORT", 8080)
    return Settings(
        database_url=Secret(os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/switchboard")),
        nats_url=os.environ.get("NATS_URL", "nats://127.0.0.1:4222"),
        home=home,
        http_host=os.environ.get("HOST", "127.0.0.1"),
        http_port=port,
        public_base_url=os.environ.get("PUBLIC_BASE_URL", f"http://127.0.0.1:{port}").rstrip("/"),
        addresses={s.name: os.environ.get(s.addr_env, f"127.0.0.1:{s.port}") for s in registry.SERVICES},
        grpc_ports={p.name: _int(p.port_env, p.port) for p in (*registry.SERVICES, *registry.WORKERS)},
        secret_key=Secret(os.environ.get("SWITCHBOARD_SECRET_KEY", DEV_SECRET)),
        log_level=os.environ.get("LOG_LEVEL", "INFO"),
        trusted_proxies=_networks("TRUSTED_PROXIES"),
        mcp_allowed_origins=_list("MCP_ALLOWED_ORIGINS"),
        signup_limit_per_hour=_int("SIGNUP_LIMIT_PER_HOUR", SIGNUP_LIMIT_PER_HOUR),
        key_rate_limit_per_minute=_int("KEY_RATE_LIMIT_PER_MINUTE", 600),
        public_rate_limit_per_minute=_int("PUBLIC_RATE_LIMIT_PER_MINUTE", 120),
        oauth_limit_per_hour=_int("OAUTH_LIMIT_PER_HOUR", 60),
        grpc_timeout_seconds=float(os.environ.get("GRPC_TIMEOUT_SECONDS", "10")),
        environment=os.environ.get("SWITCHBOARD_ENV", "production"),
        voice_api_url=os.environ.get("VOICE_API_URL", "https://api.vapi.ai").rstrip("/"),
        voice_api_key=Secret(os.environ.get("VOICE_API_KEY", "")),
        voice_timeout_seconds=float(os.environ.get("VOICE_TIMEOUT_SECONDS", "5")),
        voice_sip_credential_id=os.environ.get("VOICE_SIP_CREDENTIAL_ID", ""),
        voice_webhook_secret=Secret(os.environ.get("VOICE_WEBHOOK_SECRET") or derive_secret(
            os.environ.get("SWITCHBOARD_SECRET_KEY", DEV_SECRET), "voice-webhook")),
        voice_webhook_auth=os.environ.get("VOICE_WEBHOOK_AUTH", "hmac").strip().lower(),
        voice_recording_origins=_list("VOICE_RECORDING_ORIGINS"),
        number_pool_file=os.environ.get("NUMBER_POOL_FILE", ""),
        sms_api_url=os.environ.get("SMS_API_URL", "https://api.twilio.com").rstrip("/"),
        sms_account_sid=os.environ.get("SMS_ACCOUNT_SID", ""),
        sms_auth_token=Secret(os.environ.get("SMS_AUTH_TOKEN", "")),
        sms_timeout_seconds=float(os.environ.get("SMS_TIMEOUT_SECONDS", "5")),
        sms_reconcile_seconds=float(os.environ.get("SMS_RECONCILE_SECONDS", "30")),
        sms_unknown_give_up_minutes=float(os.environ.get("SMS_UNKNOWN_GIVE_UP_MINUTES", "10")),
        platform_dnc=_list("PLATFORM_DNC"),
        compliance_calls_per_24h=_int("COMPLIANCE_CALLS_PER_24H", 3),
        smtp_host=os.environ.get("SMTP_HOST", "localhost"),
        smtp_port=_int("SMTP_PORT", 25),
        smtp_username=os.environ.get("SMTP_USERNAME", ""),
        smtp_password=Secret(os.environ.get("SMTP_PASSWORD", "")),
        smtp_starttls=os.environ.get("SMTP_STARTTLS", "").lower() in ("1", "true"),
        email_from=os.environ.get("EMAIL_FROM", "Switchboard <notifications@switchboard.local>"),
        email_delivery_interval_seconds=float(os.environ.get("EMAIL_DELIVERY_INTERVAL_SECONDS", "5")),
        email_retry_scale=float(os.environ.get("EMAIL_RETRY_SCALE", "1")),
        email_daily_quota=_int("EMAIL_DAILY_QUOTA", 200),
        trial_pool_numbers=_int("TRIAL_POOL_NUMBERS", 3),
        checkout_prices=plans.parse_checkout_prices(os.environ.get("CHECKOUT_PRICES", plans.LOCAL_CHECKOUT_PRICES)),
        payments_api_url=os.environ.get("PAYMENTS_API_URL", "https://api.stripe.com").rstrip("/"),
        payments_api_key=Secret(os.environ.get("PAYMENTS_API_KEY", "")),
        payments_webhook_secret=Secret(os.environ.get("PAYMENTS_WEBHOOK_SECRET", "")),
        payments_timeout_seconds=float(os.environ.get("PAYMENTS_TIMEOUT_SECONDS", "10")),
        x402_facilitator_url=os.environ.get("X402_FACILITATOR_URL", "https://x402.org/facilitator").rstrip("/"),
        x402_network=os.environ.get("X402_NETWORK", x402.DEFAULT_NETWORK),
        x402_asset=os.environ.get("X402_ASSET", x402.DEFAULT_ASSET),
        x402_asset_name=os.environ.get("X402_ASSET_NAME", x402.DEFAULT_ASSET_NAME),
        x402_asset_version=os.environ.get("X402_ASSET_VERSION", x402.DEFAULT_ASSET_VERSION),
        x402_pay_to=os.environ.get("X402_PAY_TO", ""),
        x402_timeout_seconds=float(os.environ.get("X402_TIMEOUT_SECONDS", "10")),
        payment_grace_hours=float(os.environ.get("PAYMENT_GRACE_HOURS", "72")),
        billing_interval_seconds=float(os.environ.get("BILLING_INTERVAL_SECONDS", "30")),
        provisioning_retry_seconds=float(os.environ.get("PROVISIONING_RETRY_SECONDS", "5")),
        eval_run_concurrency=_int("EVAL_RUN_CONCURRENCY", 5),
        eval_poll_seconds=float(os.environ.get("EVAL_POLL_SECONDS", "1")),
        eval_gate_max_wait_seconds=float(os.environ.get("EVAL_GATE_MAX_WAIT_SECONDS", "20")),
        webhooks_allow_loopback=os.environ.get("WEBHOOKS_ALLOW_LOOPBACK", "").lower() in ("1", "true"),
        webhook_lease_seconds=float(os.environ.get("WEBHOOK_LEASE_SECONDS", "60")),
        webhook_retry_scale=float(os.environ.get("WEBHOOK_RETRY_SCALE", "1")),
        calls_reaper_interval_seconds=float(os.environ.get("CALLS_REAPER_INTERVAL_SECONDS", "30")),
        calls_reaper_margin_seconds=float(os.environ.get("CALLS_REAPER_MARGIN_SECONDS", "120")),
        runs_poll_seconds=float(os.environ.get("RUNS_POLL_SECONDS", "0.2")),
        runs_lease_seconds=float(os.environ.get("RUNS_LEASE_SECONDS", "60")),
        runs_calls_in_flight=_int("RUNS_CALLS_IN_FLIGHT", 10),
        runs_concurrency=_int("RUNS_CONCURRENCY", 20),
        sdr_runner_poll_seconds=float(os.environ.get("SDR_RUNNER_POLL_SECONDS", "60")),
        sdr_runner_secret=Secret(os.environ.get("SDR_RUNNER_SECRET") or derive_secret(
            os.environ.get("SWITCHBOARD_SECRET_KEY", DEV_SECRET), "sdr-runner")),
    )
