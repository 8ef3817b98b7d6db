"""The outbound-contact rules as data: the federal calling window, the state rows (each with its statute) and the
platform's defaults. core.compliance.decision reads them; nothing here decides anything.

A window is [start, end) in the callee's local time. A state row applies to a touch when the callee's area code
is in that state or the lead says they live there (state laws presume residence by area code, and a stated
address is a second presumption: both apply, and the stricter of every applicable row wins).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import time

CALL, SMS = "call", "sms"
CHANNELS = (CALL, SMS)
CALLS_AND_TEXTS = frozenset(CHANNELS)
CALLS_ONLY = frozenset({CALL})


@dataclass(frozen=True)
class Hours:
    """A window of local time, [start, end)."""

    start: time
    end: time

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"


def hours(start: int | float, end: int | float) -> Hours:
    """Hours(8, 20) is 08:00-20:00; a half hour is written 13.5."""
    return Hours(time(int(start), round((start % 1) * 60)), time(int(end), round((end % 1) * 60)))


@dataclass(frozen=True)
class StateRule:
    """One state's telephone-solicitation rule. A day whose window is None is closed all day."""

    state: str  # USPS code
    statute: str  # the citation the row is taken from
    channels: frozenset[str]  # the touches the law covers
    weekdays: Hours  # Monday to Friday
    saturday: Hours | None
    sunday: Hours | None
    holidays_closed: bool = False  # no touches on the state's legal holidays (the `holidays` package's calendar)
    max_calls_per_24h: int | None = None  # per caller and callee, rolling 24 hours
    days: tuple[Hours | None, ...] = field(init=False, repr=False, compare=False)  # by weekday, Monday first

    def __post_init__(self) -> None:
        object.__setattr__(self, "days", (self.weekdays,) * 5 + (self.saturday, self.sunday))

    def window(self, weekday: int) -> Hours | None:
        """The window of a local weekday (Monday is 0)."""
        return self.days[weekday]


# 47 CFR 64.1200(c)(1): no telephone solicitation before 8 a.m. or after 9 p.m. at the called party's location.
FEDERAL = StateRule(state="US", statute="47 CFR 64.1200(c)(1)", channels=CALLS_AND_TEXTS, weekdays=hours(8, 21),
                    saturday=hours(8, 21), sunday=hours(8, 21))
