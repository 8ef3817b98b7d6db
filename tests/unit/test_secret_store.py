"""The Secrets from a secret store (deploy/k8s/components/external-secrets, components/database, production's
PgBouncer userlist) and the command that makes the store's entry (`python -m deploy.secrets new`): the entry holds
exactly what the ExternalSecrets read; the Secrets they make hold every key a pod reads; the keys it makes are valid
key pairs; and the database URLs carry the password the Cluster gives each role, on the host the overlay uses."""
from __future__ import annotations

import json
import re

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.fernet import Fernet
from sqlalchemy.engine import make_url

from core import caller, db_roles, nats_auth, registry
from core.settings import derived_secrets
from deploy import budget
from deploy import secrets as deploy_secrets
from tests.unit.test_k8s_manifests import RENDERS, needs_kubectl, of_kind, pod_of, rendered

STORE_ENTRY = "switchboard"
CLUSTER_RW = "switchboard-db-rw"  # components/database: the Cluster's primary
TEMPLATE = re.compile(r"\{\{ \.(\w+) \}\}")


@pytest.fixture(scope="module")
def entry() -> dict[str, str]:
    return deploy_secrets.new_entry({})


def external_secrets(render: str) -> dict[str, dict]:
    return of_kind(rendered(render), "ExternalSecret")


def properties(render: str) -> set[str]:
    """Every property of the store's entry that an ExternalSecret of the overlay reads."""
    found = set()
    for doc in external_secrets(render).values():
        for item in doc["spec"]["data"]:
            assert item["remoteRef"]["key"] == STORE_ENTRY, doc["metadata"]["name"]
            found.add(item["remoteRef"]["property"])
    return found


def made(doc: dict, entry: dict[str, str]) -> dict[str, str]:
    """The Secret the operator makes of an ExternalSecret, from `entry`: each data item's value, then the template's
    keys rendered (`{{ .name }}` of a data item; the only template syntax used here), merged or alone as its
    mergePolicy says."""
    values = {item["secretKey"]: entry[item["remoteRef"]["property"]] for item in doc["spec"]["data"]}
    template = doc["spec"]["target"].get("template")
    if template is None:
        return values
    rendered_data = {}
    for key, text in template["data"].items():
        out = TEMPLATE.sub(lambda m: values[m.group(1)], text)
        assert "{{" not in out, (key, text)
        rendered_data[key] = out
    return {**values, **rendered_data} if template.get("mergePolicy") == "Merge" else rendered_data


def secret_refs(docs: tuple[dict, ...]) -> dict[str, set[str]]:
    """Each Secret the overlay's pods read: {name: its keys they read} (secretKeyRef and volumes)."""
    found: dict[str, set[str]] = {}
    for workload in (d for d in docs if d["kind"] in ("Deployment", "Job", "CronJob")):
        pod = pod_of(workload)["spec"]
        for container in (*pod.get("initContainers", ()), *pod["containers"]):
            for env in container.get("env", ()):
                if ref := env.get("valueFrom", {}).get("secretKeyRef"):
                    found.setdefault(ref["name"], set()).add(ref["key"])
        for volume in pod.get("volumes", ()):
            if "secret" in volume:
                found.setdefault(volume["secret"]["secretName"], set())
    return found


def test_the_command_prints_the_entry_as_json(monkeypatch, capsys):
    monkeypatch.setenv("VOICE_API_KEY", "vk")
    monkeypatch.delenv("SMS_AUTH_TOKEN", raising=False)
    assert deploy_secrets.main(["new"]) == 0
    out, err = capsys.readouterr()
    printed = json.loads(out)
    assert printed["VOICE_API_KEY"] == "vk" and printed["SMS_AUTH_TOKEN"] == ""
    assert "SMS_AUTH_TOKEN" in err and "VOICE_API_KEY" not in err
    assert deploy_secrets.main(["old"]) == 2


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_the_entry_holds_exactly_what_the_external_secrets_read(render, entry):
    """Nothing the overlay reads is missing from the entry (the ExternalSecret would fail, and with it every Secret
    it makes), and the entry holds nothing else but the operators' own NATS seed (their dead-letter command's)."""
    operators = f"{registry.NATS_SEED}_{registry.env_prefix(nats_auth.OPERATOR)}"
    assert set(entry) == properties(render) | {operators}
    for doc in external_secrets(render).values():
        assert doc["spec"]["secretStoreRef"]["kind"] == "ClusterSecretStore"
        assert doc["spec"]["secretStoreRef"]["name"] == f"switchboard-{render}", doc["metadata"]["name"]


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_every_secret_a_pod_reads_is_made_with_every_key_it_reads(render, entry):
    docs = rendered(render)
    made_secrets = {doc["spec"]["target"]["name"]: made(doc, entry) for doc in external_secrets(render).values()}
    needed = secret_refs(docs)
    assert "switchboard-secrets" in needed
    # cert-manager's Secrets (the mTLS component) are the only ones not from the store
    for name, keys in needed.items():
        if name.endswith("-grpc-tls"):
            continue
        assert name in made_secrets, name
        assert keys <= set(made_secrets[name]), (name, keys - set(made_secrets[name]))
    # and those the database reads (components/database: bootstrap, managed roles, backups)
    cluster = of_kind(docs, "Cluster")["switchboard-db"]["spec"]
    for role in cluster["managed"]["roles"]:
        secret = made_secrets[role["passwordSecret"]["name"]]
        assert secret["username"] == role["name"] and secret["password"]
    assert made_secrets[cluster["bootstrap"]["initdb"]["secret"]["name"]]["username"] == "switchboard"
    credentials = cluster["backup"]["barmanObjectStore"]["s3Credentials"]
    for ref in credentials.values():
        assert ref["key"] in made_secrets[ref["name"]]


@needs_kubectl
@pytest.mark.parametrize("render", RENDERS)
def test_each_process_signs_in_to_the_database_as_its_role_with_the_password_the_cluster_gives_it(render, entry):
    """A role's URL names the role and carries its password, the one its managed role's Secret holds; DIRECT_ and the
    owner's go to the Cluster's primary, DATABASE_URL_<ROLE> through PgBouncer where the overlay runs one."""
    docs = rendered(render)
    secret = made(external_secrets(render)["switchboard-secrets"], entry)
    pooled = budget.PGBOUNCER in of_kind(docs, "Deployment")
    owner = make_url(secret["DATABASE_URL"])
    assert (owner.username, owner.password, owner.host, owner.database) == (
        "switchboard", entry[deploy_secrets.DATABASE_PASSWORD], CLUSTER_RW, "switchboard")
    for role in db_roles.ROLES:
        password = entry[deploy_secrets.password_key(role.key)]
        url = make_url(secret[db_roles.secret_key(role.key)])
        assert (url.username, url.password, url.database) == (db_roles.role_name("switchboard", role.key), password,
                                                               "switchboard"), role.key
        assert (url.host, url.port) == (budget.PGBOUNCER if pooled else CLUSTER_RW, 5432), role.key
        if direct := secret.get(db_roles.secret_key(role.key, registry.DIRECT_DATABASE_URL)):
            assert make_url(direct).set(host=url.host) == url and make_url(direct).host == CLUSTER_RW, role.key
    if pooled:  # PgBouncer signs in as each role with the same password
        (auth,) = [d for d in external_secrets(render).values() if d["spec"]["target"]["name"] == "pgbouncer-auth"]
        userlist = made(auth, entry)["userlist.txt"]
        assert sorted(re.findall(r'"(\w+)" "(\S+)"', userlist)) == sorted(
            (db_roles.role_name("switchboard", r.key), entry[deploy_secrets.password_key(r.key)])
            for r in db_roles.ROLES)
        (ini,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "pgbouncer-config"]
        assert f"host={CLUSTER_RW} port=5432 dbname=switchboard" in ini["data"]["pgbouncer.ini"]


def test_the_keys_it_makes_are_valid_pairs_and_new_each_time(entry):
    """Every caller-context signing key parses with the public keys (core.caller.KeyRing) and its signature verifies
    under its own public key alone; every NATS seed is a user's whose public key is the one given the server; the
    derived secrets follow the server secret; the sealing key is a Fernet key; the passwords are URL-safe."""
    ring = {kid: key for kid, key in caller.KeyRing.parse("", entry["CALLER_VERIFY_KEYS"]).accepted.items()}
    signers = [p for p, held in registry.SECRETS.items() if registry.CALLER_SIGNING_KEY in held]
    assert set(ring) == {f"{p}:1" for p in signers}
    for process in signers:
        keys = caller.KeyRing.parse(entry[f"CALLER_SIGNING_KEY_{registry.env_prefix(process)}"], "")
        assert keys.kid == f"{process}:1" and keys.signing is not None
        signature = keys.signing.sign(b"proof")
        ring[keys.kid].verify(signature, b"proof")  # raises when the pair does not match
        others = [key for kid, key in ring.items() if kid != keys.kid]
        assert all(not _verifies(key, signature) for key in others), process
    for identity in nats_auth.IDENTITIES:
        variable = registry.env_prefix(identity)
        assert nats_auth.public_key(entry[f"NATS_SEED_{variable}"]) == entry[f"NKEY_{variable}"]
    assert {k: entry[k] for k in derived_secrets(entry["SWITCHBOARD_SECRET_KEY"])} == derived_secrets(
        entry["SWITCHBOARD_SECRET_KEY"])
    Fernet(entry["WEBHOOK_SECRETS_KEY"])
    passwords = [v for k, v in entry.items() if k.startswith(deploy_secrets.DATABASE_PASSWORD)]
    assert len(passwords) == len(db_roles.ROLES) + 1 and all(re.fullmatch(r"[\w-]{40,}", p) for p in passwords)
    again = deploy_secrets.new_entry({})
    assert not {k for k, v in again.items() if v and v == entry[k] and k != "NATS_URL"}


def test_a_server_secret_in_the_environment_is_kept_with_what_derives_from_it():
    """Moving a deployment to the store keeps its server secret, so its sealed webhook secrets stay readable."""
    kept = deploy_secrets.new_entry({"SWITCHBOARD_SECRET_KEY": "the-old-one"})
    assert kept["SWITCHBOARD_SECRET_KEY"] == "the-old-one"
    assert kept["WEBHOOK_SECRETS_KEY"] == derived_secrets("the-old-one")["WEBHOOK_SECRETS_KEY"]


def _verifies(key, signature: bytes) -> bool:
    try:
        key.verify(signature, b"proof")
    except InvalidSignature:
        return False
    return True
