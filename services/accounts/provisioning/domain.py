"""Signup provisioning as a saga of stored steps: the rules, with no I/O.

Steps run in order, each safe to repeat: `agent` (the intake agent, created with a request id so a retry finds
the first one), `number` (a free number of the pool assigned to that agent, near the forward-to phone or in the
default country when there is one; a retry first looks for the number the agent already has), `forwarding` (ring-first forwarding to phone_forward_to, when given), then `done`.
A number is only ever taken for an existing agent, so a business never holds a number without an agent.
A step that fails is retried with a doubling delay; a saga whose workspace is canceled before it is done is
compensated (its number released) and ends `canceled`.
"""
from __future__ import annotations

from datetime import timedelta

from core.contact import number_facts

# Statuses: waiting for the card checkout; due to run (pending, or retrying after a failure); over.
WAITING_PAYMENT, PENDING, RETRYING, DONE, CANCELED = "waiting_payment", "pending", "retrying", "done", "canceled"
STATUSES = (WAITING_PAYMENT, PENDING, RETRYING, DONE, CANCELED)
AGENT, NUMBER, FORWARDING = "agent", "number", "forwarding"
STEPS = (AGENT, NUMBER, FORWARDING, DONE)

# The intake agent's request id in its business (agents.CreateAgentRequest.request_id).
INTAKE_REQUEST_ID = "signup:intake-agent"
# The ring-first wait before the agent answers (SPEC: Signup, phone_forward_to).
RING_SECONDS = 20
MAX_RETRY_FACTOR = 64


def next_step(step: str, forward_to: str | None) -> str:
    """The step after `step` (forwarding only when there is a phone to forward to)."""
    following = STEPS[STEPS.index(step) + 1]
    return DONE if following == FORWARDING and not forward_to else following


def retry_delay(attempts: int, base_seconds: float) -> timedelta:
    """The wait before retry number `attempts` (1 for the first): doubling from `base_seconds`, capped."""
    return timedelta(seconds=base_seconds * min(2 ** max(0, attempts - 1), MAX_RETRY_FACTOR))


DEFAULT_COUNTRY = "US"


def number_searches(forward_to: str | None) -> list[tuple[str | None, str | None]]:
    """Where in the pool to look for a business's number, best first, as (country, area code): near the phone
    calls are forwarded to (its area code, then its country), else in the default country; then anywhere."""
    if forward_to:
        facts = number_facts(forward_to)
        searches = [(facts.country, facts.area_code or None), (facts.country, None)]
    else:
        searches = [(DEFAULT_COUNTRY, None)]
    return list(dict.fromkeys([*searches, (None, None)]))


def intake_agent(business_name: str, business_type: str | None, website: str | None) -> tuple[str, str, str]:
    """The intake agent's name, prompt and greeting for a new business."""
    kind = f", a {business_type}" if business_type else ""
    site = f" Its website is {website}." if website else ""
    prompt = (f"You answer the phone for {business_name}{kind}.{site} Greet the caller warmly, find out what they "
              "need, and collect their name, the best phone number and email to reach them, and the reason for "
              "their call. Do not make promises about prices or appointments: say that someone from the team "
              "will follow up soon. Keep answers short and friendly.")
    return (f"{business_name} intake"[:100], prompt,
            f"Thanks for calling {business_name}! How can I help you today?")
