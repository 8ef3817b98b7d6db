"""The partner's webhook receiver (a stub until the faults helper lands it: see the brief)."""
from __future__ import annotations


class Partner:
    url: str
