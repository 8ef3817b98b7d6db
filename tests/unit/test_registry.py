"""The service registry agrees with the code and with every file derived from it."""
import importlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from core import migrations, registry, settings
from deploy import generate

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("service", registry.SERVICES, ids=lambda s: s.name)
def test_each_registered_service_has_the_kit_shape(service):
    folder = ROOT / "services" / service.name
    assert (folder / "__main__.py").read_text().count(f'main("{service.name}")') == 1
    assert callable(importlib.import_module(f"{service.module}.servicer").build)
    store = importlib.import_module(f"{service.module}.store")
    assert hasattr(store, "outbox") == service.outbox
    assert (folder / "migrations" / "env.py").exists() == service.schema
    assert service.descriptor().full_name == service.full_name
    for worker in service.workers:
        assert callable(importlib.import_module(worker.module).build)


# The roles of the kit's files: the servicer maps proto to use cases (no SQL), domain modules are rules
# without I/O, and SQL lives in store.py.
NO_IO = ("sqlalchemy", "asyncpg", "aiohttp", "grpc", "core.db", ".store")


@pytest.mark.parametrize("service", registry.SERVICES, ids=lambda s: s.name)
def test_each_file_keeps_its_role(service):
    folder = ROOT / "services" / service.name
    assert (folder / "service.py").exists() and (folder / "domain.py").exists() and (folder / "store.py").exists()
    servicer = (folder / "servicer.py").read_text()
    for sql in ("sqlalchemy", "engine.begin", "engine.connect", ".execute(", ".store import"):
        assert sql not in servicer, f"{service.name}/servicer.py: {sql}"
    for domain in folder.glob("*domain.py"):
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
    assert addresses == {s.addr_env: f"{s.name}:{s.port}" for s in registry.SERVICES}
    dockerfile = generate.DOCKERFILE.read_text()
    assert all(f"python -m {p.module}" in dockerfile for p in (*registry.SERVICES, *registry.WORKERS))


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
    hosts = {s.name: addresses[s.addr_env].split(":")[0] for s in registry.SERVICES}
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
