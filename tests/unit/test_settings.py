"""core.settings: every setting declared once (type, default, variable), read from the environment by `load()`;
a bad value stops the process with a line naming the variable; secrets never printed."""
import os
from datetime import timedelta
from ipaddress import ip_network
from pathlib import Path

import pytest
from nats.js.api import DiscardPolicy
from pydantic import ValidationError

from core import deadlines, grpc_server, plans, registry, rpc, settings, x402_defaults
from core.bus import PROVIDER_STREAM, STREAM, STREAMS, EventBus, limits_of
from core.settings import (
    DATABASE_POOLS,
    DEV_SECRET,
    SECRET_FIELDS,
    SIGNUP_LIMIT_PER_HOUR,
    Secret,
    Settings,
    derive_sealing_key,
    derive_secret,
)


@pytest.fixture
def load(monkeypatch):
    """`load(process, NAME=value, ...)`: the settings of an otherwise empty environment (as `process` reads them,
    when named)."""
    for name in list(os.environ):
        monkeypatch.delenv(name)

    def load(process: str | None = None, **env) -> settings.Settings:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return settings.load(process)
    return load


def test_an_empty_environment_gives_the_local_defaults(load):
    s = load()
    assert s.database_url.reveal() == "postgresql://postgres@127.0.0.1:5432/switchboard"
    assert (s.nats_url, s.http_host, s.http_port) == ("nats://127.0.0.1:4222", "127.0.0.1", 8080)
    assert s.home == Path(".switchboard").resolve() and s.public_base_url == "http://127.0.0.1:8080"
    assert s.addresses == {p.name: f"127.0.0.1:{p.port}" for p in registry.SERVICES}
    assert s.grpc_ports == {p.name: p.port for p in (*registry.SERVICES, *registry.WORKERS)}
    assert (s.environment, s.log_level, s.voice_webhook_auth) == ("production", "INFO", "hmac")
    assert s.secret_key.reveal() == DEV_SECRET and s.voice_api_key.reveal() == ""
    assert (s.signup_limit_per_hour, s.key_rate_limit_per_minute, s.sms_timeout_seconds) == (
        SIGNUP_LIMIT_PER_HOUR, 600, 5.0)
    assert s.trusted_proxies == s.mcp_allowed_origins == s.platform_dnc == s.voice_recording_origins == ()
    assert not s.smtp_starttls and not s.webhooks_allow_loopback
    assert s.checkout_prices == plans.parse_checkout_prices(plans.LOCAL_CHECKOUT_PRICES)
    assert (s.x402_network, s.x402_asset, s.x402_asset_name, s.x402_asset_version) == (
        x402_defaults.DEFAULT_NETWORK, x402_defaults.DEFAULT_ASSET, x402_defaults.DEFAULT_ASSET_NAME,
        x402_defaults.DEFAULT_ASSET_VERSION)
    assert s.payment_grace_hours == 72.0 and s.runs_poll_seconds == 0.2
    assert s.webhook_lease == timedelta(seconds=60) and s.recording_origins == ("https://storage.vapi.ai",)


def test_each_kind_of_setting_is_read_from_its_variable(load):
    s = load(DATABASE_URL="postgresql://u@db/x", SWITCHBOARD_HOME="data", HOST="0.0.0.0", PORT="9000",
             SWITCHBOARD_ENV="local", LOG_LEVEL="warning", VOICE_WEBHOOK_AUTH=" Bearer ",
             SMS_TIMEOUT_SECONDS="2.5", PAYMENT_GRACE_HOURS="0", EMAIL_DAILY_QUOTA="7",
             SMTP_STARTTLS="true", WEBHOOKS_ALLOW_LOOPBACK="1",
             VOICE_API_URL="http://127.0.0.1:8790/", X402_FACILITATOR_URL="https://f.example/x402/",
             PLATFORM_DNC="+14155550166, ,+14155550167", MCP_ALLOWED_ORIGINS="https://claude.ai",
             TRUSTED_PROXIES="10.244.0.0/16, 192.0.2.7", CHECKOUT_PRICES="starter=price_a, scale=price_b",
             SDR_ADDR="sdr.internal:7000", WEBHOOKS_DISPATCHER_GRPC_PORT="7001", X402_NETWORK="eip155:8453")
    assert s.database_url.reveal() == "postgresql://u@db/x" and s.home == Path("data").resolve()
    assert (s.http_host, s.http_port, s.public_base_url) == ("0.0.0.0", 9000, "http://127.0.0.1:9000")
    assert (s.environment, s.log_level, s.voice_webhook_auth) == ("local", "WARNING", "bearer")
    assert (s.sms_timeout_seconds, s.payment_grace_hours, s.email_daily_quota) == (2.5, 0.0, 7)
    assert s.smtp_starttls and s.webhooks_allow_loopback
    assert s.voice_api_url == "http://127.0.0.1:8790" and s.x402_facilitator_url == "https://f.example/x402"
    assert s.recording_origins == ("http://127.0.0.1:8790",)
    assert s.platform_dnc == ("+14155550166", "+14155550167") and s.mcp_allowed_origins == ("https://claude.ai",)
    assert s.trusted_proxies == (ip_network("10.244.0.0/16"), ip_network("192.0.2.7/32"))
    assert s.checkout_prices == {"price_a": "starter", "price_b": "scale"}
    assert s.addresses["sdr"] == "sdr.internal:7000" and s.grpc_ports["webhooks-dispatcher"] == 7001
    assert s.x402_network == "eip155:8453"
    assert load(PUBLIC_BASE_URL="https://switchboard.example/").public_base_url == "https://switchboard.example"


def test_empty_variables(load):
    """Empty is the default for a number or a switch (PORT=), and a value for text: no checkout prices."""
    s = load(PORT="", SMTP_PORT="", SMTP_STARTTLS="", RUNS_POLL_SECONDS="", SDR_GRPC_PORT="", CHECKOUT_PRICES="")
    assert (s.http_port, s.smtp_port, s.smtp_starttls, s.runs_poll_seconds) == (8080, 25, False, 0.2)
    assert s.grpc_ports["sdr"] == registry.service("sdr").port and s.checkout_prices == {}


@pytest.mark.parametrize("env, message", [
    ({"VOICE_WEBHOOK_AUTH": "foo"}, "VOICE_WEBHOOK_AUTH: must be one of hmac, bearer (got 'foo')"),
    ({"SWITCHBOARD_ENV": "staging"}, "SWITCHBOARD_ENV: must be one of local, production (got 'staging')"),
    ({"PORT": "70000"}, "PORT: must be less than or equal to 65535 (got '70000')"),
    ({"SMTP_PORT": "0"}, "SMTP_PORT: must be greater than or equal to 1 (got '0')"),
    ({"WEBHOOKS_DISPATCHER_GRPC_PORT": "http"}, "WEBHOOKS_DISPATCHER_GRPC_PORT: must be a valid integer"),
    ({"SMS_TIMEOUT_SECONDS": "0"}, "SMS_TIMEOUT_SECONDS: must be greater than 0 (got '0')"),
    ({"X402_TIMEOUT_SECONDS": "inf"}, "X402_TIMEOUT_SECONDS: must be a finite number (got 'inf')"),
    ({"PAYMENT_GRACE_HOURS": "-1"}, "PAYMENT_GRACE_HOURS: must be greater than or equal to 0 (got '-1')"),
    ({"EMAIL_DAILY_QUOTA": "many"}, "EMAIL_DAILY_QUOTA: must be a valid integer"),
    ({"SMTP_STARTTLS": "maybe"}, "SMTP_STARTTLS: must be a valid boolean"),
    ({"TRUSTED_PROXIES": "10.0.0.0/8,ingress.example"}, "TRUSTED_PROXIES: 'ingress.example' does not appear"),
    ({"CHECKOUT_PRICES": "gold=price_x"}, "CHECKOUT_PRICES: 'gold=price_x' must be <plan>=<price id>"),
    ({"WEBHOOK_SECRETS_KEY": "hunter2"}, "WEBHOOK_SECRETS_KEY: must be a Fernet key, 32 bytes in url-safe base64"),
])
def test_a_bad_value_ends_the_process_naming_its_variable(load, env, message):
    with pytest.raises(SystemExit) as stopped:
        load(**env)
    assert str(stopped.value).startswith(message)
    assert "pydantic" not in str(stopped.value) and not isinstance(stopped.value.__cause__, ValidationError)


def test_every_bad_variable_is_named_once(load):
    """A bad PORT is named, not the PUBLIC_BASE_URL that would have been derived from it."""
    with pytest.raises(SystemExit) as stopped:
        load(PORT="x", LOG_LEVEL="loud", RUNS_CONCURRENCY="0")
    assert [line.split(":")[0] for line in str(stopped.value).splitlines()] == [
        "PORT", "LOG_LEVEL", "RUNS_CONCURRENCY"]


def test_secrets_never_show(load):
    secrets = {variable: f"{variable.lower()}-1" for variable in SECRET_FIELDS} | {
        "DATABASE_URL": "postgresql://u:hunter2@db/x", "WEBHOOK_SECRETS_KEY": derive_sealing_key("k")}
    s = load(**secrets, SWITCHBOARD_SECRET_KEY_VERSION="2")
    shown = f"{s!r} {s} {s.database_url} {s.secret_key!r} {[s.voice_api_key]} {s.webhook_secrets_key}"
    assert not [v for v in secrets.values() if v in shown]
    assert {variable: getattr(s, field).reveal() for variable, field in SECRET_FIELDS.items()} == secrets
    assert all(isinstance(getattr(s, field), Secret) for field in SECRET_FIELDS.values())


def test_the_secrets_for_one_purpose_are_given_never_derived_by_the_process(load):
    """Whoever provisions the processes derives them (settings.derived_secrets), to the values each process derived
    for itself before (keys sealed, credentials registered and links signed then stay good); a process takes its
    variable, or the development secret's derivation by default, whatever SWITCHBOARD_SECRET_KEY it is given."""
    derived = settings.derived_secrets("k1")
    assert derived == {"VOICE_WEBHOOK_SECRET": derive_secret("k1", "voice-webhook"),
                       "SDR_RUNNER_SECRET": derive_secret("k1", "sdr-runner"),
                       "RECORDING_LINKS_SECRET": derive_secret("k1", "recording-links"),
                       "WEBHOOK_SECRETS_KEY": derive_sealing_key("k1"),
                       "PRIVACY_HASH_KEY": derive_secret("k1", "privacy-hash")}
    s = load(SWITCHBOARD_SECRET_KEY="k1")
    assert {v: getattr(s, SECRET_FIELDS[v]).reveal() for v in derived} == settings.derived_secrets(DEV_SECRET)
    s = load(**derived)
    assert {v: getattr(s, SECRET_FIELDS[v]).reveal() for v in derived} == derived


@pytest.mark.parametrize("process", registry.SECRETS)
def test_each_process_can_read_its_declared_secrets_and_no_other(load, process):
    s = load(process, SWITCHBOARD_ENV="local")
    readable = set()
    for variable, field in SECRET_FIELDS.items():
        try:
            getattr(s, field).reveal()
            readable.add(variable)
        except RuntimeError as refused:
            assert str(refused) == f"{process} is not given {variable}: declare it in core.registry if {process} " \
                                   "reads it"
    assert readable == set(registry.SECRETS[process])


def test_outside_the_local_stack_a_process_stops_without_each_of_its_secrets(load):
    with pytest.raises(SystemExit) as stopped:
        load("calls")
    assert str(stopped.value).splitlines() == [
        f"{variable}: must be set (calls reads it; outside the local stack a secret has no default)"
        for variable in ("DATABASE_URL", "VOICE_API_KEY", "VOICE_WEBHOOK_SECRET", "RECORDING_LINKS_SECRET",
                         "CALLER_SIGNING_KEY", "NATS_SEED")]
    own = {"DATABASE_URL": "postgresql://u@db/x", "PAYMENTS_API_KEY": "sk_1", "SMTP_PASSWORD": "",  # empty: a choice
           "CALLER_SIGNING_KEY": "accounts:1=k", "NATS_SEED": "SUseed"}
    with pytest.raises(SystemExit, match=r"^SWITCHBOARD_SECRET_KEY: must be set \(accounts reads it"):
        load("accounts", **own, SWITCHBOARD_SECRET_KEY=DEV_SECRET)  # set, but to the development secret
    assert load("accounts", SWITCHBOARD_SECRET_KEY="a-long-random-value").secret_key.reveal() == "a-long-random-value"
    assert load("migrate").database_url.reveal() == "postgresql://u@db/x"  # needs nothing else
    gateway = {v: "x" for v in registry.SECRETS["gateway"]}
    for unusable in ("", derive_secret(DEV_SECRET, "voice-webhook")):  # empty, or the development derivation
        with pytest.raises(SystemExit, match=r"^VOICE_WEBHOOK_SECRET: must be set"):
            load("gateway", **gateway | {"VOICE_WEBHOOK_SECRET": unusable})


def test_settings_are_immutable_and_copied_with_changes(load):
    s = load()
    with pytest.raises(ValidationError, match="frozen"):
        s.http_port = 1
    local = s.model_copy(update={"environment": "local"})
    assert (s.environment, local.environment, local.http_port) == ("production", "local", 8080)


def test_grpc_tls_is_all_three_files_or_none(load, tmp_path):
    """Mutual TLS between processes is off unless GRPC_TLS_* are set; a partial set or a file that cannot be read
    stops the process naming the variable."""
    assert load().grpc_tls() is None and load().grpc_health_port == 0
    for name in ("cert", "key", "ca"):
        (tmp_path / name).write_text(f"-----BEGIN {name}-----\n")
    with pytest.raises(SystemExit) as stopped:
        load(GRPC_TLS_CERT=str(tmp_path / "cert"))
    assert str(stopped.value).splitlines() == [
        "GRPC_TLS_KEY: must be set with GRPC_TLS_CERT (mutual TLS needs all three)",
        "GRPC_TLS_CA: must be set with GRPC_TLS_CERT (mutual TLS needs all three)"]
    with pytest.raises(SystemExit, match=r"^GRPC_TLS_KEY: cannot read .*missing \(No such file"):
        load(GRPC_TLS_KEY=str(tmp_path / "missing"), GRPC_TLS_CA=str(tmp_path / "ca"))
    (tmp_path / "empty").write_text("")
    with pytest.raises(SystemExit, match=r"^GRPC_TLS_KEY: .*empty holds no PEM block"):
        load(GRPC_TLS_KEY=str(tmp_path / "empty"))
    s = load(GRPC_TLS_KEY=str(tmp_path / "key"), GRPC_HEALTH_PORT="50050")
    assert s.grpc_tls() == (b"-----BEGIN cert-----\n", b"-----BEGIN key-----\n", b"-----BEGIN ca-----\n")
    assert s.grpc_health_port == 50050 and "BEGIN" not in repr(s)
    assert load(GRPC_TLS_CERT="", GRPC_TLS_KEY="", GRPC_TLS_CA="").grpc_tls() is None


def test_a_previous_server_secret_needs_a_version_before_the_current_one(load):
    with pytest.raises(SystemExit) as stopped:
        load(SWITCHBOARD_SECRET_KEY_PREVIOUS="old")
    assert "SWITCHBOARD_SECRET_KEY_PREVIOUS" in str(stopped.value) and "2 or more" in str(stopped.value)
    rotated = load(SWITCHBOARD_SECRET_KEY_PREVIOUS="old", SWITCHBOARD_SECRET_KEY_VERSION="2")
    assert rotated.secret_key_version == 2 and rotated.secret_key_previous.reveal() == "old"


def longest_declared_deadline() -> float:
    return max(deadlines.declared(method) for s in registry.SERVICES for method in s.descriptor().methods)


def test_grpc_balancing_and_keepalive_agree_between_clients_and_servers(load):
    """Servers close each connection after its maximum age (its client then resolves the name again), with a grace
    that lets the slowest rpc finish; clients ping no more often than servers accept, even with no call in flight
    (else a server answers GOAWAY too_many_pings); all from settings, with the documented defaults."""
    s = load()
    server, client = dict(grpc_server.server_options(s)), dict(rpc.channel_options(s))
    assert (server["grpc.max_connection_age_ms"], server["grpc.max_connection_age_grace_ms"]) == (300_000, 60_000)
    assert server["grpc.max_connection_age_grace_ms"] >= longest_declared_deadline() * 1000
    assert client["grpc.lb_policy_name"] == "round_robin"
    assert client["grpc.dns_min_time_between_resolutions_ms"] == 30_000
    assert client["grpc.keepalive_time_ms"] == server["grpc.keepalive_time_ms"] == 30_000
    assert client["grpc.keepalive_permit_without_calls"] == server["grpc.keepalive_permit_without_calls"] == 1
    assert client["grpc.http2.max_pings_without_data"] == 0
    assert server["grpc.http2.min_ping_interval_without_data_ms"] <= client["grpc.keepalive_time_ms"]
    assert (s.grpc_host, load(SWITCHBOARD_ENV="local").grpc_host) == ("[::]", "127.0.0.1")
    tuned = load(GRPC_MAX_CONNECTION_AGE_SECONDS="1.5", GRPC_KEEPALIVE_SECONDS="20", GRPC_MIN_PING_INTERVAL_SECONDS="5")
    assert grpc_server.server_options(tuned)[1:2] == [("grpc.max_connection_age_ms", 1500)]
    assert dict(rpc.channel_options(tuned))["grpc.keepalive_time_ms"] == 20_000
    with pytest.raises(SystemExit, match=r"^GRPC_MIN_PING_INTERVAL_SECONDS: must be at most GRPC_KEEPALIVE_SECONDS"):
        load(GRPC_KEEPALIVE_SECONDS="10", GRPC_MIN_PING_INTERVAL_SECONDS="15")


def test_each_kind_of_process_has_its_pools_and_the_settings_override_them():
    """Unset, a process gets its kind's pools; DATABASE_POOL_SIZE and the others override them for every kind."""
    defaults = Settings()
    assert {kind: defaults.database_pool(kind) for kind in DATABASE_POOLS} == DATABASE_POOLS
    tuned = Settings(DATABASE_POOL_SIZE=2, DATABASE_RAW_POOL_SIZE=1)
    assert tuned.database_pool("service") == (2, DATABASE_POOLS["service"].overflow, 1)
    assert tuned.database_pool("worker") == (2, DATABASE_POOLS["worker"].overflow, 1)


def test_retention_and_stream_limits_have_their_documented_defaults_and_the_inbox_outlasts_the_streams(load):
    s = load()
    assert (s.retention_outbox_days, s.retention_inbox_days, s.retention_webhook_deliveries_days,
            s.retention_usage_days, s.retention_interval_seconds, s.retention_batch) == (3, 14, 30, 400, 300, 1000)
    limits = limits_of(s)
    assert (limits[STREAM].max_age, limits[STREAM].max_bytes, limits[STREAM].discard) == (
        7 * 86400, 4 * 1024 ** 3, DiscardPolicy.OLD)
    assert (limits[PROVIDER_STREAM].max_age, limits[PROVIDER_STREAM].max_bytes, limits[PROVIDER_STREAM].discard) == (
        7 * 86400, 2 * 1024 ** 3, DiscardPolicy.NEW)
    assert (limits[registry.DEADLETTER_STREAM].max_age, limits[registry.DEADLETTER_STREAM].max_bytes,
            limits[registry.DEADLETTER_STREAM].discard) == (30 * 86400, 512 * 1024 ** 2, DiscardPolicy.NEW)
    # every stream bounded, together well under JetStream's 10 Gi volume (deploy/nats-values.yaml)
    assert set(limits) == set(STREAMS)
    assert sum(limit.max_bytes for limit in limits.values()) <= 0.65 * 10 * 1024 ** 3
    created = EventBus("nats://x", "test", stream_replicas=3, limits=limits)._config(STREAM)
    assert (created.max_age, created.max_bytes, created.discard, created.num_replicas) == (
        7 * 86400, 4 * 1024 ** 3, DiscardPolicy.OLD, 3)
    tuned = limits_of(load(NATS_EVENTS_MAX_AGE_DAYS="1", NATS_EVENTS_MAX_BYTES="1000", NATS_EVENTS_DISCARD="new"))
    assert (tuned[STREAM].max_age, tuned[STREAM].max_bytes, tuned[STREAM].discard) == (86400, 1000, DiscardPolicy.NEW)
    tuned = limits_of(load(NATS_DEADLETTERS_MAX_AGE_DAYS="2", NATS_DEADLETTERS_MAX_BYTES="5000"))
    assert (tuned[registry.DEADLETTER_STREAM].max_age, tuned[registry.DEADLETTER_STREAM].max_bytes) == (2 * 86400, 5000)
    created = EventBus("nats://x", "test", limits=tuned)._config(registry.DEADLETTER_STREAM)
    assert (created.max_age, created.max_bytes, created.discard) == (2 * 86400, 5000, DiscardPolicy.NEW)
    with pytest.raises(SystemExit, match=r"^RETENTION_INBOX_DAYS: must be at least 10"):
        load(NATS_PROVIDER_MAX_AGE_DAYS="10", RETENTION_INBOX_DAYS="9")


def test_each_service_sweeps_its_outbox_and_inbox_and_its_own_records(load):
    s = load()
    rules = {name: [(r.name, r.keep) for r in grpc_server.standard_retention(registry.service(name), s)]
             for name in ("accounts", "webhooks", "evals")}
    assert rules == {"accounts": [("accounts.outbox", timedelta(days=3)), ("accounts.inbox", timedelta(days=14))],
                     "webhooks": [("webhooks.inbox", timedelta(days=14))], "evals": []}
