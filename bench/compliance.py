"""bench-compliance: the outbound compliance decision (core.compliance.decision.decide), a pure function, over
100,000 (destination, time) pairs, against a bare baseline measured in the same run: the least a calling-window
check can do (the number's zone from a dict, the local hour, 08:00-21:00).

The pairs: numbers drawn from US area codes with and without state rows, toll-free and foreign numbers, a fifth
with a lead's stated state and a tenth with a stated time zone, a third with recent calls and texts against the caps; times
spread over a year (DST changes, Sundays, holidays included), so about half the decisions are deferrals that
search for the next legal instant. Decisions per second, the ratio to the baseline, and the outcome mix.

    make bench-compliance [ARGS="--pairs 100000 --rounds 3"]
"""
from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

from bench.harness import judged, report
from core.compliance import decision as compliance
from core.compliance import zones
from core.compliance.rules import CALL, SMS

AREA_CODES = ("212", "303", "305", "405", "410", "206", "415", "512", "504", "617", "702", "907", "808", "801",
              "215", "401", "207", "312", "612", "602")
FOREIGN = ("+44207946", "+4930123", "+2721123", "+8131234", "+6129374")
STATES = ("FL", "TX", "CA", "NY", "LA", "PA", "WA", None)
ZONES = ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "Europe/London")
START = datetime(2026, 1, 1, tzinfo=UTC)
GOAL = 50_000  # decisions per second


# A touch, the callee and its standing: one decision's inputs.
Pair = tuple[compliance.Touch, compliance.Callee, compliance.Standing]
R = TypeVar("R")


def pairs(n: int, seed: int) -> list[Pair]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        roll = rng.random()
        if roll < 0.8:
            phone = f"+1{rng.choice(AREA_CODES)}{rng.randint(200, 999)}{rng.randint(0, 9999):04d}"
        elif roll < 0.9:
            phone = f"+1800555{rng.randint(0, 9999):04d}"
        else:
            phone = f"{rng.choice(FOREIGN)}{rng.randint(0, 9999):04d}"
        at = START + timedelta(seconds=rng.randint(0, 365 * 86400))
        channel = CALL if rng.random() < 0.7 else SMS
        recent = tuple(compliance.Counted(rng.choice((CALL, SMS)), at - timedelta(hours=rng.uniform(0, 30)))
                       for _ in range(rng.randint(0, 4))) if rng.random() < 0.33 else ()
        callee = compliance.Callee(phone, timezone=rng.choice(ZONES) if rng.random() < 0.1 else None,
                                   lead_state=rng.choice(STATES) if rng.random() < 0.2 else None)
        out.append((compliance.Touch(channel, at, sender="+14155550100", recent=recent), callee,
                    compliance.Standing(consent="opted_in")))
    return out


def bare(cases: list[Pair]) -> int:
    """The baseline: the number's first zone from a dict (as a cache would), the local hour, the federal window."""
    zone_of: dict[str, str] = {}
    legal = 0
    for touch, callee, _ in cases:
        name = zone_of.get(callee.phone[:8])
        if name is None:
            name = zone_of[callee.phone[:8]] = (zones.number_zones(callee.phone) or ("UTC",))[0]
        legal += 8 <= touch.at.astimezone(ZoneInfo(name)).hour < 21
    return legal


def decided(cases: list[Pair]) -> Counter[str]:
    return Counter(compliance.decide(touch, callee, standing).outcome for touch, callee, standing in cases)


def rate(fn: Callable[[list[Pair]], R], cases: list[Pair]) -> tuple[float, R]:
    began = time.perf_counter()
    result = fn(cases)
    return len(cases) / (time.perf_counter() - began), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    cases = pairs(args.pairs, args.seed)
    decided(cases[:2000]), bare(cases[:2000])  # warm the caches both sides use (libphonenumber, zoneinfo)
    bare_rates: list[float] = []
    rates: list[float] = []
    mix: Counter[str] = Counter()
    for _ in range(args.rounds):  # alternate, so both see the same machine
        bare_rates.append(rate(bare, cases)[0])
        per_second, mix = rate(decided, cases)
        rates.append(per_second)
    b, d = statistics.median(bare_rates), statistics.median(rates)
    print(f"pairs {args.pairs}, rounds {args.rounds} (medians)")
    print(f"bare window check   {b:>10,.0f} /s")
    print(f"compliance.decide   {d:>10,.0f} decisions/s   ratio {d / b:.2f}   (goal >= {GOAL:,}/s)")
    print("outcomes            " + ", ".join(f"{k} {v / args.pairs:.0%}" for k, v in sorted(mix.items())))
    report("bench.compliance", f"core.compliance.decision.decide over {args.pairs:,} (destination, time) pairs", d,
           "decisions/s", b, d / b, f">= {GOAL:,} decisions/s", judged(d >= GOAL),
           per_round=[r / bare for r, bare in zip(rates, bare_rates, strict=True)])


if __name__ == "__main__":
    main()
