"""The agent's update_lead tool during a call: what the caller said (name, email, interest, notes, a status the
lead API may set) written on the caller's lead in sdr (services.calls.ports.Leads.record_caller, acting for the call's
business): the call's lead, else the business's newest lead with the caller's number, created when there is none.
sdr writes an entry in the lead's activity log naming the call. A bad email or status is a refusal the model can say.
Written once per tool call: the calls service claims each tool call id once (services.calls.tools_service)."""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from contracts.leads import PATCH_STATUSES
from core.errors import ServiceError
from services.calls.domain import other_party
from services.calls.ports import CallerLead, Leads
from services.calls.records import Call

log = logging.getLogger(__name__)

FIELDS = ("name", "email", "status", "notes")  # as the lead names them; `interest` is the lead's intent
NOTHING = ("Nothing was given to record. Call update_lead with any of name, email, interest, notes or status "
           f"({', '.join(PATCH_STATUSES)}).")
NO_NUMBER = ("The caller's number is unknown, so their details can't be recorded on this call. Please carry on "
             "with the call.")
UNREACHABLE = ("The caller's details could not be saved right now. Please tell the caller they will be noted "
               "after the call.")


def said(arguments: Mapping[str, Any]) -> tuple[dict[str, str], str | None]:
    """The lead fields and the interest the model gave (text only; the status lower-cased)."""
    given = {name: value.strip() for name in FIELDS
             if isinstance(value := arguments.get(name), str) and value.strip()}
    if "status" in given:
        given["status"] = given["status"].lower()
    interest = arguments.get("interest")
    return given, interest.strip() or None if isinstance(interest, str) else None


def recorded_words(changed: list[str]) -> str:
    if not changed:
        return "The caller's lead already has these details: nothing new was recorded."
    names = ["interest" if name == "intent" else name for name in changed]
    return f"Recorded on the caller's lead: {', '.join(names)}."


class LeadTools:
    def __init__(self, leads: Leads):
        self.leads = leads  # sdr's leads, as the call's business (services.calls.ports)

    async def update_lead(self, call: Call, arguments: Mapping[str, Any]) -> tuple[str, str]:
        given, interest = said(arguments)
        if not given and interest is None:
            return "refused", NOTHING
        if given.get("status", PATCH_STATUSES[0]) not in PATCH_STATUSES:
            return "refused", f"The status must be one of {', '.join(PATCH_STATUSES)}. Nothing was recorded."
        phone = other_party(call)
        if phone is None:
            return "refused", NO_NUMBER
        try:
            _, changed = await self.leads.record_caller(CallerLead(
                call.business_id, phone, call.id, call.direction, call.lead_id, given, interest))
        except ServiceError as exc:
            if exc.code == "invalid_request":
                return "refused", f"That could not be recorded: {exc.message}. Please check it with the caller."
            log.warning("the lead of call %s could not be written: %s", call.id, exc.code)
            return "failed", UNREACHABLE
        return "ok", recorded_words(changed)
