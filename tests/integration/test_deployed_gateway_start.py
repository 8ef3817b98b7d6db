"""A deployed gateway refuses to start without the trusted proxies (security review, issue 36): the real process,
started as Kubernetes starts it. In the integration tier because it spawns a process (the unit tier runs none);
the rule itself is tested in tests/unit/test_edge_security.py."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import caller, nats_auth, registry
from deploy.local.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_a_deployed_gateway_will_not_start_without_trusted_proxies():
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'protos'}", "SWITCHBOARD_ENV": "production",
           **{secret: "a-real-secret-for-this-test-" + "x" * 20 for secret in registry.GATEWAY_SECRETS},
           registry.CALLER_SIGNING_KEY: caller.new_key("gateway:1")[0], "CALLER_VERIFY_KEYS": caller.new_key("gateway:1")[1],
           registry.NATS_SEED: nats_auth.new_seed(),
           "TRUSTED_PROXIES": "", "METRICS_PORT": "0",  # production's default metrics port may be taken here
           "PORT": str(free_port()), "HOST": "127.0.0.1"}
    proc = subprocess.Popen([sys.executable, "-m", "gateway"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the gateway started in production without TRUSTED_PROXIES")
    assert proc.returncode != 0 and "TRUSTED_PROXIES must be set" in err
