"""`python -m deploy.generate`: write the deployment files that follow from core.registry.

- `deploy/k8s/base/services.generated.yaml`: a Deployment (native gRPC probes: readiness "" that the process has
  started and is not shutting down, liveness "liveness" that it answers; the preStop hook and termination grace
  period of deploy.workloads.pod_spec; of the Secret `switchboard-secrets`, only the keys the process
  reads, core.registry.SECRETS; the shared hardening of deploy.workloads; for a process with a schema, the init
  container that waits for the migrations, core.schema_gate) with its ServiceAccount and
  PodDisruptionBudget for every service and worker, a HorizontalPodAutoscaler for a worker with `max_replicas`, a
  headless Service for every service, and the ConfigMap `switchboard-services` with every service's address (a
  `dns:///` target of that Service's name, which resolves to every ready pod);
- the process list and the exposed ports of `deploy/Dockerfile` (between its "generated" markers);
- `deploy/k8s/base/network-policies.generated.yaml`: default deny for the platform's pods, then one NetworkPolicy per
  process allowing exactly what core.registry.REACHES says it reaches (the services it calls on their gRPC ports,
  NATS, PostgreSQL, DNS, the OpenTelemetry Collector, the internet where declared) and, for a service, calls from
  the processes that call it; Prometheus in on the metrics port; the ingress controller and the CronJob
  sdr-runner-cron in to the gateway;
- `deploy/nats-auth-values.generated.yaml`: the NATS Helm chart's values with the server's users, one per process,
  each allowed only what core.registry.BUS declares (core.nats_auth.permissions), known by its public nkey read
  from the Secret `nats-nkeys` (`python -m core.nats_auth new-keys` makes the seeds and keys);
- the kustomize component `deploy/k8s/components/mtls` (mutual TLS between processes): a cert-manager Certificate per
  process (`certificates.generated.yaml`) and the patch of each Deployment that mounts its Secret, sets GRPC_TLS_*
  and moves the kubelet's probes to the plaintext health port (`deployments.generated.yaml`).

`--check` writes nothing and fails when a file differs (the test suite runs it, so the files cannot drift).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from core import db_roles, deadlines, nats_auth, registry, schema_gate, settings
from deploy import workloads

DEPLOY = Path(__file__).resolve().parent
MANIFESTS = DEPLOY / "k8s" / "base" / "services.generated.yaml"
DOCKERFILE = DEPLOY / "Dockerfile"
BEGIN = "# --- processes: generated from core.registry by `python -m deploy.generate` ---\n"
END = "# --- end of generated processes ---\n"
HEADER = "# Generated from core.registry by `python -m deploy.generate`; edit the registry, not this file.\n"
ADDRESSES = "switchboard-services"
SECRET = "switchboard-secrets"
# Every long-running process connects to NATS, whose URL may carry its credentials: it is a key of the Secret too.
# The public keys of the caller context (core.caller) are beside them: one list, of which each process keeps its
# callers' keys alone (core.caller.keyring_of).
SHARED_SECRET_KEYS = ("NATS_URL", "CALLER_VERIFY_KEYS")


# The secrets each process holds a value of its own of: its caller-context signing key and its NATS user's seed.
PER_PROCESS_SECRETS = (registry.CALLER_SIGNING_KEY, registry.NATS_SEED)


def secret_key(variable: str, process: str) -> str:
    """The Secret's key that holds `variable` for `process`: its own, for a key only it may hold (the one that
    signs its caller context, CALLER_SIGNING_KEY_<PROCESS>; its NATS user's seed, NATS_SEED_<PROCESS>), its
    PostgreSQL role's URL (DATABASE_URL_<ROLE>, shared by a service and its workers: core.db_roles, and
    DIRECT_DATABASE_URL_<ROLE> past the pooler); DATABASE_URL itself is the owner's, the migrations job's."""
    if variable in PER_PROCESS_SECRETS:
        return f"{variable}_{registry.env_prefix(process)}"
    if variable in ("DATABASE_URL", registry.DIRECT_DATABASE_URL) and (role := registry.database_role(process)):
        return db_roles.secret_key(role, variable)
    return variable


MTLS = DEPLOY / "k8s" / "components" / "mtls"
MTLS_CERTIFICATES = MTLS / "certificates.generated.yaml"
MTLS_PATCHES = MTLS / "deployments.generated.yaml"
# With mutual TLS on, each pod also serves the health check alone in plaintext on this port (GRPC_HEALTH_PORT): the
# kubelet's gRPC probes do not speak TLS. Each pod has its own, so one number serves every process.
HEALTH_PORT = 50050
TLS_DIR = "/var/run/switchboard/grpc-tls"
CA_ISSUER = "switchboard-grpc-ca"  # components/mtls/issuer.yaml


def _labels(name: str) -> dict[str, Any]:
    return workloads.labels(name)


def secret_env(process: str) -> list[dict[str, Any]]:
    """The keys of the Secret that `process` is given, one secretKeyRef each (gateway.yaml lists the gateway's)."""
    return [{"name": key, "valueFrom": {"secretKeyRef": {
                "name": SECRET, "key": secret_key(key, process),
                **({"optional": True} if key in settings.OPTIONAL_SECRETS else {})}}}
            for key in (*SHARED_SECRET_KEYS, *registry.SECRETS[process])]


def _deployment(p: registry.Service | registry.Worker) -> dict[str, Any]:
    """The process's Deployment (workloads.pod_spec); one scaled by a HorizontalPodAutoscaler leaves its replica
    count to it (a count here would be reset at every apply)."""
    probe = {"grpc": {"port": p.port}, "periodSeconds": 5, "failureThreshold": 3}
    liveness = {"grpc": {"port": p.port, "service": "liveness"}, "initialDelaySeconds": 10, "periodSeconds": 10,
                "failureThreshold": 3}
    container = {
        "name": p.name, "image": "switchboard:latest", "command": ["python", "-m", p.module],
        "env": [{"name": p.port_env, "value": str(p.port)},
                {"name": "METRICS_PORT", "value": str(workloads.METRICS_PORT)}, *secret_env(p.name)],
        "envFrom": [{"configMapRef": {"name": "switchboard-config"}}, {"configMapRef": {"name": ADDRESSES}}],
        "ports": [{"name": "grpc", "containerPort": p.port}],
        "readinessProbe": probe, "livenessProbe": liveness,
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
    }
    replicas = {} if _max_replicas(p) else {"replicas": p.replicas}
    gate = _schema_gate(p)
    rollout = {"strategy": workloads.ROLLOUT} if gate else {}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": p.name, "labels": _labels(p.name)},
        "spec": {**replicas, **rollout, "selector": {"matchLabels": _labels(p.name)}, "template": {
            "metadata": workloads.pod_metadata(p.name),
            "spec": workloads.pod_spec(p.name, container, drain_seconds(p), gate)}},
    }


# How long the init container waits for the migrations before it fails (and the kubelet starts it again).
SCHEMA_WAIT_SECONDS = 300


def _schema_gate(p: registry.Service | registry.Worker) -> tuple[dict[str, Any], ...]:
    """For a process with a schema, the init container that waits until the schema is at the image's head
    (core.schema_gate): the rollout's pods start once the migrations Job has run. It reads with the process's own
    DATABASE_URL (its role may SELECT the schema's alembic_version), the one key of the Secret it is given."""
    schema = schema_gate.schema_of(p.name)
    if schema is None:
        return ()
    return ({"name": "schema-gate", "image": "switchboard:latest",
             "command": ["python", "-m", "core.schema_gate", "--wait", str(SCHEMA_WAIT_SECONDS), schema],
             "env": [e for e in secret_env(p.name) if e["name"] == "DATABASE_URL"],
             "envFrom": [{"configMapRef": {"name": "switchboard-config"}}],
             "resources": {"requests": {"cpu": "50m", "memory": "96Mi"},
                           "limits": {"cpu": "500m", "memory": "256Mi"}}},)


def drain_seconds(p: registry.Service | registry.Worker) -> float:
    """How long the process's calls in flight may take once it stops taking new ones: a service's, the longest
    deadline of its rpcs (core.grpc_server.serve waits that long); a worker's, the longest of any rpc (what it is
    doing is waiting on one)."""
    if isinstance(p, registry.Service):
        return deadlines.longest(p)
    return max(deadlines.longest(s) for s in registry.SERVICES)


def _max_replicas(p: registry.Service | registry.Worker) -> int | None:
    return p.max_replicas if isinstance(p, registry.Worker) else None


def _process(p: registry.Service | registry.Worker) -> list[dict[str, Any]]:
    """Everything one process runs as: its ServiceAccount, Deployment, PodDisruptionBudget and, when it scales on
    CPU, its HorizontalPodAutoscaler."""
    docs = [workloads.service_account(p.name), _deployment(p), workloads.disruption_budget(p.name)]
    high = _max_replicas(p)
    return [*docs, workloads.autoscaler(p.name, p.replicas, high)] if high else docs


def _service(s: registry.Service) -> dict[str, Any]:
    """Headless (no cluster IP): the Service's name resolves to the address of every ready pod, so a client's
    round robin (core.rpc) spreads its calls over them all. Behind a cluster IP, kube-proxy would pick a pod per
    connection, and gRPC's one long-lived connection would send every call of a client to that one pod."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": s.name, "labels": _labels(s.name)},
            "spec": {"clusterIP": "None", "selector": _labels(s.name), "ports": [
                {"name": "grpc", "port": s.port, "targetPort": "grpc", "appProtocol": "grpc"}]}}


def address(s: registry.Service) -> str:
    """Where the other processes reach `s`: gRPC's DNS resolver on its Service's name (resolved again when a
    connection closes: core.settings, "Balancing gRPC"); the certificate of mutual TLS names that host."""
    return f"dns:///{s.name}:{s.port}"


def manifests() -> str:
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": ADDRESSES},
                         "data": {s.addr_env: address(s) for s in registry.SERVICES}}]
    for s in registry.SERVICES:
        docs += [*_process(s), _service(s)]
        for w in s.workers:
            docs += _process(w)
    return HEADER + yaml.safe_dump_all(docs, sort_keys=False, width=120)


NETWORK_POLICIES = DEPLOY / "k8s" / "base" / "network-policies.generated.yaml"
PART_OF = {"app.kubernetes.io/part-of": "switchboard"}  # every pod of the platform (base/kustomization.yaml)
GATEWAY_HTTP_PORT = 8080  # gateway.yaml
# Where the dependencies are, as deploy/k8s/README.md tells a user to install them: NATS from its Helm chart (pods
# labelled app.kubernetes.io/name=nats, in any namespace), PostgreSQL anywhere on its port (a managed instance's
# address is not known here: an overlay may narrow it to an ipBlock), the cluster's DNS.
NATS = {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "nats"}}}
NATS_PORT = 4222
POSTGRES_PORT = 5432
DNS = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
       "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
# The ingress-nginx controller (its Helm chart's and manifests' namespace and labels): the one way into the gateway
# from outside the namespace (base/gateway.yaml's Ingress); an overlay adds a policy for another controller.
INGRESS_CONTROLLER = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}},
                      "podSelector": {"matchLabels": {"app.kubernetes.io/name": "ingress-nginx"}}}
# Prometheus (the kube-prometheus-stack's and the Prometheus chart's pod label, any namespace) scrapes each process's
# metrics port; each process exports its traces to the OpenTelemetry Collector (the opentelemetry-collector chart's
# label, any namespace) over OTLP, gRPC or HTTP, when OTEL_EXPORTER_OTLP_ENDPOINT is set (base/configmap.yaml).
PROMETHEUS = {"namespaceSelector": {}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}
OTEL_COLLECTOR = {"namespaceSelector": {},
                  "podSelector": {"matchLabels": {"app.kubernetes.io/name": "opentelemetry-collector"}}}
OTLP_PORTS = (4317, 4318)
# The internet: any public address, the private, link-local (cloud metadata) and shared ranges excepted, as
# core.outbound refuses them for what a user names (a webhook URL): a partner's webhook may be on any port.
INTERNET = [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
                                                           "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"]}},
            {"ipBlock": {"cidr": "::/0", "except": ["fc00::/7", "fe80::/10", "::1/128"]}}]


def _tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def _policy(name: str, selector: dict[str, Any], ingress: list[dict[str, Any]], egress: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": name},
            "spec": {"podSelector": {"matchLabels": selector}, "policyTypes": ["Ingress", "Egress"],
                     "ingress": ingress, "egress": egress}}


DNS_RULE = {"to": [DNS], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}
METRICS_RULE = {"from": [PROMETHEUS], "ports": _tcp(workloads.METRICS_PORT)}


def _egress(reach: registry.Reach) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = [DNS_RULE, {"to": [NATS], "ports": _tcp(NATS_PORT)}, {"to": [OTEL_COLLECTOR], "ports": _tcp(*OTLP_PORTS)}]
    if reach.database:
        rules.append({"ports": _tcp(POSTGRES_PORT)})
    for name in reach.services:
        rules.append({"to": [{"podSelector": {"matchLabels": _labels(name)}}],
                      "ports": _tcp(registry.service(name).port)})
    if reach.internet:
        rules.append({"to": INTERNET})
    return rules


def network_policies() -> str:
    """Default deny for every pod of the platform, then each process's own allowances. A pod may hold several
    policies: what any of them allows is allowed. The kubelet's probes come from the node, which a NetworkPolicy
    always lets through."""
    docs = [{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "default-deny"},
             "spec": {"podSelector": {"matchLabels": PART_OF}, "policyTypes": ["Ingress", "Egress"]}}]
    cron = {"podSelector": {"matchLabels": _labels(registry.SDR_RUNNER_CRON)}}
    docs.append(_policy(registry.GATEWAY, _labels(registry.GATEWAY),
                        [{"from": [INGRESS_CONTROLLER, cron], "ports": _tcp(GATEWAY_HTTP_PORT)}, METRICS_RULE],
                        _egress(registry.REACHES[registry.GATEWAY])))
    for s in registry.SERVICES:
        callers = [{"podSelector": {"matchLabels": _labels(name)}} for name in registry.callers_of(s.name)]
        calls = [{"from": callers, "ports": _tcp(s.port)}] if callers else []
        docs.append(_policy(s.name, _labels(s.name), [*calls, METRICS_RULE], _egress(registry.REACHES[s.name])))
        docs += [_policy(w.name, _labels(w.name), [METRICS_RULE], _egress(registry.REACHES[w.name]))
                 for w in s.workers]
    for job in ("migrate", registry.NATIONAL_DNC_IMPORT):  # the database alone (and DNS, NATS, the collector)
        docs.append(_policy(job, _labels(job), [], _egress(registry.Reach((), internet=False))))
    # The CronJob calling POST /api/sdr/runner (base/sdr-runner-cronjob.yaml) reaches the gateway alone.
    docs.append(_policy(registry.SDR_RUNNER_CRON, _labels(registry.SDR_RUNNER_CRON), [],
                        [DNS_RULE, {"to": [{"podSelector": {"matchLabels": _labels(registry.GATEWAY)}}],
                                    "ports": _tcp(GATEWAY_HTTP_PORT)}]))
    return HEADER + yaml.safe_dump_all(docs, sort_keys=False, width=120)


def _tls_secret(name: str) -> str:
    return f"{name}-grpc-tls"


def _certificate(name: str) -> dict[str, Any]:
    """The process's certificate, named after its Service (the host of its address, `dns:///accounts:50051`), for serving
    and for presenting as a client."""
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": f"{name}-grpc"},
            "spec": {"secretName": _tls_secret(name), "issuerRef": {"name": CA_ISSUER, "kind": "Issuer"},
                     "dnsNames": [name], "usages": ["server auth", "client auth", "digital signature"],
                     "duration": "2160h", "renewBefore": "720h",
                     "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"}}}


def _tls_patch(name: str, *, serves: bool) -> dict[str, Any]:
    """Mount the process's certificate Secret and set GRPC_TLS_* (cert-manager's key names); a process that serves
    gRPC also serves health in plaintext on HEALTH_PORT, where the kubelet's probes go. A process reads its
    certificate at start: the annotation lets Stakater Reloader roll the Deployment when cert-manager renews it."""
    env = [{"name": "GRPC_TLS_CERT", "value": f"{TLS_DIR}/tls.crt"}, {"name": "GRPC_TLS_KEY", "value": f"{TLS_DIR}/tls.key"},
           {"name": "GRPC_TLS_CA", "value": f"{TLS_DIR}/ca.crt"},
           {"name": "NATS_TLS_CA", "value": f"{TLS_DIR}/ca.crt"}]  # NATS's certificate is of the same CA
    container: dict[str, Any] = {"name": name, "env": env,
                       "volumeMounts": [{"name": "grpc-tls", "mountPath": TLS_DIR, "readOnly": True}]}
    if serves:
        env.append({"name": "GRPC_HEALTH_PORT", "value": str(HEALTH_PORT)})
        container.update(ports=[{"name": "health", "containerPort": HEALTH_PORT}],
                         readinessProbe={"grpc": {"port": HEALTH_PORT}}, livenessProbe={"grpc": {"port": HEALTH_PORT}})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "annotations": {"secret.reloader.stakater.com/reload": _tls_secret(name)}},
            "spec": {"template": {"spec": {"containers": [container], "volumes": [
                {"name": "grpc-tls", "secret": {"secretName": _tls_secret(name)}}]}}}}


NATS_SERVER_TLS = "nats-server-tls"  # deploy/nats-values.yaml: the NATS servers' certificate


def _nats_certificate() -> dict[str, Any]:
    """The NATS servers' certificate (the chart's Service `nats` in the platform's namespace), of the platform's CA,
    which every process trusts for NATS through NATS_TLS_CA."""
    return {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "nats-server"},
            "spec": {"secretName": NATS_SERVER_TLS, "issuerRef": {"name": CA_ISSUER, "kind": "Issuer"},
                     "dnsNames": ["nats", "*.nats-headless"], "usages": ["server auth", "digital signature"],
                     "duration": "2160h", "renewBefore": "720h",
                     "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"}}}


_PROCESSES: tuple[registry.Service | registry.Worker, ...] = (*registry.SERVICES, *registry.WORKERS)


def mtls() -> tuple[str, str]:
    """The component's certificates and Deployment patches: every process of the registry, and the gateway (a
    client only; its probes are HTTP); and the NATS servers' certificate."""
    processes = [p.name for p in _PROCESSES]
    certificates = [*(_certificate(name) for name in (*processes, "gateway")), _nats_certificate()]
    patches = [*(_tls_patch(name, serves=True) for name in processes), _tls_patch("gateway", serves=False)]
    return (HEADER + yaml.safe_dump_all(certificates, sort_keys=False, width=120),
            HEADER + yaml.safe_dump_all(patches, sort_keys=False, width=120))


def dockerfile(current: str) -> str:
    rows = [("gateway", "HTTP on $PORT (default 8080)")]
    for s in registry.SERVICES:
        rows.append((s.module, f"gRPC on ${s.port_env} (default {s.port}): {s.summary}"))
        rows += [(w.module, f"health on ${w.port_env} (default {w.port}): {w.summary}") for w in s.workers]
    rows.append(("core.migrate", "run all database migrations, then exit"))
    rows.append(("core.schema_gate", "wait until a schema is at this image's migrations (each Deployment's init "
                 "container)"))
    rows.append(("services.messaging.registry", "import the national do-not-call registry's files, then exit (the "
                 "CronJob national-dnc-import)"))
    rows.append(("deploy.sdr_runner_cron", "POST /api/sdr/runner once, then exit (the CronJob sdr-runner-cron)"))
    width = max(len(module) for module, _ in rows)
    lines = [f"#   python -m {module:<{width}}  {what}\n" for module, what in rows]
    ports = " ".join(str(p.port) for p in _PROCESSES)
    block = BEGIN + "".join(lines) + f"EXPOSE 8080 {ports}\n" + END
    head, rest = current.split(BEGIN, 1)
    return head + block + rest.split(END, 1)[1]


NATS_AUTH_VALUES = DEPLOY / "nats-auth-values.generated.yaml"
NATS_NKEYS_SECRET = "nats-nkeys"  # in NATS's namespace: NKEY_<PROCESS>, each process's public key


def nats_auth_values() -> str:
    """Values for the NATS Helm chart (beside nats-values.yaml): the users of core.nats_auth, each one's public key
    the variable NKEY_<PROCESS> that the server reads from its environment, set from the Secret nats-nkeys. A
    `<< ... >>` value is written into the server's config unquoted (the chart's convention), where `$NKEY_...` names
    the environment variable."""
    variables = {identity: f"NKEY_{registry.env_prefix(identity)}" for identity in nats_auth.IDENTITIES}
    values = {
        "config": {"merge": {"authorization": {
            "users": nats_auth.users({p: f"<< ${v} >>" for p, v in variables.items()})}}},
        "container": {"env": {v: {"valueFrom": {"secretKeyRef": {"name": NATS_NKEYS_SECRET, "key": v}}}
                              for v in variables.values()}},
    }
    return HEADER + yaml.safe_dump(values, sort_keys=False, width=120)


def outputs() -> dict[Path, str]:
    certificates, patches = mtls()
    return {MANIFESTS: manifests(), NETWORK_POLICIES: network_policies(), DOCKERFILE: dockerfile(DOCKERFILE.read_text()), MTLS_CERTIFICATES: certificates,
            MTLS_PATCHES: patches, NATS_AUTH_VALUES: nats_auth_values()}


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
