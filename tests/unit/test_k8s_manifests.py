"""The Kubernetes manifests as a cluster would receive them (every overlay rendered by `kubectl kustomize`, each with
the mTLS component): valid against the API schemas of a pinned Kubernetes version, and every workload held to
the project's rules (deploy/workloads.py). And the image those manifests run (deploy/Dockerfile), read without
docker."""
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from core import registry
from deploy import budget, generate, workloads
from gateway import serving
from gateway.route_table import all_routes

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSION = "1.33.0"  # the API the manifests are checked against (kubernetes-validate bundles its schemas)
# custom resources: no schema of Kubernetes' own (the mTLS, monitoring, database and external-secrets components, the
# HTTPRoute); their CRDs' own schemas check them (tests/unit/test_custom_resources.py)
CUSTOM_GROUPS = ("cert-manager.io/", "monitoring.coreos.com/", "postgresql.cnpg.io/", "external-secrets.io/",
                 "gateway.networking.k8s.io/")
RENDERS = ("production", "staging")
SCRAPE = {"prometheus.io/scrape": "true", "prometheus.io/port": str(workloads.METRICS_PORT),
          "prometheus.io/path": "/metrics"}

COLLECTOR = "opentelemetry-collector"  # production's (components/monitoring)

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed here")


class KubeLoader(yaml.SafeLoader):
    """YAML read as the API server reads it (go-yaml): an integer beyond 64 bits is a string, such as the ConfigMap's
    X402_ASSET address, which kustomize leaves unquoted."""


def _int_or_string(loader: KubeLoader, node: yaml.ScalarNode) -> int | str:
    value = loader.construct_yaml_int(node)
    return value if -(2 ** 63) <= value < 2 ** 64 else loader.construct_scalar(node)


KubeLoader.add_constructor("tag:yaml.org,2002:int", _int_or_string)


@cache
def rendered(name: str) -> tuple[dict, ...]:
    """An overlay as `kubectl kustomize` renders it."""
    out = subprocess.run(["kubectl", "kustomize", str(K8S / "overlays" / name)], capture_output=True, text=True,
                         check=True).stdout
    return tuple(yaml.load_all(out, KubeLoader))  # a SafeLoader


def of_kind(docs: tuple[dict, ...], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def pod_of(workload: dict) -> dict:
    """The pod template of a Deployment, Job or CronJob."""
    spec = workload["spec"]["jobTemplate"]["spec"] if workload["kind"] == "CronJob" else workload["spec"]
    return spec["template"]


def selects(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


@pytest.fixture(scope="module")
def schemas_read_once():
    """kubernetes-validate reads its schema files (1.4 MB of definitions) for every object it validates: read each
    once for the module (the same contents, so the same verdicts, in a fraction of the time)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kubernetes_validate.utils, "schema_contents", cache(kubernetes_validate.utils.schema_contents))
        yield


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_object_is_valid_against_the_kubernetes_api_schemas(render, schemas_read_once):
    """Strict: an unknown field (a typo, a field of another version) is an error, as `kubectl apply` would refuse
    it or, worse, drop it silently."""
    custom = []
    for doc in rendered(render):
        if doc["apiVersion"].startswith(CUSTOM_GROUPS):
            custom.append(doc["kind"])
            continue
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']}: {exc}")
    assert {"Certificate", "Issuer"} <= set(custom), custom  # mutual TLS is on in every overlay


def assert_hardened(workload: dict, docs: tuple[dict, ...]) -> None:
    """A pod of the platform: its own ServiceAccount with no token, non-root, seccomp, read-only root with /tmp
    writable, no escalation, no capability, requests and limits, an image tag the overlay set, and a NetworkPolicy
    of its own besides the default deny."""
    name = workload["metadata"]["name"]
    template = pod_of(workload)
    pod = template["spec"]
    account = of_kind(docs, "ServiceAccount").get(pod.get("serviceAccountName", "default"))
    assert account is not None and account["automountServiceAccountToken"] is False, name
    assert pod["automountServiceAccountToken"] is False, name
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for container in pod["containers"]:
        security = {**pod["securityContext"], **container["securityContext"]}
        assert security["runAsNonRoot"] is True and security["allowPrivilegeEscalation"] is False, name
        assert security["readOnlyRootFilesystem"] is True and security["capabilities"] == {"drop": ["ALL"]}, name
        tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == workloads.TMP)
        assert "emptyDir" in volumes[tmp["name"]], name
        for bound in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(container["resources"][bound]), (name, bound)
        image, _, tag = container["image"].rpartition(":")
        assert image and tag and tag != "latest", (name, container["image"])
    labels = template["metadata"]["labels"]
    policies = [p["spec"] for p in of_kind(docs, "NetworkPolicy").values() if selects(p["spec"]["podSelector"], labels)]
    assert any(not p.get("ingress") and not p.get("egress") for p in policies), f"{name}: not under the default deny"
    assert any(p["podSelector"]["matchLabels"] == workloads.labels(labels["app.kubernetes.io/name"])
               for p in policies), f"{name}: no NetworkPolicy of its own"


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_deployment_keeps_the_project_rules(render):
    docs = rendered(render)
    deployments = of_kind(docs, "Deployment")
    # and production's transaction pooler and OpenTelemetry Collector (their own rules: test_pgbouncer_is_hardened_alike,
    # test_monitoring.test_the_collector_is_hardened_alike_and_every_process_sends_it_its_spans)
    extra = {budget.PGBOUNCER, COLLECTOR} if render == "production" else set()
    assert set(deployments) == set(registry.PROCESSES) | extra
    for name in extra:
        deployments.pop(name)
    budgets = [d["spec"] for d in of_kind(docs, "PodDisruptionBudget").values()]
    scaled = {h["spec"]["scaleTargetRef"]["name"]: h["spec"] for h in of_kind(docs, "HorizontalPodAutoscaler").values()}
    for name, deployment in deployments.items():
        assert_hardened(deployment, docs)
        template = pod_of(deployment)
        labels, pod = template["metadata"]["labels"], template["spec"]
        (container,) = pod["containers"]
        assert container["readinessProbe"] and container["livenessProbe"], name
        assert sum(selects(b["selector"], labels) for b in budgets) == 1, f"{name}: no PodDisruptionBudget"
        assert {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": workloads.labels(name)}} in pod["topologySpreadConstraints"], name
        annotations = template["metadata"]["annotations"]
        assert {key: annotations.get(key) for key in SCRAPE} == SCRAPE, name
        assert {"name": "metrics", "containerPort": workloads.METRICS_PORT} in container["ports"], name
        if name in scaled:  # the autoscaler owns the count: one in the Deployment would be reset at every apply
            assert "replicas" not in deployment["spec"], name
            assert 2 <= scaled[name]["minReplicas"] < scaled[name]["maxReplicas"], name


def drain_of(process: str) -> float:
    """How long the process's requests in flight may take once it stops taking new ones."""
    if process == registry.GATEWAY:
        return serving.drain_seconds(all_routes())
    return generate.drain_seconds(registry.BY_NAME.get(process) or registry.worker(process))


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_deployment_stops_gracefully(render):
    """A preStop sleep (the pod leaves its endpoints while it still serves), then SIGTERM to a process told not to
    wait again, within a grace period that covers the sleep, the longest request in flight and the stop."""
    docs = rendered(render)
    assert of_kind(docs, "ConfigMap")["switchboard-config"]["data"]["SHUTDOWN_DELAY_SECONDS"] == "0"
    assert 5 <= workloads.PRESTOP_SECONDS <= 10
    for name, deployment in of_kind(docs, "Deployment").items():
        if name in (budget.PGBOUNCER, COLLECTOR):  # others' servers, with their own shutdown
            continue
        pod = pod_of(deployment)["spec"]
        (container,) = pod["containers"]
        assert container["lifecycle"]["preStop"] == {"exec": {"command": ["sleep", str(workloads.PRESTOP_SECONDS)]}}, name
        drain = drain_of(name)
        assert pod["terminationGracePeriodSeconds"] == workloads.grace_seconds(drain), name
        assert pod["terminationGracePeriodSeconds"] >= workloads.PRESTOP_SECONDS + drain + workloads.STOP_SECONDS, name


@needs_kubectl
def test_pgbouncer_is_hardened_alike_and_reached_by_the_processes_that_use_the_database():
    """Production's PgBouncer: a pod hardened as the platform's (its image's user by number), probed on its port,
    spread, one PodDisruptionBudget, a NetworkPolicy letting in every process that connects and the registry's
    import, and not the gateway."""
    docs = rendered("production")
    deployment = of_kind(docs, "Deployment")[budget.PGBOUNCER]
    assert_hardened(deployment, docs)
    template = pod_of(deployment)
    (container,) = template["spec"]["containers"]
    assert container["readinessProbe"]["tcpSocket"] and container["livenessProbe"]["tcpSocket"]
    assert template["spec"]["securityContext"]["runAsUser"] != 0
    assert deployment["spec"]["replicas"] >= 2
    budgets = [b["spec"] for b in of_kind(docs, "PodDisruptionBudget").values()]
    assert sum(selects(b["selector"], template["metadata"]["labels"]) for b in budgets) == 1
    (rule,) = of_kind(docs, "NetworkPolicy")[budget.PGBOUNCER]["spec"]["ingress"]
    (peer,) = rule["from"]
    (excluded,) = peer["podSelector"]["matchExpressions"]
    assert excluded["operator"] == "NotIn" and peer["podSelector"]["matchLabels"] == generate.PART_OF
    assert {p for p in (*registry.PROCESSES, *registry.JOBS) if p not in excluded["values"]} == {
        p for p in (*registry.PROCESSES, *registry.JOBS) if p in registry.SECRETS and "DATABASE_URL" in
        registry.SECRETS[p]}
    assert of_kind(docs, "Service")[budget.PGBOUNCER]["spec"]["ports"] == [
        {"name": "postgres", "port": generate.POSTGRES_PORT, "targetPort": "postgres"}]


@needs_kubectl
def test_autoscalers_scale_the_gateway_and_the_workers_that_share_their_work():
    """Only a process whose replicas divide its work (core.registry: Worker.max_replicas) scales on CPU; the
    production overlay raises the gateway's floor."""
    for render, gateway_floor in (("staging", 2), ("production", 3)):
        autoscalers = of_kind(rendered(render), "HorizontalPodAutoscaler")
        assert set(autoscalers) == {registry.GATEWAY, *(w.name for w in registry.WORKERS if w.max_replicas)}
        assert autoscalers[registry.GATEWAY]["spec"]["minReplicas"] == gateway_floor
        for worker in (w for w in registry.WORKERS if w.max_replicas):
            spec = autoscalers[worker.name]["spec"]
            assert (spec["minReplicas"], spec["maxReplicas"]) == (worker.replicas, worker.max_replicas)
            assert spec["metrics"][0]["resource"]["name"] == "cpu"
    assert {w.name for w in registry.WORKERS if w.max_replicas} == {"runs-scheduler", "webhooks-dispatcher"}


def env_of(container: dict, docs: tuple[dict, ...]) -> dict[str, str]:
    """A container's environment as the kubelet sets it: its ConfigMaps' keys (envFrom), then its own `env`."""
    maps = of_kind(docs, "ConfigMap")
    env = {}
    for source in container.get("envFrom", []):
        env.update(maps[source["configMapRef"]["name"]]["data"])
    env.update({e["name"]: e["value"] for e in container.get("env", []) if "value" in e})
    return env


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_grpc_services_are_headless_and_their_clients_resolve_every_pod(render):
    """A client balances over a service's pods only when its Service's name resolves to each of them (headless)
    and its target is gRPC's DNS resolver on that name and the pods' port (core.rpc, core.settings "Balancing
    gRPC"): behind a cluster IP every call of a client would go to the one pod its connection reached. The
    gateway's HTTP Service keeps its cluster IP."""
    docs = rendered(render)
    services, deployments = of_kind(docs, "Service"), of_kind(docs, "Deployment")
    certificates = {c["spec"]["secretName"]: c["spec"].get("dnsNames", []) for c in docs if c["kind"] == "Certificate"}
    grpc_services = {name for name, s in services.items()
                     if any(port.get("appProtocol") == "grpc" for port in s["spec"]["ports"])}
    assert grpc_services == {s.name for s in registry.SERVICES}
    assert services[registry.GATEWAY]["spec"].get("clusterIP") != "None"
    for s in registry.SERVICES:
        spec = services[s.name]["spec"]
        assert spec.get("clusterIP") == "None", f"{s.name}: its Service has a cluster IP"
        (container,) = pod_of(deployments[s.name])["spec"]["containers"]
        assert selects({"matchLabels": spec["selector"]}, pod_of(deployments[s.name])["metadata"]["labels"]), s.name
        # headless: a client dials the pod's own port, the one its address names
        assert {"name": "grpc", "containerPort": s.port} in container["ports"], s.name
    for name, deployment in deployments.items():
        (container,) = pod_of(deployment)["spec"]["containers"]
        env = env_of(container, docs)
        # a pooler (PgBouncer) has no env
        tls = {e["name"]: e for e in container.get("env", ())}.get("GRPC_TLS_CERT")
        for s in registry.SERVICES:
            if registry.may_call(name, s.name):
                assert env.get(s.addr_env) == f"dns:///{s.name}:{s.port}", (name, s.addr_env, env.get(s.addr_env))
                if tls is not None:  # mutual TLS: the server's certificate names the host the client dials
                    assert s.name in certificates[f"{s.name}-grpc-tls"], s.name


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_job_and_cronjob_is_hardened_alike(render):
    docs = rendered(render)
    jobs = {**of_kind(docs, "Job"), **of_kind(docs, "CronJob")}
    assert set(jobs) == {"switchboard-migrate", registry.SDR_RUNNER_CRON, registry.NATIONAL_DNC_IMPORT}
    for job in jobs.values():
        assert_hardened(job, docs)
        assert pod_of(job)["spec"]["restartPolicy"] == "Never"
    for name in (registry.SDR_RUNNER_CRON, registry.NATIONAL_DNC_IMPORT):
        cron = jobs[name]["spec"]
        assert cron["concurrencyPolicy"] == "Forbid" and cron["timeZone"] == "Etc/UTC", name
    # the registry's import reads its folder from a read-only volume
    pod = pod_of(jobs[registry.NATIONAL_DNC_IMPORT])["spec"]
    (importer,) = pod["containers"]
    assert importer["command"] == ["python", "-m", "services.messaging.registry", "import", "/registry"]
    (files,) = [m for m in importer["volumeMounts"] if m["mountPath"] == "/registry"]
    assert files["readOnly"] is True
    assert {v["name"]: v for v in pod["volumes"]}[files["name"]]["persistentVolumeClaim"]["readOnly"] is True
    (container,) = pod_of(jobs[registry.SDR_RUNNER_CRON])["spec"]["containers"]
    assert container["command"] == ["python", "-m", "deploy.sdr_runner_cron"]
    assert {e["name"]: e.get("value") for e in container["env"]}["GATEWAY_URL"] == (
        f"http://{registry.GATEWAY}:{generate.GATEWAY_HTTP_PORT}")


def _allows(rules: list[dict], peer_key: str, peer: dict, port: int) -> bool:
    return any(any(p["port"] == port for p in rule["ports"]) and peer in rule[peer_key] for rule in rules)


@needs_kubectl
def test_the_network_policies_cover_the_entrance_metrics_traces_and_the_cronjob():
    """The ingress controller (and the CronJob) reach the gateway's HTTP port and nothing else does from outside;
    Prometheus reaches every process's metrics port; every pod reaches DNS and the processes the OTel collector."""
    policies = {name: p["spec"] for name, p in of_kind(rendered("production"), "NetworkPolicy").items()}
    cron = {"podSelector": {"matchLabels": workloads.labels(registry.SDR_RUNNER_CRON)}}
    gateway_in = policies[registry.GATEWAY]["ingress"]
    assert all("from" in rule for rule in gateway_in)  # no rule open to every source
    for peer in (generate.INGRESS_CONTROLLER, cron):
        assert _allows(gateway_in, "from", peer, generate.GATEWAY_HTTP_PORT)
    gateway = {"podSelector": {"matchLabels": workloads.labels(registry.GATEWAY)}}
    assert _allows(policies[registry.SDR_RUNNER_CRON]["egress"], "to", gateway, generate.GATEWAY_HTTP_PORT)
    for process in registry.PROCESSES:
        assert _allows(policies[process]["ingress"], "from", generate.PROMETHEUS, workloads.METRICS_PORT), process
        assert _allows(policies[process]["egress"], "to", generate.OTEL_COLLECTOR, 4317), process
    for name in (*registry.PROCESSES, *registry.JOBS):
        assert _allows(policies[name]["egress"], "to", generate.DNS, 53), name
    assert {"ports": [{"protocol": "TCP", "port": generate.POSTGRES_PORT}]} in policies[
        registry.NATIONAL_DNC_IMPORT]["egress"]


@needs_kubectl
def test_the_ingress_terminates_tls_and_sets_the_documented_limits():
    docs = rendered("production")
    (ingress,) = of_kind(docs, "Ingress").values()
    spec, annotations = ingress["spec"], ingress["metadata"]["annotations"]
    (rule,) = spec["rules"]
    assert spec["tls"] == [{"hosts": [rule["host"]], "secretName": "switchboard-tls"}]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    service = of_kind(docs, "Service")[backend["name"]]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    readme = (K8S / "README.md").read_text()
    for key in ("proxy-body-size", "proxy-read-timeout", "proxy-send-timeout"):
        assert f"nginx.ingress.kubernetes.io/{key}" in annotations and f"`nginx.ingress.kubernetes.io/{key}`" in readme
    assert of_kind(rendered("staging"), "Ingress")["gateway"]["spec"]["rules"][0]["host"] != rule["host"]


@needs_kubectl
def test_the_http_route_reaches_the_gateway_for_the_ingress_host():
    """The Gateway API route beside the Ingress: the overlay's host, the Gateway it names, the gateway's Service on
    its HTTP port, and a policy letting that Gateway's proxies (its namespace) in on that port."""
    for render in RENDERS:
        docs = rendered(render)
        (route,) = of_kind(docs, "HTTPRoute").values()
        (ingress,) = of_kind(docs, "Ingress").values()
        spec = route["spec"]
        assert spec["hostnames"] == [ingress["spec"]["rules"][0]["host"]], render
        (parent,) = spec["parentRefs"]
        assert parent["kind"] == "Gateway" and parent["name"] and parent["namespace"], render
        (rule,) = spec["rules"]
        (backend,) = rule["backendRefs"]
        service = of_kind(docs, "Service")[backend["name"]]
        assert backend["name"] == registry.GATEWAY
        assert backend["port"] == generate.GATEWAY_HTTP_PORT
        assert backend["port"] in {p["port"] for p in service["spec"]["ports"]}
        proxies = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": parent["namespace"]}}}
        assert any(_allows(p["spec"].get("ingress", []), "from", proxies, generate.GATEWAY_HTTP_PORT)
                   for p in of_kind(docs, "NetworkPolicy").values()
                   if p["spec"]["podSelector"] == {"matchLabels": workloads.labels(registry.GATEWAY)}), render


DIGEST = re.compile(r"[^@\s]+@sha256:[0-9a-f]{64}")


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_image_is_pinned_by_digest(render):
    """Every container a rendered overlay runs (init containers, Jobs', CronJobs', PgBouncer's, the collector's)
    and the database's image name a digest: what runs is what was tested, whatever a tag is moved to."""
    images = set()
    for workload in rendered(render):
        if workload["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"):
            pod = pod_of(workload)["spec"]
            images |= {c["image"] for c in (*pod.get("initContainers", ()), *pod["containers"])}
        elif workload["kind"] == "Cluster":
            images.add(workload["spec"]["imageName"])
    assert images and not [image for image in images if not DIGEST.fullmatch(image)], images
    names = {image.split("@")[0].rsplit(":", 1)[0] for image in images}
    assert "registry.example.com/switchboard" in names
    if render == "production":
        assert {"docker.io/edoburu/pgbouncer", "docker.io/otel/opentelemetry-collector-contrib"} <= names


def test_the_base_leaves_the_tag_to_the_overlays():
    """The base's `latest` is a placeholder: every overlay names its own tag (the rendered checks refuse latest)."""
    for overlay in (K8S / "overlays").iterdir():
        images = yaml.safe_load((overlay / "kustomization.yaml").read_text())["images"]
        assert [i["newTag"] for i in images if i["name"] == "switchboard"] != ["latest"], overlay.name
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", i["digest"]) for i in images), overlay.name


# deploy/Dockerfile, read as text: docker is not needed to check what it does.
def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", generate.DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_the_image_is_pinned_runs_as_non_root_and_installs_the_lock_alone():
    instructions = dockerfile_instructions()
    (base,) = [args for op, args in instructions if op == "FROM"]
    assert re.fullmatch(r"\S+:\S+@sha256:[0-9a-f]{64}", base), base
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root"), users
    installs = [args for op, args in instructions if op == "RUN" and "pip" in args]
    assert installs == ["pip install --require-hashes -r requirements.lock"], installs
    copied = [args.split() for op, args in instructions if op in ("COPY", "ADD")]
    assert not [c for c in copied if c[0].startswith("--from")]
    assert ["requirements.lock", "./"] in copied and not [c for c in copied if "pyproject.toml" in c or c[0] == "."]


@needs_kubectl
def test_the_image_holds_every_module_the_manifests_start():
    """Each `python -m <module>` of a rendered container (every registry process, the migrations Job, the CronJob)
    is in a folder the Dockerfile copies, and exists there."""
    copied = {source.rstrip("/") for op, args in dockerfile_instructions() if op == "COPY"
              for source, target in [args.split()] if source.rstrip("/") == target.rstrip("/")}  # into /app alike
    modules = {c["command"][2] for d in rendered("production") if d["kind"] in ("Deployment", "Job", "CronJob")
               for c in pod_of(d)["spec"]["containers"] if c["command"][0] == "python"}
    assert {p.module for p in (*registry.SERVICES, *registry.WORKERS)} | {"gateway", "core.migrate"} <= modules
    for module in modules:
        path = Path(*module.split("."))
        assert path.parts[0] in copied, module
        assert (ROOT / path).with_suffix(".py").exists() or (ROOT / path / "__main__.py").exists(), module
