"""The embedded stack: PostgreSQL, NATS, migrations, the provider simulators, every service and the
gateway as processes.

Used by `make run` (deploy.local.__main__) and by the test harness, so the tests
run exactly what users run. With DATABASE_URL / NATS_URL set, those servers are
used instead of the embedded ones; with VOICE_API_URL / VOICE_API_KEY set, that voice provider is used
instead of the simulator.

With `restart_exited` (`make run`'s default; the tests' stacks leave it off) a process that exits when the stack did
not stop it is started again after a backoff, as Kubernetes would (deploy.local.supervision); `kill`, `pause`,
`restart_postgres` and `restart_nats` inject the faults a soak needs.

Every process is started with the launcher's environment and `extra_env`: OTEL_EXPORTER_OTLP_ENDPOINT and the
other OTEL_* variables set there reach each one, which then exports its spans (core.telemetry).

With `replicas=2` (`REPLICAS=2 make run`) every service, worker and the gateway runs twice against the one
PostgreSQL and NATS: each gateway on a port of its own (`gateway_urls`) behind the ingress (deploy.local.ingress),
which listens on `http_port` (`base_url`, the public URL the providers' webhooks come to) as an Ingress does on
Kubernetes; and each service's address is both of its replicas (`ipv4:127.0.0.1:P1,127.0.0.1:P2`), which core.rpc's
channels balance round robin.

Each process is given only its own secrets (core.registry.SECRETS; a simulator, its provider's credentials): the
secrets for one purpose are derived here from the data folder's server secret (or SWITCHBOARD_SECRET_KEY).
DATABASE_URL (the embedded server's, or the one set) is the owner's, which runs the migrations; each process connects
as its PostgreSQL role (core.db_roles), whose password is the data folder's and is set here at every start.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from core import caller, db_roles, nats_auth, registry
from core.migrations import upgrade_all
from core.settings import SECRET_FIELDS, derived_secrets
from deploy.local.ingress import UPSTREAMS_ENV
from deploy.local.servers import Nats, Postgres, free_port, port_is_free, stop_process, stop_processes, wait_for_port
from deploy.local.supervision import Supervisor
from providers.messaging.webhooks import INBOUND_PATH
from providers.payments.webhooks import EVENTS_PATH as PAYMENT_EVENTS_PATH

ROOT = Path(__file__).resolve().parents[2]
# The kind of process a module runs, by the name core.registry gives it (replicas sign as their kind).
KINDS = {"gateway": registry.GATEWAY, **{s.module: s.name for s in registry.SERVICES},
          **{w.module: w.name for w in registry.WORKERS}}
NUMBER_POOL = Path(__file__).resolve().parent / "number_pool.json"
VOICE_SIMULATOR = "voice-simulator"
SMS_SIMULATOR = "sms-simulator"
MAIL_CATCHALL = "mail-catchall"
PAYMENTS_SIMULATOR = "payments-simulator"
X402_FACILITATOR = "x402-facilitator"
INGRESS = "ingress"


@dataclass
class Process:
    name: str
    module: str
    port: int
    secrets: tuple[str, ...] = ()  # the secret settings it is given (core.settings.SECRET_FIELDS)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    env: dict[str, str] = field(default_factory=dict)  # overrides for this process only
    stopped: bool = False  # by the stack (stop_process, stop): not to be restarted by its supervision
    started: float = 0.0  # time.monotonic() at its last start

    @property
    def metrics_port(self) -> int:
        """Where its metrics are served for a scrape (0: not): Stack.metrics, or a METRICS_PORT of its own."""
        return int(self.env.get("METRICS_PORT", "0"))


@dataclass
class Stack:
    home: Path
    http_port: int = 8080
    durable: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)
    database_url: str = ""
    nats_url: str = ""
    postgres: Postgres | None = None
    nats: Nats | None = None
    processes: list[Process] = field(default_factory=list)
    smtp_port: int = 0  # the mail catch-all's SMTP port (its process port is its HTTP read API)
    # Serve each platform process's metrics for a Prometheus scrape, each on a free port of its own (its
    # Process.metrics_port); off by default: one METRICS_PORT for every process would collide.
    metrics: bool = False
    replicas: int = 1  # of every service, worker and the gateway
    # The stack's own replicas of each kind of process (the gateway, a service or a worker): the ones a service's
    # address balances over. Replicas added later (add_replica, with settings of their own) are not among them.
    pools: dict[str, list[Process]] = field(default_factory=dict)
    # Supervision (deploy.local.supervision): a process that exits when the stack did not stop it is started again
    # after a backoff, each restart counted by name in `restarts`. Off by default; `make run` turns it on.
    restart_exited: bool = False
    restarts: dict[str, int] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)  # a process's start/stop
    supervisor: Supervisor[Process] | None = field(default=None, init=False, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def gateway_urls(self) -> list[str]:
        """Each of the stack's gateway replicas, reached directly: with one, base_url; with more, the ingress at
        base_url balances over them."""
        return [f"http://127.0.0.1:{p.port}" for p in self.pools[registry.GATEWAY]]

    @property
    def logs(self) -> Path:
        return self.home / "logs"

    def start_servers(self) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.database_url = self.database_url or os.environ.get("DATABASE_URL", "")
        if not self.database_url:
            self.postgres = Postgres(self.home, durable=self.durable)
            self.postgres.start()
            self.database_url = self.postgres.url
        self.nats_url = self.nats_url or os.environ.get("NATS_URL", "")
        if not self.nats_url:
            self.nats = Nats(self.home, self.secret_key())
            self.nats.start()
            self.nats_url = self.nats.url

    def env(self) -> dict[str, str]:
        """Every setting of the stack, each secret included (what tests and tools read); a process is started with
        `process_env`."""
        secret_key = self.secret_key()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")]),
            "DATABASE_URL": self.database_url,
            "NATS_URL": self.nats_url,
            "SWITCHBOARD_HOME": str(self.home),
            "SWITCHBOARD_ENV": "local",
            "PORT": str(self.http_port),
            "SWITCHBOARD_SECRET_KEY": secret_key,
            **{name: os.environ.get(name) or value for name, value in derived_secrets(secret_key).items()},
            "CALLER_VERIFY_KEYS": ",".join(verify for _, verify in self.caller_keys().values()),
            "PUBLIC_BASE_URL": os.environ.get("PUBLIC_BASE_URL", self.base_url),
            **self.registry_env(),
            "NUMBER_POOL_FILE": os.environ.get("NUMBER_POOL_FILE", str(NUMBER_POOL)),
            **self.voice_env(),
            **self.sms_env(),
            **self.mail_env(),
            **self.payments_env(),
            **self.x402_env(),
            "METRICS_PORT": "0",  # a process's own when it serves metrics (`metrics`, Process.env)
            # Only the ingress (replicas > 1) polls readiness to stop sending, every 0.2 s (core.settings): a short
            # delay, the shutdown's steps kept.
            "SHUTDOWN_DELAY_SECONDS": os.environ.get("SHUTDOWN_DELAY_SECONDS", "1"),
            **self.extra_env,
        }
        return env

    def process_env(self, p: Process) -> dict[str, str]:
        """What process `p` is started with: the stack's settings, of the secrets only its own, the key that
        signs the caller context it sends (its kind's: a second replica signs as the first) and the public keys of
        the processes that call it alone (core.registry.callers_of)."""
        env = {name: value for name, value in {**self.env(), **p.env}.items()
               if name not in SECRET_FIELDS or name in p.secrets}
        kind = KINDS.get(p.module)  # None: a provider's simulator, no process of the platform
        if kind is not None:
            keys = self.caller_keys()
            if registry.CALLER_SIGNING_KEY in p.secrets and registry.CALLER_SIGNING_KEY not in p.env:
                env[registry.CALLER_SIGNING_KEY] = keys[kind][0]
            if "CALLER_VERIFY_KEYS" not in p.env:
                env["CALLER_VERIFY_KEYS"] = ",".join(keys[c][1] for c in registry.callers_of(kind))
            for variable in ("DATABASE_URL", registry.DIRECT_DATABASE_URL):  # no pooler here: both are direct
                if variable in p.secrets and variable not in p.env:
                    env[variable] = self.database_url_of(kind)
            if registry.NATS_SEED in p.secrets and registry.NATS_SEED not in p.env:  # its kind's NATS user
                env[registry.NATS_SEED] = self.nats_login(kind).seed
        return env

    def database_url_of(self, process: str) -> str:
        """The DATABASE_URL `process` is given: its PostgreSQL role's (core.db_roles), on the stack's database.
        (The stack's own, `database_url`, is the owner's: the migrations' and the tests'.)"""
        role = registry.database_role(process)
        if role is None:
            return self.database_url
        return db_roles.url_for(self.database_url, role, self.database_password(role))

    def database_password(self, role: str) -> str:
        return self.home_secret(f"database_role_{role}")

    def secret_key(self) -> str:
        return os.environ.get("SWITCHBOARD_SECRET_KEY") or self.home_secret("secret_key")

    def nats_login(self, identity: str) -> nats_auth.Login:
        """How `identity` signs in to the stack's NATS (a process of core.registry.BUS, or the test harness's
        nats_auth.TEST_ADMIN): its seed derived from the stack's secret, as the embedded server's config names it. An
        external NATS (NATS_URL) must have the same users: `python -m core.nats_auth local-users` prints them."""
        return nats_auth.Login.of(identity, nats_auth.derived_seed(self.secret_key(), identity))

    def caller_keys(self) -> dict[str, tuple[str, str]]:
        """Each process's key pair for the caller context (core.caller), derived from the stack's secret."""
        return caller.derived_keys(self.secret_key(), registry.PROCESSES)

    def registry_env(self) -> dict[str, str]:
        """Where each service and worker of core.registry listens, and where the others reach it."""
        env = {}
        for service in registry.SERVICES:
            pool = self.pools[service.name]
            addresses = ",".join(f"127.0.0.1:{p.port}" for p in pool)
            # gRPC's ipv4: target names several addresses, which a round-robin channel balances (core.rpc)
            env.update({service.addr_env: addresses if len(pool) == 1 else f"ipv4:{addresses}",
                        service.port_env: str(pool[0].port)})
        for worker in registry.WORKERS:
            env[worker.port_env] = str(self.pools[worker.name][0].port)
        return env

    def voice_env(self) -> dict[str, str]:
        """The voice provider: VOICE_API_URL/VOICE_API_KEY when set, else the local simulator, as an organization
        with transfer-outcome detection and fallback enabled (the account setting ring-first forwarding needs at
        the provider: README, Ring-first forwarding)."""
        if os.environ.get("VOICE_API_URL"):
            return {}
        sim = self.process(VOICE_SIMULATOR)
        return {"VOICE_API_URL": f"http://127.0.0.1:{sim.port}", "VOICE_API_KEY": self.home_secret("voice_api_key"),
                "VOICE_SIM_PORT": str(sim.port), "VOICE_SIM_DATA_DIR": str(self.home / VOICE_SIMULATOR),
                "VOICE_SIP_CREDENTIAL_ID": "local-sip-trunk", "VOICE_SIM_TRANSFER_FALLBACK": "1"}

    def sms_env(self) -> dict[str, str]:
        """The messaging provider: SMS_API_URL with its credentials when set, else the local simulator, whose
        inbound texts come to our inbound webhook."""
        if os.environ.get("SMS_API_URL"):
            return {}
        sim = self.process(SMS_SIMULATOR)
        account_sid = "AC" + hashlib.sha256(self.home_secret("sms_auth_token").encode()).hexdigest()[:32]
        return {"SMS_API_URL": f"http://127.0.0.1:{sim.port}", "SMS_ACCOUNT_SID": account_sid,
                "SMS_AUTH_TOKEN": self.home_secret("sms_auth_token"), "SMS_SIM_PORT": str(sim.port),
                "SMS_INBOUND_URL": os.environ.get("PUBLIC_BASE_URL", self.base_url) + INBOUND_PATH}

    def mail_env(self) -> dict[str, str]:
        """Outgoing email: SMTP_HOST when set, else the local catch-all, which keeps every message in
        $SWITCHBOARD_HOME/mail (and lists them over HTTP)."""
        if os.environ.get("SMTP_HOST"):
            return {}
        return {"SMTP_HOST": "127.0.0.1", "SMTP_PORT": str(self.smtp_port), "SMTP_PASSWORD": "",  # it takes any mail
                "SMTP_CATCHALL_PORT": str(self.smtp_port),
                "SMTP_CATCHALL_HTTP_PORT": str(self.process(MAIL_CATCHALL).port),
                "SMTP_CATCHALL_DIR": str(self.home / "mail")}

    def payments_env(self) -> dict[str, str]:
        """The payment provider (card checkout): PAYMENTS_API_URL with its key and webhook secret when set, else
        the local simulator, whose checkout page is served on its port and whose events come to our webhook."""
        if os.environ.get("PAYMENTS_API_URL"):
            return {}
        sim = self.process(PAYMENTS_SIMULATOR)
        return {"PAYMENTS_API_URL": f"http://127.0.0.1:{sim.port}",
                "PAYMENTS_API_KEY": "sk_test_" + self.home_secret("payments_api_key")[:32].replace("-", "x"),
                "PAYMENTS_WEBHOOK_SECRET": "whsec_" + self.home_secret("payments_webhook_secret")[:32],
                "PAYMENTS_SIM_PORT": str(sim.port),
                "PAYMENTS_WEBHOOK_URL": os.environ.get("PUBLIC_BASE_URL", self.base_url) + PAYMENT_EVENTS_PATH}

    def x402_env(self) -> dict[str, str]:
        """x402: X402_FACILITATOR_URL when set, else the local facilitator (Base Sepolia's USDC by default,
        settled on its own ledger); payments go to this data folder's own receiving address unless X402_PAY_TO
        names one."""
        env = {"X402_PAY_TO": os.environ.get("X402_PAY_TO") or
               "0x" + hashlib.sha256(self.home_secret("x402_pay_to").encode()).hexdigest()[:40]}
        if not os.environ.get("X402_FACILITATOR_URL"):
            port = self.process(X402_FACILITATOR).port
            env.update(X402_FACILITATOR_URL=f"http://127.0.0.1:{port}", X402_FACILITATOR_PORT=str(port))
        return env

    def home_secret(self, name: str) -> str:
        """A secret of this data folder (key hashing, the simulator's API key), made on first start and kept
        with the data."""
        path = self.home / name
        if not path.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            path.touch(mode=0o600)
            path.write_text(secrets.token_urlsafe(48))
        return path.read_text().strip()

    def start(self) -> None:
        if not port_is_free(self.http_port):
            raise RuntimeError(f"port {self.http_port} is already in use: is Switchboard already running? "
                               "Stop it or set PORT")
        self.start_servers()
        upgrade_all(self.database_url)
        db_roles.set_passwords(self.database_url, {r.key: self.database_password(r.key) for r in db_roles.ROLES})
        simulators = [*([] if os.environ.get("VOICE_API_URL") else [
            Process(VOICE_SIMULATOR, "providers.voice.vapi.simulator", free_port(), ("VOICE_API_KEY",))]),
            *([] if os.environ.get("SMS_API_URL") else [
                Process(SMS_SIMULATOR, "providers.messaging.simulator", free_port(), ("SMS_AUTH_TOKEN",))]),
            *([] if os.environ.get("SMTP_HOST") else [Process(MAIL_CATCHALL, "providers.email.catchall", free_port())]),
            *([] if os.environ.get("PAYMENTS_API_URL") else [
                Process(PAYMENTS_SIMULATOR, "providers.payments.simulator", free_port(),
                        ("PAYMENTS_API_KEY", "PAYMENTS_WEBHOOK_SECRET"))]),
            *([] if os.environ.get("X402_FACILITATOR_URL") else [
                Process(X402_FACILITATOR, "providers.x402.facilitator", free_port())])]
        self.smtp_port = self.smtp_port or free_port()
        self.pools = {name: self.pool(name, module) for name, module in (
            *((s.name, s.module) for s in registry.SERVICES), *((w.name, w.module) for w in registry.WORKERS),
            (registry.GATEWAY, "gateway"))}
        platform = [p for pool in self.pools.values() for p in pool]
        if self.metrics:
            for p in platform:
                p.env["METRICS_PORT"] = str(free_port())
        # Several gateways have the ingress in front of them, on http_port (`pool` gave them ports of their own).
        gateways = ",".join(self.gateway_urls)
        entrance = [Process(INGRESS, "deploy.local.ingress", self.http_port, env={UPSTREAMS_ENV: gateways})
                    ] if self.replicas > 1 else []
        self.processes = [*simulators, *platform, *entrance]
        for p in self.processes:
            self.spawn(p)
        # Every process imports at once, so on two cores the last may serve long after the first: one deadline
        # for them all, grown with their number (a scaled-out stack starts 27 processes side by side).
        deadline = time.monotonic() + 30 + 2 * len(self.processes)
        for p in self.processes:
            assert p.proc is not None and p.log is not None  # spawned above
            wait_for_port(p.port, max(deadline - time.monotonic(), 1), p.proc, p.name, p.log)
        self.wait_ready(30)
        self.supervise(self.restart_exited)

    def supervise(self, on: bool = True) -> None:
        """Turn supervision (`restart_exited`) on or off while the stack runs; off, no process is restarted after
        this returns."""
        self.restart_exited = on
        if on and self.supervisor is None:
            self.supervisor = Supervisor(self)
            self.supervisor.start()
        elif not on and self.supervisor is not None:
            self.supervisor.stop()
            self.supervisor = None

    def pool(self, name: str, module: str) -> list[Process]:
        """The stack's replicas of the process `name`: the first as `name` on the port the registry's settings name
        (a lone gateway's: http_port; several have the ingress there, each on its own), each other as `name-2`, ...
        with its own port."""
        port_env = "PORT" if name == registry.GATEWAY else registry.grpc_port_env(name)
        port = self.http_port if name == registry.GATEWAY and self.replicas == 1 else free_port()
        first = Process(name, module, port, registry.SECRETS[name],
                        env={port_env: str(port)} if name == registry.GATEWAY else {})
        pool = [first]
        for n in range(2, self.replicas + 1):
            port = free_port()
            pool.append(Process(f"{name}-{n}", module, port, first.secrets, env={port_env: str(port)}))
        return pool

    def spawn(self, p: Process) -> None:
        """Start `p` (again), its output appended to its log."""
        p.log = self.logs / f"{p.name}.log"
        with self.lock, open(p.log, "ab") as log:
            p.proc = subprocess.Popen([sys.executable, "-m", p.module], cwd=ROOT, env=self.process_env(p), stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
            p.stopped, p.started = False, time.monotonic()

    def add_gateway(self, name: str, env: dict[str, str] | None = None) -> Process:
        """Another gateway replica on its own port (for multi-replica behaviour, or settings of its own such as
        a lower rate limit); stopped with the stack."""
        return self.add_replica("gateway", name, env)

    def add_replica(self, of: str, name: str, env: dict[str, str] | None = None, *, host: str = "127.0.0.1",
                    port: int = 0) -> Process:
        """Another replica of the process `of` (the gateway, or a service or worker of core.registry) on a port of
        its own (or `port`), returned once it serves there; stopped with the stack. (A second process on the same
        port would fail to bind and exit.) A service or worker may listen on another loopback address, `host`
        (GRPC_HOST: 127.0.0.2, ...), as replicas behind one DNS name do, each on the same port."""
        port = port or free_port()
        port_env = "PORT" if of == "gateway" else registry.grpc_port_env(of)
        first = self.process(of)
        listen = {"GRPC_HOST": host} if host != "127.0.0.1" else {}
        p = Process(name, first.module, port, first.secrets, env={**(env or {}), **listen, port_env: str(port)})
        self.processes.append(p)
        self.spawn(p)
        assert p.proc is not None and p.log is not None
        wait_for_port(port, 30, p.proc, name, p.log, host)
        return p

    def restart_process(self, name: str) -> None:
        p = self.process(name)
        self.stop_process(p)
        self.spawn(p)

    def restart_postgres(self, down_seconds: float = 0.0) -> None:
        """Restart the embedded PostgreSQL (fast shutdown, then start on the same port), as an operator's restart or
        a failover does, while every process keeps running; returns once it accepts connections again."""
        if self.postgres is None:
            raise RuntimeError("this stack uses an external PostgreSQL (DATABASE_URL): restart it there")
        self.postgres.restart(down_seconds)

    def restart_nats(self, down_seconds: float = 0.0) -> None:
        """Restart the embedded NATS (stopped, down `down_seconds`, started again on the same port with the same
        JetStream store, so the streams and their messages survive) while every process keeps running; returns once it
        accepts connections again."""
        if self.nats is None:
            raise RuntimeError("this stack uses an external NATS (NATS_URL): restart it there")
        self.nats.restart(down_seconds)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send process `name` a signal (SIGKILL: it dies at once, as in an OOM kill or a node lost) without waiting;
        the stack does not count it stopped, so with supervision it is started again."""
        proc = self.process(name).proc
        assert proc is not None  # started
        proc.send_signal(sig)

    def pause(self, name: str, seconds: float) -> threading.Timer:
        """Freeze process `name` (SIGSTOP) for `seconds`, then let it go on (SIGCONT), as a long pause of a VM or of
        the garbage collector does; returns at once, with the timer that resumes it (join it to wait)."""
        proc = self.process(name).proc
        assert proc is not None  # started
        proc.send_signal(signal.SIGSTOP)
        resume = threading.Timer(seconds, proc.send_signal, (signal.SIGCONT,))  # this process: not one started since
        resume.daemon = True
        resume.start()
        return resume

    def wait_ready(self, timeout: float) -> None:
        """Until every running gateway is ready, its key cache listening (NATS ok) and its channels to every service
        connected, each service reaching its database and NATS, and the ingress (when there is one) forwarding to a
        ready gateway: what a test needs before its first request, more than readiness asks (gateway.readiness)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                waiting = self._gateways_waiting()
            except Exception as exc:  # noqa: BLE001 - not ready yet
                waiting = [str(exc)]
            if not waiting:
                return
            last = ", ".join(waiting)
            time.sleep(0.2)
        raise RuntimeError(f"stack not ready after {timeout:.0f}s ({last}); logs in {self.logs}")

    def _gateways_waiting(self) -> list[str]:
        """The stack's own gateways that run and are not yet ready with NATS ok and every service reached, its
        dependencies ok; and the ingress when it does not answer 200."""
        waiting = []
        for p in self.pools.get(registry.GATEWAY, []):
            if p.proc is not None and p.proc.poll() is None:
                with urllib.request.urlopen(f"http://127.0.0.1:{p.port}/readyz?services", timeout=5) as r:
                    report = json.load(r)
                if not (report["ready"] and report["nats"] == "ok" and set(report["services"].values()) == {"ok"}):
                    waiting.append(f"{p.name}: {report}")
        if self.replicas > 1:  # the ingress, answering with a ready gateway's readiness
            try:
                urllib.request.urlopen(f"{self.base_url}/readyz", timeout=5).close()
            except OSError as exc:  # refused, or an answer other than 200 (HTTPError)
                waiting.append(f"{INGRESS}: {exc}")
        return waiting

    def process(self, name: str) -> Process:
        return next(p for p in self.processes if p.name == name)

    def stop_process(self, p: Process, timeout: float = 15) -> None:
        """Stop `p` (SIGTERM, then SIGKILL after `timeout`); supervision leaves it stopped until it is spawned again."""
        with self.lock:
            p.stopped = True
        stop_process(p.proc, signal.SIGTERM, timeout)

    def stop(self, timeout: float = 15) -> None:
        """Every process, in waves (each wave's side by side): the ingress and the gateways first, then the services
        and workers they call, then the simulators."""
        self.supervise(False)
        for p in self.processes:
            p.stopped = True
        gateways = [p for p in self.processes if p.module == "gateway" or p.name == INGRESS]
        services = [p for p in self.processes if p.module.startswith("services.")]
        for wave in (gateways, services, [p for p in self.processes if p not in gateways and p not in services]):
            stop_processes([p.proc for p in wave], signal.SIGTERM, timeout)
        if self.nats:
            self.nats.stop()
        if self.postgres:
            self.postgres.stop()
