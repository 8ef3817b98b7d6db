"""The deployment's secrets.

`python -m deploy.secrets`: the secrets for one purpose (core.settings.DERIVED_SECRETS) derived from
SWITCHBOARD_SECRET_KEY in this environment, as `VARIABLE=value` lines for the deployment's Secret (for example
`kubectl create secret generic ... --from-env-file`). They are the values every process derived for itself before
each was given only its own, so a deployment that keeps them keeps its sealed webhook secrets, its provider
webhook credential and its recording links working.

`python -m deploy.secrets new`: the whole entry `switchboard` of the secret store the overlays' ExternalSecrets read
(deploy/k8s/components/external-secrets, components/database; deploy/k8s/README.md, "Secrets from a secret store"),
as one JSON object, a property per variable, made new: the server secret (SWITCHBOARD_SECRET_KEY from this
environment when set, so that the secrets derived from it keep their values) and those derived from it, each
process's caller-context key pair (Ed25519, core.caller: its signing key and every public key), each NATS identity's
nkey seed and public key (core.nats_auth), a password for the database's owner and for each role (core.db_roles),
which CloudNativePG gives the roles and the ExternalSecrets write into the URLs. The credentials others issue (the
providers', the backups' object store's: SUPPLIED) are read from this environment, empty when unset: fill them in
before loading the entry (stderr names those left empty).
"""
from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Sequence

from core import caller, db_roles, nats_auth, registry
from core.settings import DEV_SECRET, derived_secrets

NATS_URL = "tls://nats:4222"  # the NATS chart's Service in the namespace, over TLS (deploy/nats-values.yaml)
# Issued by others: the providers' credentials, and the object store's for the database's backups.
SUPPLIED = ("VOICE_API_KEY", "SMS_AUTH_TOKEN", "SMTP_PASSWORD", "PAYMENTS_API_KEY", "PAYMENTS_WEBHOOK_SECRET",
            "BACKUP_ACCESS_KEY_ID", "BACKUP_SECRET_ACCESS_KEY")
DATABASE_PASSWORD = "DATABASE_PASSWORD"  # the owner's; DATABASE_PASSWORD_<ROLE> each role's


def password_key(role: str) -> str:
    """The entry's property holding a role's password (core.db_roles.ROLES; the owner's is DATABASE_PASSWORD)."""
    return f"{DATABASE_PASSWORD}_{registry.env_prefix(role)}"


def _caller_keys() -> dict[str, str]:
    """A new key pair for every process that signs its caller context: its CALLER_SIGNING_KEY_<PROCESS>, and every
    public key in CALLER_VERIFY_KEYS (each service keeps its callers' alone: core.caller.keyring_of)."""
    signers = [p for p, held in registry.SECRETS.items() if registry.CALLER_SIGNING_KEY in held]
    pairs = {p: caller.new_key(f"{p}:1") for p in signers}
    return {**{f"{registry.CALLER_SIGNING_KEY}_{registry.env_prefix(p)}": signing for p, (signing, _) in pairs.items()},
            "CALLER_VERIFY_KEYS": ",".join(verify for _, verify in pairs.values())}


def _nats_keys() -> dict[str, str]:
    """A new seed (NATS_SEED_<IDENTITY>) and its public key (NKEY_<IDENTITY>, for the NATS server) for every NATS
    identity: the processes and the operators' dead-letter command, whose seed the operators keep."""
    found = {}
    for identity in nats_auth.IDENTITIES:
        seed, variable = nats_auth.new_seed(), registry.env_prefix(identity)
        found[f"{registry.NATS_SEED}_{variable}"] = seed
        found[f"NKEY_{variable}"] = nats_auth.public_key(seed)
    return found


def new_entry(environ: dict[str, str]) -> dict[str, str]:
    """Every property of the store's entry, made new (the server secret and SUPPLIED from `environ` when set)."""
    secret_key = environ.get("SWITCHBOARD_SECRET_KEY", "")
    if not secret_key or secret_key == DEV_SECRET:
        secret_key = secrets.token_urlsafe(48)
    passwords = {DATABASE_PASSWORD: secrets.token_urlsafe(32),
                 **{password_key(role.key): secrets.token_urlsafe(32) for role in db_roles.ROLES}}
    entry = {"SWITCHBOARD_SECRET_KEY": secret_key, "SWITCHBOARD_SECRET_KEY_PREVIOUS": "",
             **derived_secrets(secret_key), "NATS_URL": NATS_URL, **_caller_keys(), **_nats_keys(), **passwords,
             **{variable: environ.get(variable, "") for variable in SUPPLIED}}
    return dict(sorted(entry.items()))


def _derived() -> int:
    secret_key = os.environ.get("SWITCHBOARD_SECRET_KEY", "")
    if not secret_key or secret_key == DEV_SECRET:
        print("SWITCHBOARD_SECRET_KEY: must be set to the deployment's server secret", file=sys.stderr)
        return 1
    for variable, value in derived_secrets(secret_key).items():
        print(f"{variable}={value}")
    return 0


def main(argv: Sequence[str] = ()) -> int:
    if not argv:
        return _derived()
    if list(argv) != ["new"]:
        print("usage: python -m deploy.secrets [new]", file=sys.stderr)
        return 2
    entry = new_entry(dict(os.environ))
    print(json.dumps(entry, indent=1))
    if empty := [variable for variable in SUPPLIED if not entry[variable]]:
        print(f"fill in before loading (issued by others): {', '.join(empty)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
