"""`python -m deploy.audit`: pip-audit of requirements.lock, what the image installs, against the OSV advisory
database; `make test` runs it.

It fails when a locked version has a known vulnerability, and when the audit itself fails with the database
reachable. When the database cannot be reached at all (no network, an outage) it says so and passes: the suite must
not depend on a third party's uptime, and the next run with the network audits. A clean audit of the same lock is
kept for CACHE_HOURS (in .venv/.audit), so repeated runs cost nothing.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
CACHE = ROOT / ".venv" / ".audit"
OSV_URL = "https://api.osv.dev/v1/query"
CACHE_HOURS = 12
TIMEOUT_SECONDS = 10


def reachable(osv_url: str) -> bool:
    """Whether the advisory database answers a query (any HTTP answer below 500 counts)."""
    query = json.dumps({"package": {"name": "pip", "ecosystem": "PyPI"}, "version": "0"}).encode()
    request = urllib.request.Request(osv_url, data=query, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS):
            return True
    except urllib.error.HTTPError as err:
        return err.code < 500
    except (OSError, ValueError):  # URLError, timeouts, refused connections, a malformed URL
        return False


def audit(requirements: Path, osv_url: str = OSV_URL, cache: Path = CACHE) -> int:
    """0 when clean (or the database is out of reach), 1 when not; says which on stderr."""
    stamp = cache / hashlib.sha256(requirements.read_bytes() + osv_url.encode()).hexdigest()
    if stamp.exists() and time.time() - stamp.stat().st_mtime < CACHE_HOURS * 3600:
        print(f"audit: {requirements.name} was audited clean in the last {CACHE_HOURS} hours", file=sys.stderr)
        return 0
    if not reachable(osv_url):
        print(f"audit: SKIPPED, the advisory database ({osv_url}) cannot be reached; {requirements.name} was not "
              "audited", file=sys.stderr)
        return 0
    done = subprocess.run([sys.executable, "-m", "pip_audit", "--requirement", str(requirements), "--disable-pip",
                           "--no-deps", "--vulnerability-service", "osv", "--osv-url", osv_url,
                           "--progress-spinner", "off", "--timeout", str(TIMEOUT_SECONDS)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"audit: {requirements.name} FAILED (a known vulnerability, or the audit broke):\n{done.stdout}"
              f"{done.stderr}", file=sys.stderr)
        return 1
    cache.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    print(f"audit: {requirements.name}: no known vulnerabilities", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("requirements", nargs="?", type=Path, default=LOCK)
    parser.add_argument("--osv-url", default=OSV_URL)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args(argv)
    return audit(args.requirements, args.osv_url, args.cache)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
