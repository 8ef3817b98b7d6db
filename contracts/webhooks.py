"""Webhooks: subscriptions, deliveries and their retries."""
from __future__ import annotations

from datetime import timedelta

DELIVERY_TIMEOUT_SECONDS = 10.0

# Seconds before attempt n+1 (n = attempts made): about a day in all, each with +-20% jitter.
RETRY_DELAYS = (10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 28800)

# A subscription failing without a single success for this long is disabled (an update re-enables it);
# shorter than the retry schedule, so a receiver that is gone for good stops costing attempts.
DISABLE_AFTER = timedelta(hours=20)
# After a rotation the old secret signs too, so receivers can switch without losing events (a webhook's secret, the
# per-call secret and an agent's tool secret alike).
ROTATION_OVERLAP = timedelta(hours=24)
DESCRIPTION_MAX = 500
REPLAY_MAX = 1000  # events per replay or backfill
