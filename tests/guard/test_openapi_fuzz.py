"""The fuzzing guard: schemathesis runs every operation the gateway publishes at /api/v1/openapi.json
against the real stack, with every check and every phase (examples, coverage, fuzzing, and the stateful
phase that follows the document's links from what a POST creates to the reads, updates and deletes of
it). Zero failures: a 500, a response that breaks its schema, a valid request refused (beyond the
documented refusals in schemathesis_hooks) or an invalid one accepted turns the suite red.

FUZZ_EXAMPLES sets the examples per operation (20 here; `make fuzz` runs many more), FUZZ_SEED the seed (unset: a
fixed one; set empty, as `make fuzz` does without one: a random one, printed in the report).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gateway.route_table import all_routes

ROOT = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20"))
SEED = os.environ.get("FUZZ_SEED", "20261123")
FUZZ_MINUTES = 45  # a deep `make fuzz` stays bounded too


def schemathesis_run(base_url: str, key: str, session: str, sign_out_session: str, workdir: Path,
                     *extra: str) -> subprocess.CompletedProcess:
    """`st run` over the published document, as a user would run it from the README."""
    command = [str(Path(sys.executable).with_name("st")), "--config-file", str(CONFIG), "run",
               f"{base_url}/api/v1/openapi.json", "--checks", "all",
               # replaced by positive_data_acceptance_unless_documented and ensure_resource_availability_of_linked_ids
               # (schemathesis_hooks)
               "--exclude-checks", "positive_data_acceptance,ensure_resource_availability",
               "--max-examples", str(EXAMPLES), *(["--seed", SEED] if SEED else []), *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "protos")]),
           "SWITCHBOARD_FUZZ_KEY": key, "SWITCHBOARD_FUZZ_SESSION": session,
           "SWITCHBOARD_FUZZ_SIGN_OUT_SESSION": sign_out_session, "NO_COLOR": "1"}
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=FUZZ_MINUTES * 60)


async def test_the_published_openapi_holds_against_the_running_stack(api, stack, tmp_path):
    # Keys fuzz one account; the dashboard session belongs to another, so fuzzing key management can
    # never revoke the key the rest of the run uses; signing out is fuzzed with a session of a third account.
    owner = await api.signup(business_name="Fuzzed Co")
    dash = await api.dashboard(owner)
    other = await api.dashboard(await api.signup(business_name="Fuzzed Keys Co"))
    leaving = await api.dashboard(await api.signup(business_name="Fuzzed Sign-out Co"))
    try:
        key = (await dash.create_key(name="fuzz", scopes=["*"]))["key"]
        session, sign_out_session = (next(c.value for c in d.session.cookie_jar if c.key == "sb_session")
                                     for d in (other, leaving))
        result = schemathesis_run(stack.base_url, key, session, sign_out_session, tmp_path)
        still_signed_in = (await other.request("GET", "/api/v1/keys"))[0] == 200
    finally:
        await dash.close()
        await other.close()
        await leaving.close()
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-30000:]
    assert still_signed_in, "the run signed out the session it fuzzes key management with"
    # every operation of the route table was published and exercised, with no hand-kept list (schemathesis
    # leaves out the document's own route, which it loads the document from)
    operations = len([r for r in all_routes() if r.path != "/api/v1/openapi.json"])
    assert f"Selected: {operations}/{operations}" in report and f"Tested: {operations}" in report, report[-5000:]
