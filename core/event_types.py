"""The public event types: what partners may subscribe webhooks to (SPEC.md, Events)."""
from __future__ import annotations

EVENT_TYPES = (
    "lead.created", "lead.scored", "call.received", "call.started", "call.completed", "call.failed",
    "sms.received", "sms.sent", "sms.delivered", "sms.failed", "voicemail.received", "dispatcher.briefing_created",
    "phone_number.assigned", "phone_number.released", "workspace.paused", "workspace.canceled",
    "workspace.teardown_completed", "webhook.test",
)
