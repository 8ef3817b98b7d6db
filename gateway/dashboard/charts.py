"""Charts drawn on the server as SVG shapes: the geometry here, the drawing in templates (charts.html). Nothing is
fetched or run in the browser, and each chart's figures are also in a table beside it for a screen reader."""
from __future__ import annotations

from dataclasses import dataclass

# The drawing area of a chart (SVG user units; the SVG scales to its box).
WIDTH, HEIGHT = 600, 200
GAP = 0.2  # of each column's width, between bars
LABEL_ROOM = 160  # of a horizontal bar chart's width, kept for the label after the longest bar


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    x: float
    y: float
    width: float
    height: float


def scale_top(largest: float) -> int:
    """The value at the top of a chart's scale: `largest` rounded up to 1, 2 or 5 times a power of ten (at least 1),
    so the axis reads in round numbers."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if largest <= step * factor:
                return step * factor
        step *= 10


def columns(points: list[tuple[str, float]], top: int) -> list[Bar]:
    """Vertical bars, one per point left to right, their heights out of `top`."""
    if not points:
        return []
    slot = WIDTH / len(points)
    return [Bar(label, value, x=i * slot + slot * GAP / 2, y=HEIGHT - HEIGHT * value / top, width=slot * (1 - GAP),
                height=HEIGHT * value / top) for i, (label, value) in enumerate(points)]


def rows(points: list[tuple[str, float]], top: int, row_height: float = 32) -> list[Bar]:
    """Horizontal bars, one per point top to bottom (a funnel), their lengths out of `top`, each leaving LABEL_ROOM
    for its label."""
    return [Bar(label, value, x=0, y=i * row_height + row_height * GAP / 2, width=(WIDTH - LABEL_ROOM) * value / top,
                height=row_height * (1 - GAP)) for i, (label, value) in enumerate(points)]
