"""Analytics: the reports' periods and buckets."""
from __future__ import annotations

DAYS = (30, 90)  # SPEC: a period's `days`, default 30, max 90
BUCKETS = ("day", "week")  # a calls timeline's, the first the default
