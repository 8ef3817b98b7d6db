"""Evals: scenarios, judges and runs."""
from __future__ import annotations

from providers.voice.vapi.vocabulary import JUDGE_MODEL_PROVIDERS

NAME_MAX = 200
DESCRIPTION_MAX = 2000

# The provider's limits: a turn's and a judge plan's content (1000, refused beyond), and the mirror's name (80)
# and description (500), which are cut to fit: ours may be longer.
CONTENT_MAX = 1000
TURNS_MAX = 50
JUDGE_TYPES = ("exact", "regex", "ai")

# A rubric's model: the provider's judge models but its custom one, which needs a url our rubric does not carry.
JUDGE_PROVIDERS = tuple(p for p in JUDGE_MODEL_PROVIDERS if p != "custom-llm")
ROLES = ("user", "assistant")
QUEUED, IN_PROGRESS, ENDED = "queued", "in-progress", "ended"
RUN_STATUSES = (QUEUED, IN_PROGRESS, ENDED)
MAX_WAIT_MS = (60000, 110000)  # default, maximum
