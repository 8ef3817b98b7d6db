"""`python -m providers.fidelity [FOLDER]`: compare with the providers' documents in FOLDER (README: where to get
them); Stripe's come with the pinned `stripe` package. Exit status 1 when a difference is not documented in
`deviations` or a documented one no longer occurs."""
from __future__ import annotations

import sys
from pathlib import Path

from providers.fidelity.claims import CLAIMS, PAYMENTS, SMS, VOICE
from providers.fidelity.compare import Difference, Source, compare
from providers.fidelity.deviations import DEVIATIONS
from providers.fidelity.sources import OpenApi, StripeTypes

# The documents' file names in the folder, and where each comes from.
DOCUMENTS = {
    VOICE: ("vapi-openapi.json", "github.com/VapiAI/docs: fern/apis/api/openapi.json"),
    SMS: ("twilio_api_v2010.json", "github.com/twilio/twilio-oai: spec/json/twilio_api_v2010.json"),
}


def sources(folder: Path | None) -> tuple[dict[str, Source], list[str]]:
    """The providers' documents found, and a line for each one missing."""
    found: dict[str, Source] = {PAYMENTS: StripeTypes()}
    missing = []
    for provider, (name, origin) in DOCUMENTS.items():
        path = folder / name if folder else None
        if path is not None and path.is_file():
            found[provider] = OpenApi.load(path)
        else:
            missing.append(f"{provider}: no {name} in {folder or '(no folder given)'}; get it from {origin}")
    return found, missing


def report(found: dict[str, Source], diffs: list[Difference]) -> tuple[list[str], int]:
    """The report's lines, and how many findings fail the check."""
    lines, failing = [], 0
    for d in diffs:
        why = DEVIATIONS.get(d.provider, {}).get(d.key)
        failing += why is None
        lines.append(f"  [{'documented' if why else 'UNDOCUMENTED'}] {d.provider}: {d.key} ({d.ours})"
                     + (f"\n      why: {why}" if why else ""))
    seen = {(d.provider, d.key) for d in diffs}
    for provider in sorted(set(found) & set(DEVIATIONS)):
        for key in sorted(set(DEVIATIONS[provider]) - {k for p, k in seen if p == provider}):
            failing += 1
            lines.append(f"  [STALE] {provider}: {key}: documented as deliberate but no longer differs; remove it")
    return lines, failing


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else None
    found, missing = sources(folder)
    diffs = compare(CLAIMS, found)
    lines, failing = report(found, diffs)
    print(f"provider fidelity: {len(diffs)} differences over {', '.join(sorted(found))}")
    print("\n".join(lines) if lines else "  none")
    for line in missing:
        print(f"  not compared: {line}")
    print("FAILED: " if failing else "OK", f"{failing} undocumented or stale" if failing else "", sep="")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
