"""Gateway throughput against a bare baseline, measured in the same run.

Compares two ways of serving the same authenticated read,
`GET /api/v1/workspaces?id=<business_id>` with `Authorization: Bearer <key>`:

- full path: the real embedded stack (deploy.local.stack.Stack): aiohttp gateway ->
  gRPC -> accounts service -> PostgreSQL, with NATS, the principal cache and the usage log;
- baseline: bench.bare_server, one aiohttp + asyncpg process that does the same work per
  request against the same database (key lookup by keyed hash, revoked/expired check,
  business row of that key's account, JSON out);
- the shape's floor: bench.bare_two_hop, the baseline's work split over two processes joined by one gRPC aio hop
  and nothing else, so the full path can be read against what its shape costs on this machine as well.

A load generator in its own process keeps --concurrency requests in flight over a
keep-alive pool, warms up, then measures for --seconds. Rounds alternate baseline, floor and
full path (A F B A F B ...); the headline is the median of the per-round ratios (each pair
shares its moment's noise on a small machine), with the best round of each also shown; the goal is >= 0.6 of the
baseline (issue 38). The result is a ratio, never an assertion on timings; any non-200 response invalidates the run
(exit status 1).

Run: `make bench`, or `PYTHONPATH=.:protos .venv/bin/python -m bench.gateway --seconds 5`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deploy.local.stack import Stack

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PATH = "/api/v1/workspaces"
TARGET = 0.6  # full path >= 0.6 x baseline throughput (issue 38)


# -- load generator: runs in its own process (`--load URL`), prints one JSON line --------------

async def generate_load(url: str, key: str, concurrency: int, warmup: float, seconds: float) -> dict[str, Any]:
    import aiohttp

    headers = {"Authorization": f"Bearer {key}"}
    latencies: list[float] = []
    errors: dict[str, int] = {}
    last_done = 0.0
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        measure_from = time.perf_counter() + warmup
        stop_at = measure_from + seconds

        async def worker() -> None:
            nonlocal last_done
            while (started := time.perf_counter()) < stop_at:
                try:
                    async with session.get(url, headers=headers) as resp:
                        body = await resp.read()
                        status = resp.status
                except Exception as exc:  # noqa: BLE001 - counted as an error, run is invalid
                    status, body = 0, repr(exc).encode()
                done = time.perf_counter()
                if status != 200:
                    what = f"{status} {body[:200].decode(errors='replace')}"
                    errors[what] = errors.get(what, 0) + 1
                elif started >= measure_from:
                    latencies.append(done - started)
                    last_done = max(last_done, done)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = max(last_done - measure_from, 1e-9)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0.0] * 99
    return {"requests": len(latencies), "seconds": elapsed, "rps": len(latencies) / elapsed,
            "p50_ms": cuts[49] * 1000, "p99_ms": cuts[98] * 1000, "errors": errors}


def run_load(args: argparse.Namespace, url: str, key: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.gateway", "--load", url, "--seconds", str(args.seconds),
           "--concurrency", str(args.concurrency), "--warmup", str(args.warmup)]
    env = {**os.environ, "BENCH_KEY": key, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")])}
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"load generator failed ({out.returncode}):\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- orchestration -------------------------------------------------------------------------

def http_json(url: str, *, body: dict[str, Any] | None = None, key: str = "") -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    if key:
        req.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(req, timeout=10) as resp:
        answer: dict[str, Any] = json.loads(resp.read())
        return answer


def start_bare(stack: Stack, home: Path, module: str, *args: str) -> tuple[subprocess.Popen[bytes], int]:
    """`python -m module [args...] PORT [more...]`: args may hold "{port}", replaced by a free port, which is returned."""
    from deploy.local.servers import free_port, wait_for_port

    port, log = free_port(), home / "logs" / f"{module.rsplit('.', 1)[-1]}.log"
    argv = [a.replace("{port}", str(port)) for a in args]
    with open(log, "ab") as out:  # same env as the stack: same DATABASE_URL and secret key
        proc = subprocess.Popen([sys.executable, "-m", module, *argv], cwd=ROOT, env=stack.env(),
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for_port(port, 30, proc, module, log)
    return proc, port


def row(name: str, r: dict[str, Any]) -> str:
    return f"  {name:<18} {r['rps']:>9.1f} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f} {r['requests']:>9d}"


def bench(args: argparse.Namespace) -> int:
    from bench.harness import judged, report
    from deploy.local.servers import free_port
    from deploy.local.stack import Stack

    home = Path(tempfile.mkdtemp(prefix="switchboard-bench-"))
    stack = Stack(home=home, http_port=free_port(), durable=False,
                  extra_env={"KEY_RATE_LIMIT_PER_MINUTE": "100000000", "LOG_LEVEL": "WARNING"})
    bares: list[subprocess.Popen[bytes]] = []
    finished = False
    try:
        print(f"starting the embedded stack in {home} ...", flush=True)
        stack.start()
        signup = http_json(f"{stack.base_url}/api/v1/signup",
                           body={"business_name": "Bench Co", "email": "bench@example.com"})
        key, business_id = signup["api_key"], signup["business_id"]
        bare, bare_port = start_bare(stack, home, "bench.bare_server", "{port}")
        back, back_port = start_bare(stack, home, "bench.bare_two_hop", "back", "{port}")
        front, front_port = start_bare(stack, home, "bench.bare_two_hop", "front", "{port}", str(back_port))
        bares += [bare, back, front]
        targets = {"baseline": f"http://127.0.0.1:{bare_port}{PATH}?id={business_id}",
                   "two-hop floor": f"http://127.0.0.1:{front_port}{PATH}?id={business_id}",
                   "full path": f"{stack.base_url}{PATH}?id={business_id}"}
        bodies = {name: http_json(url, key=key) for name, url in targets.items()}
        for name in ("two-hop floor", "full path"):
            if bodies[name] != bodies["baseline"]:
                print(f"warning: responses differ:\n  baseline:  {bodies['baseline']}\n  {name}: {bodies[name]}")
        print(f"{args.rounds} rounds x (baseline, two-hop floor, full path); concurrency {args.concurrency}, "
              f"warm-up {args.warmup:g}s, measure {args.seconds:g}s; {os.cpu_count()} CPUs shared by all processes")
        print(f"  {'round':<18} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'requests':>9}")
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in targets}
        errors = 0
        for n in range(1, args.rounds + 1):
            for name, url in targets.items():
                r = run_load(args, url, key)
                results[name].append(r)
                print(row(f"{n}:{name}", r), flush=True)
                for what, count in r["errors"].items():
                    errors += count
                    print(f"    ERROR x{count}: {what}")
        finished = True
    finally:
        for proc in bares:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        stack.stop()
        if finished:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"bench aborted; logs kept in {stack.logs}", file=sys.stderr)
    best = {name: max(rs, key=lambda r: r["rps"]) for name, rs in results.items()}
    best_ratio = best["full path"]["rps"] / best["baseline"]["rps"]
    print(f"best of {args.rounds} rounds:")
    print(f"  {'':<18} {'req/s':>9} {'p50 ms':>9} {'p99 ms':>9} {'requests':>9}")
    for name, r in best.items():
        print(row(name, r))
    # Each round's pair ran back to back, so its ratio shares that moment's machine noise;
    # the median over rounds is the headline figure.
    pairs = [f["rps"] / b["rps"] for b, f in zip(results["baseline"], results["full path"], strict=True)]
    ratio = statistics.median(pairs)
    floors = [t["rps"] / b["rps"] for b, t in zip(results["baseline"], results["two-hop floor"], strict=True)]
    floor = statistics.median(floors)
    print(f"per-round ratios: {', '.join(f'{p:.2f}' for p in pairs)}")
    print(f"ratio full/baseline throughput: {ratio:.2f} (median of rounds; best-of ratio {best_ratio:.2f})")
    print(f"the shape's floor, two-hop/baseline: {floor:.2f} (rounds {', '.join(f'{p:.2f}' for p in floors)}); "
          f"full path/two-hop: {ratio / floor:.2f}")
    full, verdict = results["full path"], judged(ratio >= TARGET, valid=not errors)
    report("bench.gateway", f"authenticated GET {PATH}?id=", statistics.median(r["rps"] for r in full), "req/s",
           statistics.median(r["rps"] for r in results["baseline"]), ratio, f">= {TARGET} of bare", verdict,
           p50_ms=statistics.median(r["p50_ms"] for r in full), p99_ms=statistics.median(r["p99_ms"] for r in full),
           per_round=pairs)
    floor_rps = [r["rps"] for r in results["two-hop floor"]]
    report("bench.gateway", "the same read, bare, over one gRPC hop (the shape's floor)", statistics.median(floor_rps),
           "req/s", statistics.median(r["rps"] for r in results["baseline"]), floor, "none stated",
           judged(None, valid=not errors), p50_ms=statistics.median(r["p50_ms"] for r in results["two-hop floor"]),
           p99_ms=statistics.median(r["p99_ms"] for r in results["two-hop floor"]), per_round=floors)
    if errors:
        print(f"INVALID: {errors} non-200 responses; no verdict")
        return 1
    print(f"verdict: {verdict}: full path = {ratio:.2f} x baseline throughput (target >= {TARGET} x)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per round (default 10)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (baseline, full path) (default 3)")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per round (default 2)")
    parser.add_argument("--load", metavar="URL", help=argparse.SUPPRESS)  # internal: be the load generator
    args = parser.parse_args()
    if args.load:
        try:
            import uvloop

            uvloop.install()
        except ImportError:
            pass
        result = asyncio.run(generate_load(args.load, os.environ["BENCH_KEY"], args.concurrency, args.warmup,
                                           args.seconds))
        print(json.dumps(result))
        return 0
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
