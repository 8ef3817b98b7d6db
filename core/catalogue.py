"""A choice among a catalogue's names (scopes, event types): the names chosen, once each and in the order given,
or the ones the catalogue lacks, so each caller refuses them in its own words."""
from __future__ import annotations

from collections.abc import Collection, Iterable


class NotInCatalogue(ValueError):
    def __init__(self, unknown: list[str]):
        super().__init__(", ".join(unknown))
        self.unknown = unknown


def subset(chosen: Iterable[str], catalogue: Collection[str]) -> list[str]:
    """The chosen names deduplicated in order; raises NotInCatalogue naming those not in the catalogue."""
    picked = list(dict.fromkeys(chosen))
    unknown = [name for name in picked if name not in catalogue]
    if unknown:
        raise NotInCatalogue(unknown)
    return picked
