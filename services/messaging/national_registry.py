"""The national do-not-call registry's files as the operator imports them, and what the platform's copy says of a
number (pure: the import itself is services.messaging.registry).

The FTC gives a subscriber flat text files (its downloads, zipped: a `.zip` of one file or a `.gz` is read as is):

- a full file: every registered number of one area code, or of several (the whole registry is one file), one a
  line, as ten digits (`4155550123`) or as the area code and the seven-digit number (`415,5550123`); it replaces
  the numbers of each area code it holds;
- a change file: the numbers added to or deleted from the registry since the subscriber's last download, one a
  line, the number followed by its change, `A` (added) or `D` (deleted) (`4155550123,A` or `415,5550123,D`; the
  words add, added, delete, deleted too), later fields (a date) ignored. A change to an area code with no full
  file imported yet is not applied (the change of a number the platform never had the rest of its area code for
  would be a partial copy), and the report says so.

A file's kind is its first number line's. Fields may be quoted; blank lines are skipped. A line that is none of these
(or of the other kind than its file) is malformed: it is reported with its line number and the rest is loaded. Only
the area codes the operator subscribes to (NATIONAL_DNC_AREA_CODES) are loaded; the numbers of others are counted
per area code and skipped.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.compliance import decision as compliance
from services.messaging.records import National

FULL, CHANGE = "full", "change"
FLAGS = {"a": True, "add": True, "added": True, "d": False, "delete": False, "deleted": False}  # added?
REPORTED = 20  # malformed lines listed one by one in a report (all are counted)
AREA_SPAN = 10_000_000  # a number is its ten digits as an integer: an area code's numbers are one span of them
EVERY = "*"  # NATIONAL_DNC_AREA_CODES: the whole registry


@dataclass(frozen=True)
class Subscription:
    """The area codes the operator subscribes to (None: every one)."""

    area_codes: frozenset[str] | None

    @classmethod
    def of(cls, setting: tuple[str, ...]) -> Subscription:
        return cls(None if setting == (EVERY,) else frozenset(setting))

    def covers(self, area_code: str | None) -> bool:
        return area_code is not None and (self.area_codes is None or area_code in self.area_codes)


NONE = Subscription(frozenset())  # the default: no area code subscribed


def standing_fields(phone: str, national: National | None, subscription: Subscription) -> dict[str, Any]:
    """compliance.Standing's registry fields for a phone, from what the loaded data says of it (a
    National, None when its area code was never imported)."""
    if not subscription.covers(compliance.area_code(phone)):
        return {"national": compliance.NOT_SUBSCRIBED}
    if national is None:
        return {"national": compliance.NOT_LOADED}
    return {"national": compliance.CHECKED, "national_listed": national.listed,
            "national_refreshed_at": national.refreshed_at}


def _number(fields: list[str]) -> tuple[int, list[str]] | None:
    """(the ten digits as a number, the fields after it), or None when the line starts with no NANP number."""
    first = fields[0]
    if len(first) == 10 and first.isdigit():
        digits, rest = first, fields[1:]
    elif len(fields) > 1 and len(first) == 3 and len(fields[1]) == 7 and (first + fields[1]).isdigit():
        digits, rest = first + fields[1], fields[2:]
    else:
        return None
    if digits[0] in "01" or digits[3] in "01":  # an area code and an exchange start with 2-9
        return None
    return int(digits), rest


@dataclass
class Reader:
    """A file's lines read once, as the records to load: (number, added, line number). What it met on the way is
    kept: the file's kind, the numbers loaded per area code, and the lines not loaded (malformed ones, and numbers
    of area codes not subscribed or, in a change file, not loaded yet)."""

    subscription: Subscription
    loaded: frozenset[int]  # the area codes imported before (a change file's numbers need theirs)
    kind: str | None = None
    lines: int = 0
    areas: Counter[int] = field(default_factory=Counter)
    malformed: int = 0
    reported: list[str] = field(default_factory=list)
    not_subscribed: Counter[int] = field(default_factory=Counter)
    not_loaded: Counter[int] = field(default_factory=Counter)

    def records(self, lines: Iterable[str]) -> Iterator[tuple[int, bool, int]]:
        for self.lines, line in enumerate(lines, 1):
            text = line.strip()
            if not text:
                continue
            parsed = self._parse(text)
            if parsed is None:
                continue
            number, added = parsed
            area = number // AREA_SPAN
            if not self.subscription.covers(str(area)):
                self.not_subscribed[area] += 1
            elif self.kind == CHANGE and area not in self.loaded:
                self.not_loaded[area] += 1
            else:
                self.areas[area] += 1
                yield number, added, self.lines

    def _parse(self, text: str) -> tuple[int, bool] | None:
        fields = [f.strip().strip('"').strip() for f in text.split(",")]
        found = _number(fields)
        if found is None:
            self._wrong(f"{text[:40]!r} is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)")
            return None
        number, rest = found
        kind = CHANGE if rest else FULL
        if self.kind is None:
            self.kind = kind
        if kind != self.kind:
            self._wrong(f"{text[:40]!r} is a {kind} line in a {self.kind} file")
            return None
        if kind == FULL:
            return number, True
        added = FLAGS.get(rest[0].lower())
        if added is None:
            self._wrong(f"{rest[0][:20]!r} is not a change (A for added, D for deleted)")
            return None
        return number, added

    def _wrong(self, why: str) -> None:
        self.malformed += 1
        if len(self.reported) < REPORTED:
            self.reported.append(f"line {self.lines}: {why}")

    @property
    def problems(self) -> int:
        """The lines not loaded."""
        return self.malformed + sum(self.not_subscribed.values()) + sum(self.not_loaded.values())

    def report(self) -> list[str]:
        """What was not loaded, and why, one line each."""
        out = list(self.reported)
        if self.malformed > len(self.reported):
            out.append(f"... {self.malformed - len(self.reported)} more malformed lines")
        out += [f"area code {a}: not subscribed (NATIONAL_DNC_AREA_CODES): {n} numbers skipped"
                for a, n in sorted(self.not_subscribed.items())]
        out += [f"area code {a}: no full file imported yet: {n} changes skipped (import its full file first)"
                for a, n in sorted(self.not_loaded.items())]
        return out

