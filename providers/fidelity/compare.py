"""Claims against the providers' documents: every difference, each with a stable key (what `deviations` names)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from providers.fidelity.claims import Claim, Keyword, Properties


class Source(Protocol):
    def properties(self, name: str, path: str = "") -> frozenset[str]: ...

    def keyword(self, name: str, path: str, keyword: str) -> Any: ...


@dataclass(frozen=True)
class Difference:
    provider: str
    key: str  # "<schema>[.<path>]: <what differs>", stable across runs
    ours: str  # the constant of ours involved


def _where(schema: str, path: str) -> str:
    return f"{schema}.{path}" if path else schema


def _normal(value: Any) -> Any:
    return sorted(value) if isinstance(value, (list, tuple, set, frozenset)) else value


def differences(claim: Claim, source: Source) -> list[Difference]:
    where = _where(claim.schema, claim.path)
    try:
        if isinstance(claim, Properties):
            theirs = source.properties(claim.schema, claim.path)
        else:
            theirs = source.keyword(claim.schema, claim.path, claim.keyword)
    except (KeyError, AttributeError, StopIteration):
        return [Difference(claim.provider, f"{where}: not in the provider's document", claim.ours)]
    if isinstance(claim, Properties):
        found = [Difference(claim.provider, f"{where}: accepts {name!r}, which the provider does not define",
                            claim.ours) for name in sorted(claim.names - theirs)]
        if claim.exact:
            found += [Difference(claim.provider, f"{where}: refuses {name!r}, which the provider accepts", claim.ours)
                      for name in sorted(theirs - claim.names)]
        if claim.used:
            inner = f"{claim.path}." if claim.path else ""
            found += [Difference(claim.provider, f"{where}: uses {name!r}, which the provider marks deprecated",
                                 claim.ours) for name in sorted(claim.names & theirs)
                      if source.keyword(claim.schema, inner + name, "deprecated")]
        return found
    assert isinstance(claim, Keyword)
    if claim.within:
        return [Difference(claim.provider, f"{where} {claim.keyword}: ours holds {value!r}, which the provider's does "
                           "not", claim.ours) for value in sorted(set(claim.value) - set(theirs or ()))]
    if _normal(claim.value) == _normal(theirs):
        return []
    return [Difference(claim.provider, f"{where} {claim.keyword}: ours {_normal(claim.value)!r}, the provider's "
                       f"{_normal(theirs)!r}", claim.ours)]


def compare(claims: tuple[Claim, ...], sources: dict[str, Source]) -> list[Difference]:
    """The differences of every claim whose provider has a source here (a provider without one is not compared)."""
    return [d for claim in claims if claim.provider in sources for d in differences(claim, sources[claim.provider])]
