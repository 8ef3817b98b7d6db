"""The benches' common record (bench.harness.report, one JSON line per headline) and bench.all's rows and table
of them; no stack."""
import json

from bench.all import render, rows_of
from bench.harness import RESULTS_ENV, judged, report

GATEWAY = {"bench": "bench.gateway", "path": "authenticated GET /api/v1/workspaces?id=", "figure": 1234.5,
           "unit": "req/s", "baseline": 2000.0, "ratio": 0.61725, "goal": ">= 0.6 of bare", "verdict": "PASS",
           "p50_ms": 20.25, "p99_ms": 41.0, "per_round": [0.6, 0.62]}
DRY_RUN = {"bench": "bench.sdr", "path": "POST /api/sdr/run dryRun", "figure": 12.5, "unit": "s p50",
           "baseline": None, "ratio": None, "goal": "p50 < 10 s", "verdict": "BELOW GOAL"}


def test_report_appends_one_json_line_per_headline_to_the_file_the_variable_names(tmp_path, monkeypatch):
    results = tmp_path / "results.jsonl"
    results.write_text(json.dumps({"bench": "earlier"}) + "\n")
    monkeypatch.setenv(RESULTS_ENV, str(results))
    first = report("bench.gateway", "authenticated GET /api/v1/workspaces?id=", 1234.5, "req/s", 2000.0, 0.61725,
                   ">= 0.6 of bare", judged(True), p50_ms=20.25, p99_ms=41.0, per_round=[0.6, 0.62])
    second = report("bench.sdr", "POST /api/sdr/run dryRun", 12.5, "s p50", None, None, "p50 < 10 s", judged(False))
    assert (first, second) == (GATEWAY, DRY_RUN)  # the optional fields only when given
    assert [json.loads(line) for line in results.read_text().splitlines()] == [{"bench": "earlier"}, GATEWAY, DRY_RUN]


def test_report_writes_nothing_without_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert report("bench.sdr", "POST /api/sdr/run dryRun", 12.5, "s p50", None, None, "p50 < 10 s",
                  judged(False)) == DRY_RUN
    assert list(tmp_path.iterdir()) == []


def test_a_verdict_is_invalid_before_it_is_met_or_not():
    assert [judged(True), judged(False), judged(None)] == ["PASS", "BELOW GOAL", "NO GOAL"]
    assert {judged(met, valid=False) for met in (True, False, None)} == {"INVALID"}


def test_a_bench_that_fails_keeps_its_rows_marked_or_gets_one_failed_row():
    assert rows_of("bench.gateway", [GATEWAY], 0) == [{**GATEWAY, "exit": 0}]
    assert rows_of("bench.sdr", [GATEWAY, DRY_RUN], 1) == [
        {**GATEWAY, "verdict": "INVALID (exit 1)", "exit": 1}, {**DRY_RUN, "verdict": "INVALID (exit 1)", "exit": 1}]
    failed = {"bench": "bench.calls", "path": None, "figure": None, "unit": "", "baseline": None, "ratio": None,
              "goal": None, "exit": 2, "verdict": "FAILED (exit 2)"}
    assert rows_of("bench.calls", [], 2) == [failed]
    assert rows_of("bench.calls", [], None) == [{**failed, "exit": None, "verdict": "FAILED (timed out)"}]
    assert rows_of("bench.calls", [], 0) == [{**failed, "exit": 0, "verdict": "FAILED (no record)"}]


def test_the_table_gives_each_row_its_figures_goal_and_verdict_under_the_date_and_machine():
    result = {"date": "2026-11-25T03:00:00+00:00", "quick": False,
              "machine": {"cpus": 2, "platform": "Linux-x86_64", "python": "3.11.7"},
              "rows": [*rows_of("bench.gateway", [GATEWAY], 0), *rows_of("bench.sdr", [DRY_RUN], 0),
                       *rows_of("bench.calls", [], 1)]}
    assert render(result).splitlines() == [
        "2026-11-25T03:00:00+00:00, 2 CPUs, Linux-x86_64, Python 3.11.7",
        "",
        "| bench         | path                                     | figure      | baseline    | ratio | p50/p99 ms  "
        "| goal           | verdict         |",
        "| ------------- | ---------------------------------------- | ----------- | ----------- | ----- | ----------- "
        "| -------------- | --------------- |",
        "| bench.gateway | authenticated GET /api/v1/workspaces?id= | 1,234 req/s | 2,000 req/s | 0.62  | 20.2 / 41.0 "
        "| >= 0.6 of bare | PASS            |",
        "| bench.sdr     | POST /api/sdr/run dryRun                 | 12.5 s p50  | -           | -     | -           "
        "| p50 < 10 s     | BELOW GOAL      |",
        "| bench.calls   | -                                        | -           | -           | -     | -           "
        "| -              | FAILED (exit 1) |",
    ]
    assert render({**result, "quick": True}).splitlines()[0].endswith("Python 3.11.7 (--quick: a smoke run)")
