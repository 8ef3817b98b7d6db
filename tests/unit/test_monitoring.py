"""The monitoring component (deploy/k8s/components/monitoring, in the production overlay) as rendered: the alerts and
recording rules read only metrics the processes expose (core.metrics, as Prometheus names them) or that a named
exporter does, with labels they carry; every alert has its runbook; the dashboard is up to date and reads the same
names; the PodMonitor scrapes every process; the OpenTelemetry Collector is hardened as the platform's pods and is
where every process sends its spans. (No PromQL parser is installed: names and labels are read off the
expressions; the CRDs' schemas check the resources' shape, tests/unit/test_custom_resources.py.)"""
from __future__ import annotations

import asyncio
import json
import re
import warnings
from functools import cache
from typing import Any
from unittest import mock

import grpc
import yaml
from aiohttp import web, web_app
from aiohttp.test_utils import TestClient, TestServer
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.instrumentation import aiohttp_server
from opentelemetry.instrumentation._semconv import _OpenTelemetrySemanticConventionStability, _StabilityMode
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from core import metrics, registry
from deploy import dashboard, workloads
from tests.unit.test_k8s_manifests import (
    COLLECTOR,
    ROOT,
    assert_hardened,
    needs_kubectl,
    of_kind,
    pod_of,
    rendered,
    selects,
)

RUNBOOKS = ROOT / "deploy" / "k8s" / "RUNBOOKS.md"
# Labels a series gets from its scrape (the PodMonitor's target and relabelling), not from the process.
TARGET_LABELS = {"namespace", "pod", "container", "endpoint", "job", "instance", "process", "service"}
# Metrics of other exporters the rules read: the names they document.
EXTERNAL = {
    "up": "Prometheus, per scrape target",
    "certmanager_certificate_expiration_timestamp_seconds": "cert-manager's controller",
    "certmanager_certificate_ready_status": "cert-manager's controller",
    "cnpg_pg_stat_archiver_failed_count": "CloudNativePG's instances (its default monitoring queries)",
    "cnpg_collector_last_available_backup_timestamp": "CloudNativePG's instance manager",
}
# The routes the latency SLO leaves out: they stream (a recording's audio) or work for long by design.
LATENCY_EXCLUDED = ("/api/v1/recordings/audio", "/api/sdr/runner", "/api/sdr/run")
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
            "inf", "nan"}


def gauges() -> dict[str, str]:
    """The observable gauges the processes make (`instruments.gauge(name, unit, ...)` in the code): name -> unit."""
    found = {}
    for folder in ("core", "services", "gateway"):
        for path in (ROOT / folder).rglob("*.py"):
            found.update(re.findall(r'\.gauge\(\s*"([\w.]+)",\s*"([^"]*)"', path.read_text()))
    return found


def served(scraped: CollectorRegistry) -> tuple[MeterProvider, metrics.Instruments]:
    """The platform's meter provider and instruments exported to `scraped` as a process serves them on
    METRICS_PORT (core.metrics.configure: the Prometheus reader, its views)."""
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=scraped)], views=metrics.views())
    return provider, metrics.Instruments(provider.get_meter("switchboard"))


# aiohttp-server's instrumentation's state: its instruments on the meter provider it was installed with.
INSTRUMENTATION_STATE = ("tracer", "meter_old", "meter_new", "duration_histogram_old", "duration_histogram_new",
                         "active_requests_counter", "_excluded_urls", "_sem_conv_opt_in_mode")


def gateway_answers(provider: MeterProvider, route: str, status: int) -> None:
    """One request the gateway answers `status` on `route`, timed by OpenTelemetry's aiohttp-server
    instrumentation (in the stable HTTP conventions the gateway opts in to: core.telemetry) installed on
    `provider` over aiohttp's own Application (another test may have installed it already), its global state and
    aiohttp's Application put back afterwards."""
    async def answer(request: web.Request) -> web.Response:
        return web.Response(status=status)

    async def request() -> None:
        app = web.Application()  # the instrumentation's subclass, as the gateway's is
        app.router.add_get(route, answer)
        async with TestClient(TestServer(app)) as client:
            assert (await client.get(route)).status == status

    kept = {name: getattr(aiohttp_server, name) for name in INSTRUMENTATION_STATE}
    with mock.patch.multiple(aiohttp_server, **kept), \
            mock.patch.object(aiohttp_server.metrics, "get_meter", provider.get_meter), \
            mock.patch.object(aiohttp_server.web, "Application", web_app.Application), \
            mock.patch.object(_OpenTelemetrySemanticConventionStability, "_get_opentelemetry_stability_opt_in_mode",
                              lambda signal: _StabilityMode.HTTP):
        with warnings.catch_warnings():  # aiohttp discourages the subclass of web.Application it makes
            warnings.simplefilter("ignore", DeprecationWarning)
            aiohttp_server.AioHttpServerInstrumentor()._instrument()
        asyncio.run(request())


async def no_probe() -> metrics.Sample:
    return []  # the sample is set by hand


@cache
def exposed() -> dict[str, set[str] | None]:
    """Every series name the processes expose, as Prometheus scrapes it (core.metrics' instruments through the same
    OpenTelemetry exporter the processes serve /metrics with), and its label names (None: unknown, a gauge's)."""
    scraped = CollectorRegistry()
    provider, instruments = served(scraped)
    for attribute, *_ in metrics.COUNTERS:
        getattr(instruments, attribute).add(1)
    for attribute, *_ in metrics.HISTOGRAMS:
        getattr(instruments, attribute).record(0.5)
    gateway_answers(provider, "/api/v1/agents", 503)
    instruments.rpc_server_done("switchboard.v1.Agents", "GetAgent", grpc.StatusCode.NOT_FOUND, 0.01)
    instruments.rpc_client_done("switchboard.v1.Agents", "GetAgent", grpc.StatusCode.OK, 0.01)
    instruments.webhook_attempt("failed", 1.0)
    instruments.provider_done("voice", "POST", "5xx", 0.1)
    instruments.scheduler_lateness.record(1.0, {"channel": "call"})
    made = set()
    for name, unit in gauges().items():
        sampler = metrics.Sampler(name, no_probe)
        sampler.last = [(1.0, {})]
        instruments.gauge(name, unit, name, sampler)
        made.add(name.replace(".", "_"))
    found: dict[str, set[str] | None] = {}
    for family in text_string_to_metric_families(generate_latest(scraped).decode()):
        gauge = any(family.name.startswith(m) for m in made)
        for sample in family.samples:
            labels = found.setdefault(sample.name, set())
            if gauge:
                found[sample.name] = None
            elif labels is not None:
                labels.update(sample.labels)
    return found


def docs() -> tuple[dict, ...]:
    return rendered("production")


def rule_groups() -> list[dict[str, Any]]:
    (rule,) = of_kind(docs(), "PrometheusRule").values()
    return rule["spec"]["groups"]


def rules() -> list[dict[str, Any]]:
    return [r for g in rule_groups() for r in g["rules"]]


def alerts() -> list[dict[str, Any]]:
    return [r for r in rules() if "alert" in r]


def recorded() -> dict[str, set[str]]:
    """Each recording rule's name and the labels it keeps (its outer `by (...)`, plus `le` when it keeps buckets)."""
    found = {}
    for rule in (r for r in rules() if "record" in r):
        by = re.search(r"\bby\s*\(([^)]*)\)", rule["expr"])
        found[rule["record"]] = {label.strip() for label in by.group(1).split(",")} if by else set()
    return found


def without_strings(expr: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def names_and_labels(expr: str) -> tuple[set[str], set[str]]:
    """The metric names an expression reads (identifiers not called as functions, not keywords) and the label names
    it matches on or groups by."""
    text = without_strings(expr)
    labels = set(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", " ".join(re.findall(r"\{([^}]*)\}", text))))
    for group in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text):
        labels.update(label.strip() for label in group.split(",") if label.strip())
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    text = re.sub(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b", " ", text)
    names = {m.group() for m in re.finditer(r"[a-zA-Z_:][\w:]*", text)
             if not text[m.end():].lstrip().startswith("(") and m.group() not in KEYWORDS}
    return names, labels


def unknown_in(expr: str) -> list[str]:
    """What an expression names that nothing exposes or records: metrics, then labels of the metrics it reads."""
    assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}"), expr
    assert expr.count("[") == expr.count("]"), expr
    names, labels = names_and_labels(expr)
    code, records = exposed(), recorded()
    unknown = sorted(n for n in names if n not in code and n not in records and n not in EXTERNAL)
    if names & set(EXTERNAL) or any(code.get(n, set()) is None for n in names):
        return unknown  # an exporter's or a gauge's labels are not known here
    known = set(TARGET_LABELS) | {"le"}
    for name in names:
        known |= code.get(name) or records.get(name) or set()
    return unknown + sorted(f"label {label}" for label in labels - known)


def test_the_metric_names_read_here_are_the_ones_the_processes_expose():
    """The reading of names and labels itself: what core.metrics gives Prometheus, in the README's names."""
    code = exposed()
    assert {"http_server_request_duration_seconds_count", "http_server_request_duration_seconds_bucket",
            "http_server_active_requests", "rpc_server_duration_seconds_count", "rpc_client_duration_seconds_bucket",
            "db_client_operation_duration_seconds_count", "switchboard_outbox_lag_seconds",
            "switchboard_consumer_pending", "switchboard_webhooks_failures_total", "switchboard_dead_letters_total",
            "switchboard_calls_stuck"} <= set(code)
    assert {"http_route", "http_request_method", "http_response_status_code"} <= (
        code["http_server_request_duration_seconds_count"] or set())
    assert {"rpc_system", "rpc_service", "rpc_method", "rpc_grpc_status_code"} <= (
        code["rpc_server_duration_seconds_count"] or set())
    assert not {name for name in code if name.startswith(("switchboard_http_", "switchboard_rpc_"))}
    assert names_and_labels('sum by (a) (rate(x_total{b="c,d"}[5m])) / on (e) y > 3 * 0.001') == ({"x_total", "y"},
                                                                                                  {"a", "b", "e"})
    assert unknown_in('rate(http_server_request_duration_seconds_count{http_rout="/"}[5m])') == ["label http_rout"]
    assert unknown_in("rate(switchboard_http_requests_total[5m])") == ["switchboard_http_requests_total"]
    assert unknown_in("increase(switchboard_dead_letter_total[10m])") == ["switchboard_dead_letter_total"]
    assert unknown_in("max(switchboard_calls_silent) > 0") == ["switchboard_calls_silent"]


def test_the_latency_sli_reads_a_bucket_the_gateway_exposes():
    """The SLO's threshold is a bucket boundary (1 s) of aiohttp-server's histogram as core.metrics' views make
    it, spelt as the exporter spells it, and the 5xx share reads the status code it records."""
    scraped = CollectorRegistry()
    provider, _ = served(scraped)
    gateway_answers(provider, "/api/v1/agents", 200)
    gateway_answers(provider, "/api/v1/agents", 502)
    assert 'http_server_request_duration_seconds_bucket{' in (text := generate_latest(scraped).decode())
    assert re.search(r'http_server_request_duration_seconds_bucket\{[^}]*le="1\.0"', text)
    assert re.search(r'http_server_request_duration_seconds_count\{[^}]*http_response_status_code="502"'
                     r'[^}]*\} 1\.0', text)
    for rule in (r for r in rules() if r.get("record", "").startswith("switchboard:api_errors:")):
        assert 'http_response_status_code=~"5.."' in rule["expr"], rule["record"]
    for rule in (r for r in rules() if r.get("record", "").startswith("switchboard:api_slow:")):
        assert 'le="1.0"' in rule["expr"]
        assert all(route in rule["expr"] for route in LATENCY_EXCLUDED), rule["record"]


@needs_kubectl
def test_every_rule_reads_only_metrics_and_labels_that_exist():
    read: set[str] = set()
    for rule in rules():
        name = rule.get("record") or rule.get("alert")
        names, _ = names_and_labels(rule["expr"])
        assert names, name  # a rule reads something, else nothing above is checked for it
        assert not unknown_in(rule["expr"]), (name, unknown_in(rule["expr"]))
        read |= names
    # no name passes by being listed somewhere: the platform's own counters and sampled gauges are read as exposed
    assert {"switchboard_dead_letters_total", "switchboard_calls_stuck", "switchboard_outbox_lag_seconds",
            "switchboard_consumer_pending"} <= read & set(exposed())


@needs_kubectl
def test_the_slo_alerts_burn_at_the_workbooks_rates_over_both_windows():
    """Multiwindow, multi-burn-rate: each fast alert pairs 1h with 5m at 14.4x and 6h with 30m at 6x; each slow
    one 1d with 2h at 3x and 3d with 6h at 1x; every window it reads is recorded."""
    by_name = {a["alert"]: a for a in alerts()}
    for sli, budget in (("api_errors", "0.001"), ("api_slow", "0.01")):
        kind = "Error" if sli == "api_errors" else "Latency"
        fast, slow = by_name[f"SwitchboardAPI{kind}BudgetBurn"], by_name[f"SwitchboardAPI{kind}BudgetBurnSlow"]
        for alert, pairs in ((fast, (("1h", "5m", "14.4"), ("6h", "30m", "6"))),
                             (slow, (("1d", "2h", "3"), ("3d", "6h", "")))):
            expr = " ".join(alert["expr"].split())
            for long, short, factor in pairs:
                threshold = f"({factor} * {budget})" if factor else budget
                assert (f"switchboard:{sli}:ratio_rate{long} > {threshold} and "
                        f"switchboard:{sli}:ratio_rate{short} > {threshold}") in expr, (alert["alert"], long)
        assert fast["labels"]["severity"] == "critical" and slow["labels"]["severity"] == "warning"


@needs_kubectl
def test_every_alert_has_a_severity_a_summary_and_its_runbook_section():
    """Each alert links its own section of RUNBOOKS.md (what it means, how to check, what to do), and every
    section is an alert's."""
    text = RUNBOOKS.read_text()
    sections = dict(re.findall(r"^## (Switchboard\w+)\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    named = set()
    for alert in alerts():
        name = alert["alert"]
        named.add(name)
        assert alert["labels"]["severity"] in ("critical", "warning"), name
        assert alert["annotations"]["summary"], name
        assert alert["annotations"]["runbook_url"].endswith(f"deploy/k8s/RUNBOOKS.md#{name.lower()}"), name
        assert name in sections, f"RUNBOOKS.md has no section {name}"
        for part in ("**What it means**", "**How to check**", "**What to do**"):
            assert part in sections[name], (name, part)
    assert set(sections) == named


@needs_kubectl
def test_the_dashboard_is_up_to_date_loaded_by_grafana_and_reads_only_what_exists():
    assert dashboard.DASHBOARD.read_text() == dashboard.render(), "run python -m deploy.dashboard"
    config = of_kind(docs(), "ConfigMap")["switchboard-dashboard"]
    assert config["metadata"]["labels"]["grafana_dashboard"] == "1"
    board = json.loads(config["data"]["switchboard.json"])
    assert board == json.loads(dashboard.render())
    panels = [p for p in board["panels"] if p["type"] != "row"]
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    for panel in panels:
        for target in panel["targets"]:
            assert not unknown_in(target["expr"].replace("$namespace", "x")), (panel["title"], target["expr"])
    titles = " ".join(p["title"] for p in board["panels"]).lower()
    for subject in ("availability", "latency", "route", "outbox", "consumer", "webhook", "calls"):
        assert subject in titles, subject


@needs_kubectl
def test_the_pod_monitor_scrapes_every_process_on_its_metrics_port():
    monitor = of_kind(docs(), "PodMonitor")["switchboard"]
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    deployments = of_kind(docs(), "Deployment")
    for name in (*registry.PROCESSES, COLLECTOR):
        template = pod_of(deployments[name])
        assert selects(monitor["spec"]["selector"], template["metadata"]["labels"]), name
        ports = {p["name"]: p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
        assert endpoint["port"] in ports, name
        if name != COLLECTOR:
            assert ports[endpoint["port"]] == workloads.METRICS_PORT, name
    assert {"sourceLabels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "targetLabel": "process"} in \
        endpoint["relabelings"]
    assert monitor["metadata"]["labels"]["release"] == of_kind(docs(), "PrometheusRule")["switchboard"][
        "metadata"]["labels"]["release"]


@needs_kubectl
def test_the_collector_is_hardened_alike_and_every_process_sends_it_its_spans():
    """Every process reads switchboard-config, which names the collector's Service on its OTLP/HTTP port; the
    collector takes them in (its NetworkPolicy), limits its memory before batching, and sends traces on."""
    all_docs = docs()
    deployment = of_kind(all_docs, "Deployment")[COLLECTOR]
    assert_hardened(deployment, all_docs)
    template = pod_of(deployment)
    (container,) = template["spec"]["containers"]
    assert container["readinessProbe"] and container["livenessProbe"]
    assert template["spec"]["securityContext"]["runAsUser"] != 0 and deployment["spec"]["replicas"] >= 2
    budgets = [b["spec"] for b in of_kind(all_docs, "PodDisruptionBudget").values()]
    assert sum(selects(b["selector"], template["metadata"]["labels"]) for b in budgets) == 1

    settings = of_kind(all_docs, "ConfigMap")["switchboard-config"]["data"]
    service = of_kind(all_docs, "Service")[COLLECTOR]
    http = next(p for p in service["spec"]["ports"] if p["name"] == "otlp-http")
    assert settings["OTEL_EXPORTER_OTLP_ENDPOINT"] == f"http://{COLLECTOR}:{http['port']}"
    assert settings["OTEL_METRICS_EXPORTER"] == "none"  # metrics stay on the scrape
    for name in registry.PROCESSES:
        (process,) = pod_of(of_kind(all_docs, "Deployment")[name])["spec"]["containers"]
        assert {"configMapRef": {"name": "switchboard-config"}} in process["envFrom"], name
    (policy_in, _) = of_kind(all_docs, "NetworkPolicy")[COLLECTOR]["spec"]["ingress"]
    assert {p["port"] for p in policy_in["ports"]} == {4317, 4318}
    assert policy_in["from"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/part-of": "switchboard"}}}]

    config_map = of_kind(all_docs, "ConfigMap")[COLLECTOR]["data"]
    config = yaml.safe_load(config_map["config.yaml"])
    (pipeline,) = config["service"]["pipelines"].values()
    assert pipeline["receivers"] == ["otlp"] and pipeline["processors"][0] == "memory_limiter"
    assert "batch" in pipeline["processors"]
    (exporter,) = pipeline["exporters"]
    assert config["exporters"][exporter]["endpoint"] == "${env:BACKEND_ENDPOINT}"
    backend = next(e for e in container["env"] if e["name"] == "BACKEND_ENDPOINT")
    assert backend["valueFrom"]["configMapKeyRef"]["key"] in config_map

