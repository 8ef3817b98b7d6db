"""Messaging: texts, consent, content rules and e-mail."""
from __future__ import annotations

DIRECTIONS = ("inbound", "outbound")
CONVERSATIONAL_CONSENT_DAYS = 30
API_CONSENT = {"opted_in": "opt_in", "opted_out": "opt_out"}  # what a caller may record, as evidence kinds
NOTE_MAX = REASON_MAX = 500

# -- content -------------------------------------------------------------------------------------
MAX_BODY = 1600  # the provider's limit (ten segments)

# Carrier-prohibited content (the SHAFT categories and high-risk lending), matched as whole words.
PROHIBITED = {
    "cannabis": ("cannabis", "marijuana", "thc", "cbd", "dispensary"),
    "firearms": ("firearm", "firearms", "ammunition", "ammo"),
    "tobacco": ("tobacco", "vape", "vapes", "e-cigarette", "cigarettes"),
    "alcohol": ("liquor", "beer sale", "wine sale"),
    "high_risk_lending": ("payday loan", "payday loans", "debt forgiveness", "debt relief", "credit repair"),
    "gambling": ("casino", "sweepstakes", "sports betting"),
}
CONTENT_RULES = ("empty", "too_long", "link_shortener", *(f"prohibited_{c}" for c in PROHIBITED))

# -- the email queue -------------------------------------------------------------------------------
# An email waits for approval (pending_approval) unless it is approved when queued (the owner's notifications,
# or an API caller asking for it), then goes out: approved -> sent, or failed after EMAIL_ATTEMPTS tries (or at
# once when the mail server refuses it for good). Retries back off exponentially.
EMAIL_STATUSES = ("pending_approval", "approved", "sent", "failed")
EMAIL_ATTEMPTS = 5
SUBJECT_MAX, EMAIL_BODY_MAX = 200, 50_000
