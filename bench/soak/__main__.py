"""`make soak`: the soak on a scaled-out local stack (two of every service, worker and gateway), its ledger printed
as a table and written as JSON. Settings: SOAK_MINUTES (default 10), SOAK_SEED (default: a random one, printed so a
run can be replayed), SOAK_PROFILE=short (the profile `make test` runs, about a minute), SOAK_RESULTS (the JSON's path; default soak-results.json), REPLICAS (default 2)."""
from __future__ import annotations

import os
import random
from dataclasses import replace
from pathlib import Path

from bench.harness import with_stack
from bench.soak.profile import SoakProfile, short
from bench.soak.run import SOAK_ENV, soak


def main() -> int:
    seed = int(os.environ.get("SOAK_SEED") or random.SystemRandom().randrange(1, 10**6))
    if os.environ.get("SOAK_PROFILE") == "short":
        profile = short(seed)
    else:
        profile = replace(SoakProfile(seed=seed), seconds=60 * float(os.environ.get("SOAK_MINUTES", "10")))
    results = Path(os.environ.get("SOAK_RESULTS", "soak-results.json"))
    print(f"soak: seed {seed} (SOAK_SEED={seed} replays it), {profile.seconds / 60:g} minutes", flush=True)
    return with_stack("soak", lambda stack: soak(stack, profile, results), SOAK_ENV,
                      replicas=int(os.environ.get("REPLICAS", "2")))


if __name__ == "__main__":
    raise SystemExit(main())
