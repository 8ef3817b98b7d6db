"""The sales pipeline: its segments, actions, pages and periods."""
from __future__ import annotations

from datetime import timedelta

SEGMENTS = ("speed_to_lead", "fresh_demo_caller", "warm_demo_caller", "cooling_demo", "new_trial_stuck",
            "trial_going_dark", "trial_ending", "contacted_no_reply", "exhausted", "churned_recent", "cold")
ACTIONS = ("call", "email", "sms", "skip", "pause", "resume")


PIPELINE_LIMIT = (100, 500)  # default and most leads on a page
ACTIVITY_LIMIT = (50, 200)  # default and most activity entries
PERIODS = {"today": None, "week": timedelta(days=7), "month": timedelta(days=30)}  # today: since UTC midnight
