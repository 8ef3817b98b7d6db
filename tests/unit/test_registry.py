"""The service registry agrees with the code and with every file derived from it."""
import importlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from core import migrations, registry, settings
from deploy import generate
from deploy import secrets as deploy_secrets

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("service", registry.SERVICES, ids=lambda s: s.name)
def test_each_registered_service_has_the_kit_shape(service):
    folder = ROOT / "services" / service.name
    assert (folder / "__main__.py").read_text().count(f'main("{service.name}")') == 1
    assert callable(importlib.import_module(f"{service.module}.servicer").build)
    schema = importlib.import_module(f"{service.module}.schema")
    assert hasattr(schema, "outbox") == service.outbox
    assert (folder / "migrations" / "env.py").exists() == service.schema
    assert service.descriptor().full_name == service.full_name
    for worker in service.workers:
        assert callable(importlib.import_module(worker.module).build)


# The roles of the kit's files: the servicer maps proto to use cases (no SQL), domain modules are rules
# without I/O, the tables are defined once in schema.py and SQL lives in store.py.
NO_IO = ("sqlalchemy", "asyncpg", "aiohttp", "grpc", "core.db", ".store", ".schema")


@pytest.mark.parametrize("service", registry.SERVICES, ids=lambda s: s.name)
def test_each_file_keeps_its_role(service):
    folder = ROOT / "services" / service.name
    assert all((folder / f"{role}.py").exists() for role in ("schema", "store"))
    # The use cases and rules in service.py and domain.py, or in the parts of a service cut into sub-packages
    # (services.accounts.ports), each with its own.
    parts = [p.parent for p in folder.glob("*/__init__.py")]
    assert parts or all((folder / f"{role}.py").exists() for role in ("service", "domain"))
    for servicer in [folder / "servicer.py", *(p / "servicer.py" for p in parts if (p / "servicer.py").exists())]:
        for sql in ("sqlalchemy", "engine.begin", "engine.connect", ".execute(", ".store import"):
            assert sql not in servicer.read_text(), f"{servicer.relative_to(folder.parent)}: {sql}"
    for domain in folder.rglob("*domain.py"):
        imports = [line for line in domain.read_text().splitlines() if line.startswith(("import ", "from "))]
        assert not [line for line in imports if any(part in line for part in NO_IO)], domain


def test_ports_are_distinct_and_settings_know_every_process(monkeypatch):
    processes = [*registry.SERVICES, *registry.WORKERS]
    assert len({p.port for p in processes}) == len(processes)
    monkeypatch.setenv("SDR_ADDR", "sdr.internal:7000")
    monkeypatch.setenv("WEBHOOKS_DISPATCHER_GRPC_PORT", "7001")
    cfg = settings.load()
    assert cfg.addresses["sdr"] == "sdr.internal:7000" and cfg.addresses["agents"] == "127.0.0.1:50052"
    assert cfg.grpc_ports["webhooks-dispatcher"] == 7001 and set(cfg.grpc_ports) == {p.name for p in processes}
    assert tuple(s.name for s in registry.SERVICES if s.schema) == migrations.SERVICES


def test_deploy_files_are_generated_from_the_registry():
    assert generate.main(["--check"]) == 0, "run python -m deploy.generate"
    docs = list(yaml.safe_load_all(generate.MANIFESTS.read_text()))
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    assert set(deployments) == {p.name for p in (*registry.SERVICES, *registry.WORKERS)}
    for service in registry.SERVICES:
        container = deployments[service.name]["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == ["python", "-m", service.module]
        assert container["readinessProbe"]["grpc"]["port"] == service.port
    addresses = next(d for d in docs if d["kind"] == "ConfigMap")["data"]
    assert addresses == {s.addr_env: f"dns:///{s.name}:{s.port}" for s in registry.SERVICES}  # every pod, resolved
    dockerfile = generate.DOCKERFILE.read_text()
    assert all(f"python -m {p.module}" in dockerfile for p in (*registry.SERVICES, *registry.WORKERS))


def _secret_keys(container: dict, process: str) -> set[str]:
    """The variables a container is given from the Secret (a whole Secret through envFrom is refused), each from
    its key: the variable's name, or the process's own key for what only it may hold."""
    assert not [source for source in container.get("envFrom", []) if "secretRef" in source], container["name"]
    refs = [(e["name"], e["valueFrom"]["secretKeyRef"]) for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})]
    assert all(ref["name"] == generate.SECRET for _, ref in refs)
    assert [ref["key"] for _, ref in refs] == [generate.secret_key(name, process) for name, _ in refs]
    return {name for name, _ in refs}


def test_each_manifest_gives_its_process_only_the_secrets_the_registry_declares():
    base = generate.MANIFESTS.parent
    docs = [d for path in (generate.MANIFESTS, base / "gateway.yaml", base / "migrate-job.yaml",
                           base / "sdr-runner-cronjob.yaml", base / "national-dnc-import-cronjob.yaml")
            for d in yaml.safe_load_all(path.read_text()) if d["kind"] in ("Deployment", "Job", "CronJob")]
    names = [d["metadata"]["labels"]["app.kubernetes.io/name"] for d in docs]
    pods = [(d["spec"]["jobTemplate"]["spec"] if d["kind"] == "CronJob" else d["spec"])["template"] for d in docs]
    given = {name: _secret_keys(pod["spec"]["containers"][0], name) for name, pod in zip(names, pods, strict=True)}
    shared = set(generate.SHARED_SECRET_KEYS)  # what the long-running processes share: not the Jobs
    assert given == {name: set(secrets) | (set() if name in registry.JOBS else shared)
                     for name, secrets in registry.SECRETS.items()}
    example = yaml.safe_load((base / "secret.example.yaml").read_text())
    assert example["metadata"]["name"] == generate.SECRET
    assert set(example["stringData"]) == {generate.secret_key(v, name) for name, vs in given.items() for v in vs}


def test_the_registry_declares_secret_settings_and_each_is_read_somewhere():
    declared = [v for secrets in registry.SECRETS.values() for v in secrets]
    assert set(declared) == set(settings.SECRET_FIELDS)
    assert all(len(set(secrets)) == len(secrets) for secrets in registry.SECRETS.values())
    assert set(registry.SECRETS) == {"gateway", "migrate", registry.SDR_RUNNER_CRON, registry.NATIONAL_DNC_IMPORT,
                                     *(p.name for p in (*registry.SERVICES, *registry.WORKERS))}


def test_the_readme_says_which_process_is_given_which_secret():
    """The table under "Secrets" in README.md: `VARIABLE` | what | the processes given it."""
    section = (ROOT / "README.md").read_text().split("\n### Secrets", 1)[1].split("\n#", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    table = {row[1].strip(" `"): set(re.findall(r"`([a-z-]+)`", row[3])) for row in rows}
    assert table == {variable: {name for name, secrets in registry.SECRETS.items() if variable in secrets}
                     for variable in settings.SECRET_FIELDS}


def test_deploy_secrets_prints_the_derived_secrets_of_the_server_secret(monkeypatch, capsys):
    monkeypatch.setenv("SWITCHBOARD_SECRET_KEY", "k1")
    assert deploy_secrets.main() == 0
    assert capsys.readouterr().out == "".join(f"{v}={value}\n" for v, value in settings.derived_secrets("k1").items())
    monkeypatch.setenv("SWITCHBOARD_SECRET_KEY", settings.DEV_SECRET)
    assert deploy_secrets.main() == 1 and "SWITCHBOARD_SECRET_KEY: must be set" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed here")
def test_every_overlay_builds_with_kustomize():
    for overlay in ("production", "staging"):
        out = subprocess.run(["kubectl", "kustomize", str(ROOT / "deploy" / "k8s" / "overlays" / overlay)],
                             capture_output=True, text=True, check=True).stdout
        names = {d["metadata"]["name"] for d in yaml.safe_load_all(out) if d["kind"] == "Deployment"}
        assert {p.name for p in (*registry.SERVICES, *registry.WORKERS)} <= names


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed here")
def test_the_mtls_component_gives_each_process_its_certificate(tmp_path):
    """An overlay with components/mtls: each process mounts a Certificate of its own, whose name is the host of
    its address, sets GRPC_TLS_* to its files, and is probed on the plaintext health port."""
    k8s = ROOT / "deploy" / "k8s"
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "namespace": "mtls",
        "resources": [os.path.relpath(k8s / "base", tmp_path)],
        "components": [os.path.relpath(generate.MTLS, tmp_path)]}))
    docs = list(yaml.safe_load_all(subprocess.run(["kubectl", "kustomize", str(tmp_path)], capture_output=True,
                                                  text=True, check=True).stdout))
    certificates = {d["spec"]["secretName"]: d["spec"] for d in docs if d["kind"] == "Certificate"}
    addresses = next(d for d in docs if d["metadata"]["name"] == generate.ADDRESSES)["data"]
    hosts = {s.name: addresses[s.addr_env].removeprefix("dns:///").split(":")[0] for s in registry.SERVICES}
    deployments = {d["metadata"]["name"]: d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"}
    for name in (*(p.name for p in (*registry.SERVICES, *registry.WORKERS)), "gateway"):
        pod = deployments[name]
        secret = next(v["secret"]["secretName"] for v in pod["volumes"] if v["name"] == "grpc-tls")
        assert certificates[secret]["issuerRef"]["name"] == generate.CA_ISSUER
        assert not {"server auth", "client auth"} - set(certificates[secret]["usages"])
        if name in hosts:
            assert hosts[name] in certificates[secret]["dnsNames"]
        container = pod["containers"][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        mount = next(m["mountPath"] for m in container["volumeMounts"] if m["name"] == "grpc-tls")
        assert {env[v] for v in ("GRPC_TLS_CERT", "GRPC_TLS_KEY", "GRPC_TLS_CA")} == {
            f"{mount}/tls.crt", f"{mount}/tls.key", f"{mount}/ca.crt"}
        if name != "gateway":  # the gateway's probes are HTTP
            assert env["GRPC_HEALTH_PORT"] == str(generate.HEALTH_PORT)
            assert container["readinessProbe"]["grpc"] == {"port": generate.HEALTH_PORT}
            assert container["livenessProbe"]["grpc"] == {"port": generate.HEALTH_PORT, "service": "liveness"}
    assert generate.HEALTH_PORT not in {p.port for p in (*registry.SERVICES, *registry.WORKERS)}
    assert {d["metadata"]["name"] for d in docs if d["kind"] == "Issuer"} >= {generate.CA_ISSUER}


def _selects(selector: dict, labels: dict) -> bool:
    expressions = {"In": lambda e: labels.get(e["key"]) in e["values"],
                   "NotIn": lambda e: labels.get(e["key"]) not in e["values"],
                   "Exists": lambda e: e["key"] in labels, "DoesNotExist": lambda e: e["key"] not in labels}
    return (all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())
            and all(expressions[e["operator"]](e) for e in selector.get("matchExpressions", [])))


def _lets_through(rules: list[dict], peer_key: str, labels: dict, port: int) -> bool:
    """Whether ingress or egress `rules` let a pod of the namespace with `labels` through on TCP `port`."""
    for rule in rules:
        peers, ports = rule.get(peer_key), rule.get("ports")
        if ports is not None and not any(p["port"] == port and p["protocol"] == "TCP" for p in ports):
            continue
        if peers is None or any("namespaceSelector" not in peer and "ipBlock" not in peer
                                and _selects(peer["podSelector"], labels) for peer in peers):
            return True
    return False


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed here")
def test_the_network_policies_let_each_process_reach_only_what_it_declares():
    """Read as the cluster reads them (the production overlay): process A reaches service B's gRPC port only when
    one of A's policies lets it out to B and one of B's lets A in, and that is so exactly when the registry says A
    calls B. Every pod of the platform is under the default deny."""
    out = subprocess.run(["kubectl", "kustomize", str(ROOT / "deploy" / "k8s" / "overlays" / "production")],
                         capture_output=True, text=True, check=True).stdout
    docs = list(yaml.safe_load_all(out))
    policies = [d["spec"] for d in docs if d["kind"] == "NetworkPolicy"]
    pods = {d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"] for d in docs
            if d["kind"] in ("Deployment", "Job")}
    # and the transaction pooler and the OpenTelemetry Collector
    assert set(pods) == {*registry.PROCESSES, "switchboard-migrate", "pgbouncer", "opentelemetry-collector"}
    assert any(p["podSelector"] == {"matchLabels": generate.PART_OF} and p["policyTypes"] == ["Ingress", "Egress"]
               and not p.get("ingress") and not p.get("egress") for p in policies)
    assert all(_selects({"matchLabels": generate.PART_OF}, labels) for labels in pods.values())

    def of(labels: dict) -> list[dict]:
        return [p for p in policies if _selects(p["podSelector"], labels)]

    for source in registry.PROCESSES:
        for target in registry.SERVICES:
            out_ok = any(_lets_through(p.get("egress", []), "to", pods[target.name], target.port)
                         for p in of(pods[source]))
            in_ok = any(_lets_through(p.get("ingress", []), "from", pods[source], target.port)
                        for p in of(pods[target.name]))
            assert (out_ok and in_ok) == (target.name in registry.REACHES[source].services), (source, target.name)
        # PgBouncer, on PostgreSQL's port, by the processes that use the database (the gateway uses none)
        pooled = (any(_lets_through(p.get("egress", []), "to", pods["pgbouncer"], generate.POSTGRES_PORT)
                      for p in of(pods[source]))
                  and any(_lets_through(p.get("ingress", []), "from", pods[source], generate.POSTGRES_PORT)
                          for p in of(pods["pgbouncer"])))
        assert pooled == registry.REACHES[source].database, source
    internet = {name for name, reach in registry.REACHES.items() if reach.internet}
    for name, labels in pods.items():
        reaches_out = any(peer.get("ipBlock", {}).get("cidr") == "0.0.0.0/0" for p in of(labels)
                          for rule in p.get("egress", []) for peer in rule.get("to", []))
        assert reaches_out == (name in internet), name


def test_a_process_gets_clients_of_the_services_it_declares_only():
    from core.grpc_server import Runtime

    assert registry.may_call("evals", "agents") and registry.may_call("sdr", "sdr")
    assert not registry.may_call("evals", "messaging") and not registry.may_call("unregistered", "agents")
    assert not registry.may_call("evals", "evals")  # a call to its own Service may reach another replica: declared
    runtime = Runtime.__new__(Runtime)
    runtime.name, runtime.kind = "evals-replica", "evals"
    with pytest.raises(LookupError, match="evals does not declare that it calls messaging"):
        runtime.client("messaging")


def test_a_workers_declared_rpcs_are_the_ones_its_code_makes():
    """The sdr workers call the other services through services/sdr/ports.py and core.standings alone: each RPC it makes is one they
    declare (else the callee would refuse it), and each declared RPC is a method of a service they call."""
    source = (ROOT / "services" / "sdr" / "ports.py").read_text()
    made = set(re.findall(r"self\.client\.([A-Z]\w+)\(", source))
    # and core.standings, which they use to ask accounts a business's standing before spending for it
    made |= set(re.findall(r"accounts\.([A-Z]\w+)\(", (ROOT / "core" / "standings.py").read_text()))
    for name in ("runs-scheduler", "sdr-runner"):
        worker = registry.worker(name)
        declared = {rpc.rpartition("/")[2] for rpc in worker.rpcs}
        assert made == declared, (name, made ^ declared)
        for rpc in worker.rpcs:
            service = next(s for s in registry.SERVICES if rpc.startswith(f"/{s.full_name}/"))
            assert service.name in worker.rpc_to and rpc.rpartition("/")[2] in service.descriptor().methods_by_name
