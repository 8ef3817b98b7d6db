"""A schema's revisions against its code's migrations (core.schema_gate): older stops a process, newer does not."""
import logging
import socket

import pytest

from core import migrations, registry, schema_gate


@pytest.mark.parametrize("schema", migrations.SERVICES)
def test_a_schema_is_older_at_any_revision_before_its_head_or_none_and_newer_at_one_the_code_does_not_know(schema):
    script = migrations.script(schema)
    (head,) = script.get_heads()
    (base,) = script.get_bases()
    assert base != head  # every service has a revision after its baseline
    assert schema_gate.compare(schema, [head]).verdict == "current"
    assert schema_gate.compare(schema, [base]).verdict == "older"
    assert schema_gate.compare(schema, []).verdict == "older"
    assert schema_gate.compare(schema, ["9999_a_later_release"]).verdict == "newer"


def test_what_a_process_is_told():
    (head,) = migrations.script("evals").get_heads()
    (base,) = migrations.script("evals").get_bases()
    assert schema_gate.compare("evals", [base]).describe("evals") == (
        f"evals: the database's evals schema is at {base}, older than this code's head, {head}: run python -m "
        "core.migrate (the migrations Job) first")
    assert schema_gate.compare("evals", []).describe("evals").startswith(
        "evals: the database's evals schema is at no revision, older")
    assert schema_gate.compare("evals", ["9999"]).describe("evals") == (
        f"evals: the database's evals schema is at 9999, newer than this code's head, {head} (a rollout or a "
        "rollback): starting on it")


def test_a_service_and_its_workers_are_held_to_the_services_schema():
    assert schema_gate.schema_of("sdr") == "sdr"
    assert {w.name: schema_gate.schema_of(w.name) for w in registry.WORKERS} == {
        "runs-scheduler": "sdr", "sdr-runner": "sdr", "webhooks-dispatcher": "webhooks"}


def test_a_database_it_cannot_reach_starts_the_process_unchecked_and_says_so(caplog):
    """An outage at a process's start: it serves its errors until the database is back, as a running one does."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with caplog.at_level(logging.WARNING, logger=schema_gate.__name__):
        schema_gate.require("evals", f"postgresql://nobody@127.0.0.1:{port}/switchboard")
    assert "evals: the evals schema's revision could not be read" in caplog.text
