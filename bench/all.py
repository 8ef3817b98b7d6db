"""Every bench in sequence, and one table of their headlines.

Runs each bench (`python -m bench.<name>`) as a subprocess, one after the other, with its default arguments (or
lighter ones with --quick: a smoke run whose figures mean little), BENCH_RESULTS naming a fresh file for the
records it reports (bench.harness.report) and its output kept in bench/results/logs/<name>.log. A bench that fails
does not stop the others: its row says INVALID (it reported, then failed) or FAILED (no record) with its exit
status. Then it prints the table (Markdown) and writes it as JSON with the date (UTC) and the machine to
bench/results/latest.json (or --out). Exit status 1 if any bench failed.

Run: `make bench-all` (ARGS="--quick", "--only gateway,compliance", "--out PATH", "--timeout SECONDS").
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_ENV

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# Each bench, in the Makefile's order, with the lighter arguments of --quick.
BENCHES: dict[str, list[str]] = {
    "gateway": ["--seconds", "2", "--rounds", "1", "--warmup", "1"],
    "leads": ["--leads", "20000", "--requests", "20"],
    "webhooks": ["--events", "500", "--rate", "200", "--seconds", "3"],
    "slow_provider": ["--updates", "10", "--delay", "2", "--baseline-seconds", "2"],
    "calls": ["--calls", "50", "--concurrency", "10"],
    "messaging": ["--texts", "100", "--recipients", "10"],
    "signup": ["--signups", "50", "--x402", "5"],
    "analytics": ["--steps", "20000", "--requests", "5"],
    "compliance": ["--pairs", "10000", "--rounds", "1"],
    "registry": ["--numbers", "200000", "--pairs", "10000", "--rounds", "1"],
    "runs": ["--touches", "100", "--rate", "20", "--create", "500"],
    "sdr": ["--leads", "5000", "--requests", "5", "--dry-runs", "1"],
    "retention": ["--rows", "20000", "--kept", "2000"],
    "export_archive": ["--calls", "20000"],
}
COLUMNS = ("bench", "path", "figure", "baseline", "ratio", "p50/p99 ms", "goal", "verdict")


def run_bench(name: str, args: list[str], records: Path, log: Path, timeout: float) -> int | None:
    """Run one bench with its records going to `records` and its output to `log`; its exit status, or None if it
    ran over `timeout` seconds (then it is interrupted, so that it stops its stack)."""
    env = {**os.environ, RESULTS_ENV: str(records),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")])}
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", f"bench.{name}", *args], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)  # KeyboardInterrupt: the bench's `finally` stops its stack
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            return None


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def rows_of(bench: str, records: list[dict[str, Any]], status: int | None) -> list[dict[str, Any]]:
    """A bench's rows: its records as reported when it exited 0; INVALID with the exit status when it failed after
    reporting; one FAILED row when it reported nothing."""
    why = "timed out" if status is None else f"exit {status}" if status else "no record"
    if not records:
        return [{"bench": bench, "path": None, "figure": None, "unit": "", "baseline": None, "ratio": None,
                 "goal": None, "verdict": f"FAILED ({why})", "exit": status}]
    if status == 0:
        return [{**r, "exit": status} for r in records]
    return [{**r, "verdict": f"INVALID ({why})", "exit": status} for r in records]


def number(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 10 else f"{x:.2f}"


def cells(row: dict[str, Any]) -> list[str]:
    unit = f" {row['unit']}" if row.get("unit") else ""
    latency = "-" if row.get("p50_ms") is None and row.get("p99_ms") is None else \
        f"{number(row.get('p50_ms'))} / {number(row.get('p99_ms'))}"
    ratio = "-" if row.get("ratio") is None else f"{row['ratio']:.2f}"
    values = [row["bench"], row.get("path") or "-", number(row.get("figure")) + unit,
              "-" if row.get("baseline") is None else number(row["baseline"]) + unit, ratio, latency,
              row.get("goal") or "-", row["verdict"]]
    return [v.replace("|", "\\|") for v in values]


def render(result: dict[str, Any]) -> str:
    """The table of a run (as written to JSON), in Markdown, under a line saying when and where it ran."""
    machine = result["machine"]
    title = (f"{result['date']}, {machine['cpus']} CPUs, {machine['platform']}, Python {machine['python']}"
             + (" (--quick: a smoke run)" if result.get("quick") else ""))
    table = [list(COLUMNS), *(cells(row) for row in result["rows"])]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    return "\n".join([title, "", line(table[0]), line(["-" * w for w in widths]), *map(line, table[1:])])


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.all", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="lighter arguments for every bench (a smoke run)")
    parser.add_argument("--only", type=lambda s: s.split(","), default=list(BENCHES),
                        help=f"comma-separated benches to run (default all: {','.join(BENCHES)})")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="the JSON table's path")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one bench may take (default 3600)")
    args = parser.parse_args()
    if unknown := [name for name in args.only if name not in BENCHES]:
        parser.error(f"unknown benches: {', '.join(unknown)} (known: {', '.join(BENCHES)})")
    logs = RESULTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "quick": args.quick,
                    "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "python": platform.python_version()},
                    "runs": [], "rows": []}
    with tempfile.TemporaryDirectory(prefix="switchboard-bench-all-") as scratch:
        for n, name in enumerate(args.only, 1):
            bench_args, log, records = BENCHES[name] if args.quick else [], logs / f"{name}.log", \
                Path(scratch) / f"{name}.jsonl"
            print(f"[{n}/{len(args.only)}] bench.{name} {' '.join(bench_args)}".rstrip() + " ...", end=" ",
                  flush=True)
            started = time.monotonic()
            status = run_bench(name, bench_args, records, log, args.timeout)
            seconds = round(time.monotonic() - started, 1)
            print(f"{'timed out' if status is None else f'exit {status}'} in {seconds:g} s (log: "
                  f"{log.relative_to(ROOT)})", flush=True)
            result["runs"].append({"bench": f"bench.{name}", "args": bench_args, "exit": status, "seconds": seconds,
                                   "log": str(log.relative_to(ROOT))})
            result["rows"] += rows_of(f"bench.{name}", read_records(records), status)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("\n" + render(result) + f"\n\nwritten to {args.out}")
    return 0 if all(run["exit"] == 0 for run in result["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
