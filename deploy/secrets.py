"""`python -m deploy.secrets`: the secrets for one purpose (core.settings.DERIVED_SECRETS) derived from
SWITCHBOARD_SECRET_KEY in this environment, as `VARIABLE=value` lines for the deployment's Secret (for example
`kubectl create secret generic ... --from-env-file`). They are the values every process derived for itself before
each was given only its own, so a deployment that keeps them keeps its sealed webhook secrets, its provider
webhook credential and its recording links working.
"""
from __future__ import annotations

import os
import sys

from core.settings import DEV_SECRET, derived_secrets


def main() -> int:
    secret_key = os.environ.get("SWITCHBOARD_SECRET_KEY", "")
    if not secret_key or secret_key == DEV_SECRET:
        print("SWITCHBOARD_SECRET_KEY: must be set to the deployment's server secret", file=sys.stderr)
        return 1
    for variable, value in derived_secrets(secret_key).items():
        print(f"{variable}={value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
