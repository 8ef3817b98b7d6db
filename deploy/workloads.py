"""The parts every pod of the platform shares in the Kubernetes manifests (deploy.generate writes them for every
service and worker; base/gateway.yaml, base/migrate-job.yaml and base/sdr-runner-cronjob.yaml spell out the same by
hand, and tests/unit/test_k8s_manifests.py holds every rendered pod to them):

- a ServiceAccount of its own whose token is not mounted (no process calls the Kubernetes API);
- a hardened pod: non-root, seccomp RuntimeDefault, a read-only root filesystem with a writable emptyDir on /tmp,
  no privilege escalation, every capability dropped;
- spread across nodes (topologySpreadConstraints on the hostname, ScheduleAnyway: a small cluster still schedules);
- a PodDisruptionBudget (one pod at a time may be evicted: a drain never takes a process away entirely), and for a
  process that scales on CPU a HorizontalPodAutoscaler;
- Prometheus scraping annotations for the `metrics` port (METRICS_PORT);
- a graceful stop (`stopping`): a preStop hook that sleeps PRESTOP_SECONDS, and a termination grace period that
  covers it, the process's drain and its stop.
"""
from __future__ import annotations

import math
from typing import Any

from core.grpc_server import STOP_SECONDS
from core.settings import Settings

METRICS_PORT = 9464  # each process's /metrics (env METRICS_PORT)
TMP = "/tmp"  # an emptyDir of the pod's own
CPU_TARGET_PERCENT = 70  # of the CPU request, on average over the pods
# Stopping a pod: the kubelet runs the preStop hook, a sleep of SHUTDOWN_DELAY_SECONDS' default (core.settings),
# while the terminating pod leaves its Services' endpoints and the Ingress's and still serves whatever reaches it;
# then it sends SIGTERM, and the process (whose delay the ConfigMap sets to 0: the hook has waited) refuses new
# requests and gives those in flight their deadline (its drain); then its components stop, within STOP_SECONDS
# (core.grpc_server holds them to it).
PRESTOP_SECONDS: int = math.ceil(Settings.model_fields["shutdown_delay_seconds"].default)


def labels(name: str) -> dict[str, Any]:
    return {"app.kubernetes.io/name": name}


def service_account(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "labels": labels(name)},
            "automountServiceAccountToken": False}


def disruption_budget(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "labels": labels(name)},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels(name)}}}


def autoscaler(name: str, low: int, high: int) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "labels": labels(name)},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "minReplicas": low, "maxReplicas": high,
                     "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                         "type": "Utilization", "averageUtilization": CPU_TARGET_PERCENT}}}]}}


def pod_metadata(name: str) -> dict[str, Any]:
    return {"labels": labels(name), "annotations": {
        "prometheus.io/scrape": "true", "prometheus.io/port": str(METRICS_PORT), "prometheus.io/path": "/metrics"}}


def container_security() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def prestop() -> dict[str, Any]:
    return {"preStop": {"exec": {"command": ["sleep", str(PRESTOP_SECONDS)]}}}


def grace_seconds(drain_seconds: float) -> int:
    """The pod's termination grace period: the preStop sleep, then the process's drain (the longest deadline of a
    request in flight) and its stop."""
    return PRESTOP_SECONDS + math.ceil(drain_seconds) + math.ceil(STOP_SECONDS)


def pod_spec(name: str, container: dict[str, Any], drain_seconds: float) -> dict[str, Any]:
    """A long-running process's pod: `container` gets the hardening, the /tmp mount, the metrics port and the
    preStop hook; the pod the grace period of a process whose drain takes `drain_seconds`."""
    container = {**container, "securityContext": container_security(),
                 "ports": [*container.get("ports", []), {"name": "metrics", "containerPort": METRICS_PORT}],
                 "volumeMounts": [{"name": "tmp", "mountPath": TMP}], "lifecycle": prestop()}
    return {"serviceAccountName": name, "automountServiceAccountToken": False,
            "terminationGracePeriodSeconds": grace_seconds(drain_seconds),
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                           "whenUnsatisfiable": "ScheduleAnyway",
                                           "labelSelector": {"matchLabels": labels(name)}}],
            "containers": [container], "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]}
