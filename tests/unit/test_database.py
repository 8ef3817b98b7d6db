"""The database as the overlays render it (deploy/k8s/components/database, CloudNativePG): the instances, the
connection budget's max_connections, the owner and roles the migrations and the processes sign in as, continuous
archiving with a daily base backup, and the documented restore (restore.example.yaml) kept in step with the Cluster."""
from __future__ import annotations

import copy

import pytest
import yaml

from core import db_roles, registry
from core.settings import Settings
from deploy import budget
from tests.unit.test_custom_resources import errors
from tests.unit.test_k8s_manifests import K8S, RENDERS, needs_kubectl, of_kind, rendered

COMPONENT = K8S / "components" / "database"
RESTORE = COMPONENT / "restore.example.yaml"
INSTANCES = {"production": 3, "staging": 1}


def cluster(render: str) -> dict:
    return of_kind(rendered(render), "Cluster")["switchboard-db"]


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_the_cluster_allows_the_connections_the_budget_counts(render):
    """max_connections is the one deploy.budget holds the overlay to, with the superuser reserve it counts."""
    spec = cluster(render)["spec"]
    assert spec["instances"] == INSTANCES[render]
    parameters = spec["postgresql"]["parameters"]
    assert int(parameters["max_connections"]) == budget.MAX_CONNECTIONS[render]
    assert int(parameters["superuser_reserved_connections"]) == budget.SUPERUSER_RESERVED
    assert not budget.budget(list(rendered(render))).problems(int(parameters["max_connections"]))


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_the_owner_and_every_role_sign_in(render):
    """The database and owner the migrations Job's DATABASE_URL names, allowed to create roles (core.db_roles); a
    login for every role of core.db_roles, named as the migrations name them."""
    spec = cluster(render)["spec"]
    initdb = spec["bootstrap"]["initdb"]
    assert (initdb["database"], initdb["owner"]) == ("switchboard", "switchboard")
    roles = {r["name"]: r for r in spec["managed"]["roles"]}
    assert roles["switchboard"]["createrole"] is True
    assert roles["switchboard"]["passwordSecret"] == initdb["secret"]
    assert set(roles) == {"switchboard", *(db_roles.role_name("switchboard", r.key) for r in db_roles.ROLES)}
    for role in roles.values():
        assert role["ensure"] == "present" and role["login"] is True, role["name"]
        assert not role.get("superuser"), role["name"]


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_the_wal_is_archived_and_a_base_backup_taken_every_day(render):
    spec = cluster(render)["spec"]
    store = spec["backup"]["barmanObjectStore"]
    assert store["destinationPath"].startswith("s3://") and store["destinationPath"].endswith(f"/{render}")
    assert store["wal"]["compression"] and spec["backup"]["retentionPolicy"]
    assert spec["postgresql"]["parameters"]["archive_timeout"]
    (backup,) = of_kind(rendered(render), "ScheduledBackup").values()
    assert backup["spec"]["cluster"]["name"] == "switchboard-db"
    assert backup["spec"]["method"] == "barmanObjectStore" and backup["spec"]["immediate"] is True
    seconds, minutes, hours, *every = backup["spec"]["schedule"].split()
    assert every == ["*", "*", "*"] and all(f.isdigit() for f in (seconds, minutes, hours))  # once a day


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_nothing_in_the_backups_outlives_backup_retention_and_so_the_erasure_deadline(render):
    """A recovery window of N days keeps the base backup before the window: with one a day, N + 1 days of data at
    most, which must be within BACKUP_RETENTION_DAYS (docs/privacy.md, "Backups")."""
    window = cluster(render)["spec"]["backup"]["retentionPolicy"]
    assert window.endswith("d"), window
    assert int(window[:-1]) + 1 <= Settings().backup_retention_days < Settings().erasure_deadline_days


@needs_kubectl
def test_the_restore_is_the_cluster_made_again_from_its_backups_to_a_point_in_time():
    """restore.example.yaml is production's Cluster but for its bootstrap (a recovery to a target time from the
    archive the Cluster writes), where that archive is, and a new folder to archive under; and it is valid."""
    restore = yaml.safe_load(RESTORE.read_text())
    assert not errors(restore)
    live = cluster("production")
    assert restore["metadata"]["name"] == live["metadata"]["name"]  # its Services keep their names
    recovery = restore["spec"]["bootstrap"]["recovery"]
    assert recovery["recoveryTarget"]["targetTime"]
    (source,) = restore["spec"]["externalClusters"]
    assert source["name"] == recovery["source"]
    archive, written = source["barmanObjectStore"], live["spec"]["backup"]["barmanObjectStore"]
    for key in ("destinationPath", "serverName", "s3Credentials"):
        assert archive[key] == written[key], key
    assert restore["spec"]["backup"]["barmanObjectStore"]["serverName"] != written["serverName"]
    assert (recovery["database"], recovery["owner"], recovery["secret"]) == (
        "switchboard", "switchboard", live["spec"]["bootstrap"]["initdb"]["secret"])
    same = copy.deepcopy(restore["spec"])
    same["bootstrap"] = live["spec"]["bootstrap"]
    same["backup"]["barmanObjectStore"]["serverName"] = written["serverName"]
    del same["externalClusters"]
    assert same == live["spec"]


@needs_kubectl
def test_every_process_that_connects_has_its_login():
    """Each process given a DATABASE_URL signs in as its registry role (the migrations Job as the owner)."""
    roles = {r["name"] for r in cluster("production")["spec"]["managed"]["roles"]}
    for process, held in registry.SECRETS.items():
        if "DATABASE_URL" in held:
            role = registry.database_role(process)
            assert (db_roles.role_name("switchboard", role) if role else "switchboard") in roles, process


@needs_kubectl
def test_production_scrapes_the_database_for_its_backup_alerts():
    """The PodMonitor `switchboard-db` selects the Cluster's instances (the labels CloudNativePG gives their pods) on
    their metrics port, is picked up by the same Prometheus as the rules, and the rules alert on its archiver and
    backups."""
    docs = rendered("production")
    monitor = of_kind(docs, "PodMonitor")["switchboard-db"]
    assert monitor["spec"]["selector"]["matchLabels"] == {"cnpg.io/cluster": cluster("production")["metadata"]["name"],
                                                          "cnpg.io/podRole": "instance"}
    assert [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]] == ["metrics"]
    (rules,) = of_kind(docs, "PrometheusRule").values()
    assert monitor["metadata"]["labels"]["release"] == rules["metadata"]["labels"]["release"]
    exprs = " ".join(r["expr"] for g in rules["spec"]["groups"] for r in g["rules"] if "alert" in r)
    assert "cnpg_pg_stat_archiver_failed_count" in exprs and "cnpg_collector_last_available_backup_timestamp" in exprs
