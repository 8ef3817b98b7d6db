"""The PostgreSQL connection budget (deploy.budget; README, "Operations: database connections"): every overlay as
rendered, with the settings' pools, fits the max_connections it states; behind production's PgBouncer the drivers
keep what its configuration allows; and whatever needs a session of its own is known, goes straight to PostgreSQL
and is counted."""
import configparser
import copy
import re
import shutil
from functools import cache
from pathlib import Path

import pytest

from core import registry
from deploy import budget

ROOT = Path(__file__).resolve().parents[2]
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed here")
rendered = cache(budget.render)  # each overlay rendered once for the module (a test that changes one copies it)


@needs_kubectl
@pytest.mark.parametrize("overlay", sorted(budget.MAX_CONNECTIONS))
def test_every_overlay_fits_the_max_connections_it_states(overlay):
    found = budget.budget(rendered(overlay))
    assert found.problems(budget.MAX_CONNECTIONS[overlay]) == []
    # every process that connects is counted, at its most pods
    assert set(found.pools) == {p for p in registry.PROCESSES if registry.REACHES[p].database}
    assert found.listens == sum(2 for s in registry.SERVICES if s.outbox)  # two pods of each service with a relay


@needs_kubectl
def test_the_production_figures_are_the_ones_its_manifest_states():
    """pgbouncer.yaml's comment states the budget to the SRE: it must be the one computed."""
    found = budget.budget(rendered("production"))
    assert found.pooler is not None
    stated = (ROOT / "deploy" / "k8s" / "overlays" / "production" / "pgbouncer.yaml").read_text()
    assert f": {found.clients}\n" in stated
    assert f"= {found.postgres} <= {budget.MAX_CONNECTIONS['production']}" in stated
    assert f"max_client_conn {found.pooler.max_client_conn}" in stated
    readme = (ROOT / "README.md").read_text()
    assert f"{found.clients} client connections" in readme
    assert f"{found.postgres} of its {budget.MAX_CONNECTIONS['production']}" in readme


@needs_kubectl
def test_larger_pools_in_the_configmap_break_the_budget():
    """The check reads the pools from the settings as the pods get them: DATABASE_POOL_SIZE raised in the ConfigMap
    takes the pools past what PgBouncer accepts."""
    docs = copy.deepcopy(rendered("production"))
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "switchboard-config"]
    config["data"]["DATABASE_POOL_SIZE"] = "20"
    found = budget.budget(docs)
    assert [p for p in found.problems(budget.MAX_CONNECTIONS["production"]) if "max_client_conn" in p]


@needs_kubectl
def test_behind_pgbouncer_the_statement_caches_match_what_it_keeps():
    """Transaction pooling; the drivers' prepared-statement caches stay on only where PgBouncer keeps prepared
    statements (max_prepared_statements, PgBouncer >= 1.21): else every statement would fail on the next server
    connection."""
    docs = rendered("production")
    (config,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "pgbouncer-config"]
    ini = configparser.ConfigParser(inline_comment_prefixes=(";",))
    ini.read_string(config["data"]["pgbouncer.ini"])
    assert ini["pgbouncer"]["pool_mode"] == "transaction"
    (settings,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "switchboard-config"]
    cache = settings["data"].get("DATABASE_STATEMENT_CACHE", "true") == "true"
    assert cache == (ini["pgbouncer"].getint("max_prepared_statements", 0) > 0)


# What a transaction pooler cannot keep: a session's LISTEN, a session-level advisory lock, a session SET, a cursor
# WITH HOLD, an SQL PREPARE.
SESSION_FEATURES = re.compile(r"add_listener|[\"']\s*(UN)?LISTEN\s|pg_(try_)?advisory_lock\("
                              r"|[\"']\s*SET\s+(SESSION\s+)?\w+\s*(=|TO)\s|WITH HOLD|[\"']\s*PREPARE\s")
# Where the platform uses one, each on a connection of its own to DIRECT_DATABASE_URL (settings.direct_database).
SESSIONS = {"core/outbox.py": "the relay's LISTEN", "services/messaging/registry.py": "the import's advisory lock",
            "core/migrations.py": "a migrations run's advisory lock (the owner's DATABASE_URL, direct; one connection)"}


def test_what_needs_a_session_goes_straight_to_postgresql_and_is_counted():
    """A new use of a session feature must connect to DIRECT_DATABASE_URL and be counted in deploy.budget: add it
    here when it does."""
    found = {str(path.relative_to(ROOT)) for folder in ("core", "services", "gateway")
             for path in (ROOT / folder).rglob("*.py") if "migrations" not in path.parts
             and SESSION_FEATURES.search(path.read_text())}
    assert found == set(SESSIONS)
    for path in SESSIONS:
        assert "direct" in (ROOT / path).read_text() or "listen_url" in (ROOT / path).read_text(), path
    assert all(registry.DIRECT_DATABASE_URL in registry.SECRETS[s.name] for s in registry.SERVICES if s.outbox)
    assert registry.DIRECT_DATABASE_URL in registry.SECRETS[registry.NATIONAL_DNC_IMPORT]
