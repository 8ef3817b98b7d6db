"""Leads: statuses, fields, the audit and the published scoring rules."""
from __future__ import annotations

STATUSES = ("new", "contacted", "qualified", "converted", "lost", "unqualified", "spam", "do_not_contact")

# The statuses PATCH may set; the others are set at creation or by the pipeline.
PATCH_STATUSES = ("new", "contacted", "qualified", "converted", "lost")
OPEN_STATUSES = ("new", "contacted", "qualified")

# The lead funnel (analytics), in order: a lead at a stage has passed the stages before it; a lead in any other
# status left the pipeline.
FUNNEL_STAGES = (*OPEN_STATUSES, "converted")
DEFAULT_STATUS, DEFAULT_SOURCE = "new", "api"
AUDIT_DEFAULTS = {"window_hours": 24, "stalled_days": 3, "hot_score": 80}
AUDIT_BOUNDS = {"window_hours": (1, 24 * 90), "stalled_days": (1, 365), "hot_score": (0, 100)}

# Longest accepted value of each text field.
LIMITS = {"name": 200, "first_name": 100, "last_name": 100, "email": 320, "phone": 32, "zip": 20, "address": 300,
          "city": 100, "state": 100, "source": 100, "source_url": 2000, "source_page": 500, "notes": 10_000,
          "message": 10_000, "event_date": 100, "event_type": 100, "agent_name": 200}


SOURCE_POINTS = {"inbound_call": 25, "referral": 20, "web": 15, "form": 15, "sms": 15, "api": 10}
OTHER_SOURCE_POINTS = 5
POINTS_PER_INTERACTION, MAX_ENGAGEMENT = 8, 24
INTENT_POINTS = 20
STATUS_POINTS = {"qualified": 15, "contacted": 5}
RECENT_DAY_POINTS, RECENT_WEEK_POINTS = 15, 8
EMAIL_POINTS, PHONE_POINTS = 5, 5
CLOSED_WON, CLOSED_LOST = ("converted",), ("lost", "unqualified", "spam", "do_not_contact")


def rules_in_words() -> str:
    """The scoring rules as the API documentation states them, from the constants above."""
    by_points: dict[int, list[str]] = {}
    for source, points in SOURCE_POINTS.items():
        by_points.setdefault(points, []).append(source)
    sources = ", ".join(f"{'/'.join(names)} {points}" for points, names in by_points.items())
    statuses = ", ".join(f"{status} {points}" for status, points in STATUS_POINTS.items())
    lost = ", ".join(CLOSED_LOST[:-1]) + f" and {CLOSED_LOST[-1]}"
    return (f"source ({sources}, other {OTHER_SOURCE_POINTS}) + {POINTS_PER_INTERACTION} per interaction (max "
            f"{MAX_ENGAGEMENT}) + recency ({RECENT_DAY_POINTS} within a day, {RECENT_WEEK_POINTS} within a week) + "
            f"{INTENT_POINTS} for an intent captured on a call + status ({statuses}) + {EMAIL_POINTS} for an email + "
            f"{PHONE_POINTS} for a phone, clamped to 0-100; {' and '.join(CLOSED_WON)} is 100 and {lost} 0.")
