"""Lead scoring: a score 0-100 from documented, explainable rules.

Points add up from five factors and are clamped to 0..100:
- source: inbound_call 25, referral 20, web / form / sms 15, api 10, any other 5;
- engagement: 8 per recorded interaction (calls, texts, emails), at most 24;
- recency of the last activity (creation or interaction): within a day 15, within a week 8;
- intent captured from a call: 20;
- status: qualified 15, contacted 5; converted is always 100 and lost, unqualified, spam and
  do_not_contact are always 0 (nothing more to win).
Reachability adds 5 for an email and 5 for a phone number.
Confidence says how much the score rests on: high with three or more interactions or a captured
intent, medium with one or two interactions, low on the lead's own fields alone.
Recency is judged when the score is computed (on every write of the lead or an interaction).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from contracts.leads import (
    CLOSED_LOST,
    CLOSED_WON,
    EMAIL_POINTS,
    INTENT_POINTS,
    MAX_ENGAGEMENT,
    OTHER_SOURCE_POINTS,
    PHONE_POINTS,
    POINTS_PER_INTERACTION,
    RECENT_DAY_POINTS,
    RECENT_WEEK_POINTS,
    SOURCE_POINTS,
    STATUS_POINTS,
)


@dataclass(frozen=True)
class LeadFacts:
    source: str
    status: str
    has_email: bool
    has_phone: bool
    interactions: int
    last_activity: datetime
    intent: str | None


@dataclass(frozen=True)
class Score:
    score: int
    confidence: str
    explanation: str
    factors: list[str]


def score_lead(facts: LeadFacts, now: datetime) -> Score:
    if facts.status in CLOSED_WON:
        return Score(100, "high", "converted leads score 100", ["status converted: 100"])
    if facts.status in CLOSED_LOST:
        return Score(0, "high", f"{facts.status} leads score 0", [f"status {facts.status}: 0"])
    factors: list[tuple[str, int]] = []
    source_points = SOURCE_POINTS.get(facts.source, OTHER_SOURCE_POINTS)
    factors.append((f"source {facts.source}", source_points))
    if facts.interactions:
        factors.append((f"{facts.interactions} interaction(s)",
                        min(facts.interactions * POINTS_PER_INTERACTION, MAX_ENGAGEMENT)))
    age = now - facts.last_activity
    if age <= timedelta(days=1):
        factors.append(("active within a day", RECENT_DAY_POINTS))
    elif age <= timedelta(days=7):
        factors.append(("active within a week", RECENT_WEEK_POINTS))
    if facts.intent:
        factors.append(("intent captured on a call", INTENT_POINTS))
    if facts.status in STATUS_POINTS:
        factors.append((f"status {facts.status}", STATUS_POINTS[facts.status]))
    if facts.has_email:
        factors.append(("has an email", EMAIL_POINTS))
    if facts.has_phone:
        factors.append(("has a phone number", PHONE_POINTS))
    score = max(0, min(100, sum(points for _, points in factors)))
    if facts.interactions >= 3 or facts.intent:
        confidence = "high"
    elif facts.interactions:
        confidence = "medium"
    else:
        confidence = "low"
    top = sorted(factors, key=lambda f: -f[1])[:3]
    explanation = f"score {score} from " + ", ".join(f"{name} (+{points})" for name, points in top)
    return Score(score, confidence, explanation, [f"{name}: +{points}" for name, points in factors])


