"""`python -m deploy.dashboard`: write the Grafana dashboard of the monitoring component
(`deploy/k8s/components/monitoring/dashboard.generated.json`, loaded by Grafana's sidecar from the ConfigMap
`switchboard-dashboard`).

Written from the short description below rather than by hand: Grafana's JSON repeats each panel's layout, datasource
and legend. Its queries read the platform's metrics (core.metrics, README "Observability: metrics and logs") and the
recording rules of `rules.yaml`; tests/unit/test_monitoring.py checks every name they use exists. `--check` writes
nothing and fails when the file differs.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DASHBOARD = Path(__file__).resolve().parent / "k8s" / "components" / "monitoring" / "dashboard.generated.json"
NS = 'namespace="$namespace"'
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
WIDTH = 24

# Rows of panels: (title, [(panel title, kind, unit, [(expr, legend)])]). A "stat" panel shows its last value.
ROWS: list[tuple[str, list[tuple[str, str, str, list[tuple[str, str]]]]]] = [
    ("SLOs (objectives: 99.9% of requests without a 5xx, 99% within 1 s)", [
        ("Availability, last 3 days", "stat", "percentunit",
         [(f"1 - switchboard:api_errors:ratio_rate3d{{{NS}}}", "availability")]),
        ("Error budget burn rate, 1 h (1 = on budget)", "stat", "none",
         [(f"switchboard:api_errors:ratio_rate1h{{{NS}}} / 0.001", "burn rate")]),
        ("Within 1 s, last 3 days", "stat", "percentunit",
         [(f"1 - switchboard:api_slow:ratio_rate3d{{{NS}}}", "within 1 s")]),
        ("Latency budget burn rate, 1 h", "stat", "none",
         [(f"switchboard:api_slow:ratio_rate1h{{{NS}}} / 0.01", "burn rate")]),
        ("5xx ratio by window", "timeseries", "percentunit",
         [(f"switchboard:api_errors:ratio_rate5m{{{NS}}}", "5m"), (f"switchboard:api_errors:ratio_rate1h{{{NS}}}", "1h"),
          (f"switchboard:api_errors:ratio_rate6h{{{NS}}}", "6h")]),
        ("Slower than 1 s, by window", "timeseries", "percentunit",
         [(f"switchboard:api_slow:ratio_rate5m{{{NS}}}", "5m"), (f"switchboard:api_slow:ratio_rate1h{{{NS}}}", "1h"),
          (f"switchboard:api_slow:ratio_rate6h{{{NS}}}", "6h")]),
    ]),
    ("API requests", [
        ("Requests per route", "timeseries", "reqps",
         [(f"sum by (http_route, http_request_method) (switchboard:http_requests:rate5m{{{NS}}})",
           "{{http_request_method}} {{http_route}}")]),
        ("Responses by status code", "timeseries", "reqps",
         [(f"sum by (http_response_status_code) (switchboard:http_requests:rate5m{{{NS}}})",
           "{{http_response_status_code}}")]),
        ("5xx per route", "timeseries", "reqps",
         [(f'sum by (http_route) (switchboard:http_requests:rate5m{{{NS},http_response_status_code=~"5.."}})',
           "{{http_route}}")]),
        ("p99 latency per route", "timeseries", "s",
         [(f"switchboard:http_duration_seconds:p99_5m{{{NS}}}", "{{http_route}}")]),
        ("p50 latency per route", "timeseries", "s",
         [(f"histogram_quantile(0.5, sum by (http_route, le) "
           f"(rate(http_server_request_duration_seconds_bucket{{{NS}}}[5m])))", "{{http_route}}")]),
    ]),
    ("gRPC between processes", [
        ("Calls served per process", "timeseries", "reqps",
         [(f"sum by (process) (switchboard:rpc_requests:rate5m{{{NS}}})", "{{process}}")]),
        ("Calls not OK, by method and code", "timeseries", "reqps",
         [(f"sum by (rpc_service, rpc_method, rpc_grpc_status_code) "
           f'(switchboard:rpc_requests:rate5m{{{NS},rpc_grpc_status_code!="0"}})',
           "{{rpc_service}}/{{rpc_method}} {{rpc_grpc_status_code}}")]),
        ("p99 latency per method", "timeseries", "s",
         [(f"switchboard:rpc_duration_seconds:p99_5m{{{NS}}}", "{{rpc_service}}/{{rpc_method}}")]),
    ]),
    ("Events: outboxes, consumers, dead letters", [
        ("Outbox lag (oldest event not relayed)", "timeseries", "s",
         [(f"max by (outbox) (switchboard_outbox_lag_seconds{{{NS}}})", "{{outbox}}")]),
        ("Consumer messages waiting", "timeseries", "none",
         [(f"max by (stream, consumer, state) (switchboard_consumer_pending{{{NS}}})",
           "{{stream}}/{{consumer}} {{state}}")]),
        ("Dead letters (per 10 min)", "timeseries", "none",
         [(f"sum without (instance, pod, container, endpoint, job) "
           f"(increase(switchboard_dead_letters_total{{{NS}}}[10m]))", "{{process}}")]),
    ]),
    ("Webhooks", [
        ("Delivery attempts by outcome", "timeseries", "ops",
         [(f"sum by (status) (rate(switchboard_webhooks_attempts_total{{{NS}}}[5m]))", "{{status}}")]),
        ("Failed attempts ratio", "timeseries", "percentunit",
         [(f"sum(rate(switchboard_webhooks_failures_total{{{NS}}}[15m])) "
           f"/ sum(rate(switchboard_webhooks_attempts_total{{{NS}}}[15m]))", "failed")]),
        ("Delivery lag (creation to delivered)", "timeseries", "s",
         [(f"histogram_quantile(0.5, sum by (le) (rate(switchboard_webhooks_delivery_lag_seconds_bucket{{{NS}}}[5m])))",
           "p50"),
          (f"histogram_quantile(0.99, sum by (le) (rate(switchboard_webhooks_delivery_lag_seconds_bucket{{{NS}}}[5m])))",
           "p99")]),
    ]),
    ("Calls and providers", [
        ("Calls service RPCs", "timeseries", "reqps",
         [(f'sum by (rpc_service, rpc_method) (switchboard:rpc_requests:rate5m{{{NS},process="calls"}})',
           "{{rpc_service}}/{{rpc_method}}")]),
        ("Calls stuck without an outcome (the reaper cannot close them)", "timeseries", "none",
         [(f"max(switchboard_calls_stuck{{{NS}}})", "stuck")]),
        ("Provider requests p99", "timeseries", "s",
         [(f"histogram_quantile(0.99, sum by (provider, le) "
           f"(rate(switchboard_provider_duration_seconds_bucket{{{NS}}}[5m])))", "{{provider}}")]),
        ("Provider errors (5xx, 429, no answer)", "timeseries", "reqps",
         [(f"sum by (provider, outcome) (rate(switchboard_provider_errors_total{{{NS}}}[5m]))",
           "{{provider}} {{outcome}}")]),
        ("Runs scheduler lateness p99", "timeseries", "s",
         [(f"histogram_quantile(0.99, sum by (channel, le) "
           f"(rate(switchboard_runs_scheduler_lateness_seconds_bucket{{{NS}}}[5m])))", "{{channel}}")]),
    ]),
]


def panel(panel_id: int, title: str, kind: str, unit: str, queries: list[tuple[str, str]],
          grid: dict[str, int]) -> dict[str, Any]:
    return {"id": panel_id, "type": kind, "title": title, "datasource": DATASOURCE, "gridPos": grid,
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"]}} if kind == "stat" else {
                "legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
            "targets": [{"refId": chr(ord("A") + i), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
                        for i, (expr, legend) in enumerate(queries)]}


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y = 0
    for title, row in ROWS:
        panels.append({"id": len(panels) + 1, "type": "row", "title": title, "collapsed": False,
                       "gridPos": {"x": 0, "y": y, "w": WIDTH, "h": 1}, "panels": []})
        y += 1
        stats = [p for p in row if p[1] == "stat"]
        for i, (name, kind, unit, queries) in enumerate(stats):
            width = WIDTH // len(stats)
            panels.append(panel(len(panels) + 1, name, kind, unit, queries, {"x": i * width, "y": y, "w": width, "h": 4}))
        y += 4 if stats else 0
        for i, (name, kind, unit, queries) in enumerate(p for p in row if p[1] != "stat"):
            panels.append(panel(len(panels) + 1, name, kind, unit, queries,
                                {"x": (i % 2) * WIDTH // 2, "y": y + (i // 2) * 8, "w": WIDTH // 2, "h": 8}))
        y += 8 * ((len(row) - len(stats) + 1) // 2)
    return {
        "uid": "switchboard", "title": "Switchboard", "tags": ["switchboard"], "timezone": "utc",
        "schemaVersion": 39, "version": 1, "editable": False, "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus"},
            {"name": "namespace", "label": "Namespace", "type": "query", "datasource": DATASOURCE, "refresh": 2,
             "query": {"query": "label_values(http_server_request_duration_seconds_count, namespace)", "refId": "namespaces"},
             "definition": "label_values(http_server_request_duration_seconds_count, namespace)"},
        ]},
        "annotations": {"list": []},
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DASHBOARD.exists() or DASHBOARD.read_text() != text:
            print(f"{DASHBOARD} is out of date: run python -m deploy.dashboard", file=sys.stderr)
            return 1
        return 0
    DASHBOARD.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
