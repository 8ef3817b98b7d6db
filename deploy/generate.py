"""`python -m deploy.generate`: write the deployment files that follow from core.registry.

- `deploy/k8s/base/services.generated.yaml`: a Deployment (native gRPC probes: readiness "" checks PostgreSQL
  and NATS, liveness "liveness" only the process; of the Secret `switchboard-secrets`, only the keys the process
  reads, core.registry.SECRETS) and a Service for every service, a Deployment for every worker, and the ConfigMap
  `switchboard-services` with every service's address;
- the process list and the exposed ports of `deploy/Dockerfile` (between its "generated" markers).

`--check` writes nothing and fails when a file differs (the test suite runs it, so the files cannot drift).
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from core import registry

DEPLOY = Path(__file__).resolve().parent
MANIFESTS = DEPLOY / "k8s" / "base" / "services.generated.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
BEGIN = "# --- processes: generated from core.registry by `python -m deploy.generate` ---\n"
END = "# --- end of generated processes ---\n"
HEADER = "# Generated from core.registry by `python -m deploy.generate`; edit the registry, not this file.\n"
ADDRESSES = "switchboard-services"
SECRET = "switchboard-secrets"
# Every long-running process connects to NATS, whose URL may carry its credentials: it is a key of the Secret too.
# The public keys of the caller context (core.caller) are beside them: every process verifies with the same list.
SHARED_SECRET_KEYS = ("NATS_URL", "CALLER_VERIFY_KEYS")


def secret_key(variable: str, process: str) -> str:
    """The Secret's key that holds `variable` for `process`: its own, for a key only it may hold (the one that
    signs its caller context: CALLER_SIGNING_KEY_<PROCESS>)."""
    return f"{variable}_{registry.env_prefix(process)}" if variable == registry.CALLER_SIGNING_KEY else variable


def _labels(name: str) -> dict:
    return {"app.kubernetes.io/name": name}


def secret_env(process: str) -> list[dict]:
    """The keys of the Secret that `process` is given, one secretKeyRef each (gateway.yaml lists the gateway's)."""
    return [{"name": key, "valueFrom": {"secretKeyRef": {"name": SECRET, "key": secret_key(key, process)}}}
            for key in (*SHARED_SECRET_KEYS, *registry.SECRETS[process])]


def _deployment(name: str, module: str, port: int, port_env: str, replicas: int) -> dict:
    probe = {"grpc": {"port": port}, "periodSeconds": 5, "failureThreshold": 3}
    liveness = {"grpc": {"port": port, "service": "liveness"}, "initialDelaySeconds": 10, "periodSeconds": 10,
                "failureThreshold": 3}
    container = {
        "name": name, "image": "switchboard:latest", "command": ["python", "-m", module],
        "env": [{"name": port_env, "value": str(port)}, *secret_env(name)],
        "envFrom": [{"configMapRef": {"name": "switchboard-config"}}, {"configMapRef": {"name": ADDRESSES}}],
        "ports": [{"name": "grpc", "containerPort": port}],
        "readinessProbe": probe, "livenessProbe": liveness,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": _labels(name)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": _labels(name)}, "template": {
            "metadata": {"labels": _labels(name)},
            "spec": {"terminationGracePeriodSeconds": 30,
                     "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                     "containers": [container]}}},
    }


def _service(s: registry.Service) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": s.name, "labels": _labels(s.name)},
            "spec": {"selector": _labels(s.name), "ports": [
                {"name": "grpc", "port": s.port, "targetPort": "grpc", "appProtocol": "grpc"}]}}


def manifests() -> str:
    docs: list[dict] = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ADDRESSES},
                         "data": {s.addr_env: f"{s.name}:{s.port}" for s in registry.SERVICES}}]
    for s in registry.SERVICES:
        docs += [_deployment(s.name, s.module, s.port, s.port_env, s.replicas), _service(s)]
        docs += [_deployment(w.name, w.module, w.port, w.port_env, w.replicas) for w in s.workers]
    return HEADER + yaml.safe_dump_all(docs, sort_keys=False, width=120)


def dockerfile(current: str) -> str:
    rows = [("gateway", "HTTP on $PORT (default 8080)")]
    for s in registry.SERVICES:
        rows.append((s.module, f"gRPC on ${s.port_env} (default {s.port}): {s.summary}"))
        rows += [(w.module, f"health on ${w.port_env} (default {w.port}): {w.summary}") for w in s.workers]
    rows.append(("core.migrate", "run all database migrations, then exit"))
    width = max(len(module) for module, _ in rows)
    lines = [f"#   python -m {module:<{width}}  {what}\n" for module, what in rows]
    ports = " ".join(str(p.port) for p in (*registry.SERVICES, *registry.WORKERS))
    block = BEGIN + "".join(lines) + f"EXPOSE 8080 {ports}\n" + END
    head, rest = current.split(BEGIN, 1)
    return head + block + rest.split(END, 1)[1]


def outputs() -> dict[Path, str]:
    return {MANIFESTS: manifests(), DOCKERFILE: dockerfile(DOCKERFILE.read_text())}


def main(argv: list[str]) -> int:
    stale = [path for path, text in outputs().items() if not path.exists() or path.read_text() != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path} is out of date with core.registry: run python -m deploy.generate", file=sys.stderr)
        return 1 if stale else 0
    for path, text in outputs().items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
