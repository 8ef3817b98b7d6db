"""Vapi's phone numbers from ours: a carrier number of ours imported over our SIP trunk, and its ring-first
forwarding as the number's hooks."""

from __future__ import annotations

from typing import Any

from providers.voice.port import Forwarding, Json


def import_body(e164: str, sip_credential_id: str, server: Json) -> dict[str, Any]:
    """`POST /phone-number` (bring-your-own over our SIP trunk). It carries no assistant: each inbound call asks our
    server which assistant answers (an assistant-request), so the number's agent is ours to change without a
    provider call."""
    return {
        "provider": "byo-phone-number",
        "number": e164,
        "credentialId": sip_credential_id,
        "numberE164CheckEnabled": True,
        "name": f"Switchboard {e164}",
        "server": dict(server),
    }


def ringing_hooks(forwarding: Forwarding | None) -> list[dict[str, Any]]:
    """The number's hooks for ring-first forwarding: when the call rings, dial the forward-to phone for the ring
    time; when it does not pick up, the transfer's fallback keeps the call with the assistant (which the number's
    server names in answer to the assistant-request that follows). Vapi applies a blind transfer's fallbackPlan only
    where the organization enabled transfer-outcome detection, and documents no assistant-request after the hook
    (FIDELITY-calls.md). No forwarding: no hooks."""
    if forwarding is None:
        return []
    plan = {
        "mode": "blind-transfer",
        "sipVerb": "dial",
        "dialTimeout": forwarding.ring_seconds,
        "fallbackPlan": {"message": "", "endCallEnabled": False},
    }
    destination = {"type": "number", "number": forwarding.to, "message": "", "transferPlan": plan}
    return [{"on": "call.ringing", "do": [{"type": "transfer", "destination": destination}]}]
