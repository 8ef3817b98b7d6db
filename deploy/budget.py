"""`python -m deploy.budget [OVERLAY]`: the PostgreSQL connection budget of a Kubernetes overlay as rendered.

What the platform may open at most, from the manifests and the settings alone (README, "Operations: database
connections"):

- the pools: each Deployment that connects (every process of core.registry but the gateway) at its most pods (its
  autoscaler's maximum, else its replicas) x its kind's pools (core.settings.Settings.database_pool, with the
  DATABASE_*POOL* variables its container or the ConfigMap sets);
- the sessions that go straight to PostgreSQL whatever the pooler: one LISTEN per pod of a service with an outbox
  (its relay), the national registry import (its advisory lock, one CronJob at a time), the migrations Job (the
  owner's, one connection at a time), and OPERATOR_SESSIONS for the people at psql;
- with PgBouncer in the overlay (its ConfigMap `pgbouncer-config`), the pools are its clients (at most
  max_client_conn each replica) and PostgreSQL sees its replicas x max_db_connections instead.

That total, with PostgreSQL's superuser_reserved_connections, must stay within the
max_connections the overlay states (MAX_CONNECTIONS; tests/unit/test_connection_budget.py holds every overlay to it).
"""
from __future__ import annotations

import configparser
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from core import registry
from core.settings import ProcessKind, Settings

K8S = Path(__file__).resolve().parent / "k8s"
# The max_connections each overlay's PostgreSQL is stated to have (README, "Operations: database connections"):
# production's is PostgreSQL's default, what a small managed instance allows, behind PgBouncer; staging has no
# pooler, so its PostgreSQL must allow every pool (set max_connections there, or add production's pgbouncer.yaml).
MAX_CONNECTIONS = {"production": 100, "staging": 300}
SUPERUSER_RESERVED = 3  # PostgreSQL's superuser_reserved_connections default: never the platform's
OPERATOR_SESSIONS = 5  # psql sessions, a role's password change (python -m core.db_roles), a backup's
POOL_VARIABLES = ("DATABASE_POOL_SIZE", "DATABASE_MAX_OVERFLOW", "DATABASE_RAW_POOL_SIZE")
PGBOUNCER = "pgbouncer"


@dataclass(frozen=True)
class Pooler:
    replicas: int
    max_client_conn: int
    max_db_connections: int


@dataclass(frozen=True)
class Budget:
    pools: dict[str, int]  # each process: its most pods x the connections each may hold
    listens: int  # the outbox relays' LISTEN connections
    jobs: int  # the registry import and the migrations Job
    pooler: Pooler | None

    @property
    def clients(self) -> int:
        return sum(self.pools.values())

    @property
    def postgres(self) -> int:
        """What PostgreSQL may be asked for at once, its reserved connections included."""
        pooled = self.pooler.replicas * self.pooler.max_db_connections if self.pooler else self.clients
        return pooled + self.listens + self.jobs + OPERATOR_SESSIONS + SUPERUSER_RESERVED

    def problems(self, max_connections: int) -> list[str]:
        found = []
        if self.postgres > max_connections:
            found.append(f"PostgreSQL: {self.postgres} connections may be opened, over max_connections "
                         f"{max_connections}")
        if self.pooler and self.clients > self.pooler.max_client_conn:
            found.append(f"PgBouncer: {self.clients} clients, over max_client_conn {self.pooler.max_client_conn} "
                         "(each replica must take them all, should every client land on it)")
        return found

    def lines(self, max_connections: int) -> list[str]:
        pooled = (f"{self.pooler.replicas} PgBouncer replicas x max_db_connections {self.pooler.max_db_connections}"
                  f" (clients {self.clients} <= max_client_conn {self.pooler.max_client_conn})"
                  if self.pooler else f"the pools, {self.clients}")
        return [*(f"  {name}: {most}" for name, most in self.pools.items()),
                f"pools: {self.clients}", f"PostgreSQL: {pooled} + {self.listens} LISTEN + {self.jobs} jobs + "
                f"{OPERATOR_SESSIONS} operators + {SUPERUSER_RESERVED} reserved = {self.postgres} "
                f"(max_connections {max_connections})"]


def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(["kubectl", "kustomize", str(K8S / "overlays" / overlay)], capture_output=True, text=True,
                         check=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def kind_of(process: str) -> ProcessKind:
    return "service" if process in registry.BY_NAME else "worker"


def _named(docs: Iterable[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _pool_env(deployment: dict[str, Any], configmaps: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The pool variables a Deployment's container is started with (its own env over its ConfigMaps')."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(configmaps.get(source.get("configMapRef", {}).get("name", ""), {}).get("data", {}))
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return {name: str(env[name]) for name in POOL_VARIABLES if env.get(name, "") != ""}


def _pooler(docs: list[dict[str, Any]]) -> Pooler | None:
    deployment = _named(docs, "Deployment").get(PGBOUNCER)
    if deployment is None:
        return None
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
    ini.read_string(_named(docs, "ConfigMap")["pgbouncer-config"]["data"]["pgbouncer.ini"])
    settings = ini["pgbouncer"]
    return Pooler(deployment["spec"]["replicas"], int(settings["max_client_conn"]), int(settings["max_db_connections"]))


def budget(docs: list[dict[str, Any]]) -> Budget:
    deployments = _named(docs, "Deployment")
    autoscalers = {h["spec"]["scaleTargetRef"]["name"]: h["spec"]
                   for h in _named(docs, "HorizontalPodAutoscaler").values()}
    configmaps = _named(docs, "ConfigMap")
    pods, pools = {}, {}
    for process in registry.PROCESSES:
        if not registry.REACHES[process].database:
            continue
        spec = deployments[process]["spec"]
        pods[process] = autoscalers[process]["maxReplicas"] if process in autoscalers else spec["replicas"]
        sizes = Settings.model_validate(_pool_env(deployments[process], configmaps)).database_pool(kind_of(process))
        pools[process] = pods[process] * sizes.most
    listens = sum(pods[s.name] for s in registry.SERVICES if s.outbox)
    jobs = sum(1 for d in docs if d["kind"] in ("Job", "CronJob") and d["metadata"]["name"] in (
        "switchboard-migrate", registry.NATIONAL_DNC_IMPORT))
    return Budget(pools, listens, jobs, _pooler(docs))


def main(argv: list[str]) -> int:
    overlay = argv[0] if argv else "production"
    found, most = budget(render(overlay)), MAX_CONNECTIONS[overlay]
    print("\n".join([f"{overlay}:", *found.lines(most), *found.problems(most)]))
    return 1 if found.problems(most) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
