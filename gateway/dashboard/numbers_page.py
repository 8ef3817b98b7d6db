"""The phone numbers page of one business: each number, the agent it routes to, and its ring-first forwarding, which
the owner turns on, changes or off here. Every action is the RPC `PATCH /api/v1/phone-numbers` makes, as the
signed-in owner."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import NUMBERS_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import agents_pb2, common_pb2

NUMBERS_SHOWN = 100


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None) -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    agents = deps(request).clients["agents"].as_caller(principal.tenant)
    listed = await agents.ListPhoneNumbers(agents_pb2.ListPhoneNumbersRequest(
        business_id=business_id, page=common_pb2.PageRequest(limit=NUMBERS_SHOWN)))
    ids = sorted({n.agent_id for n in listed.phone_numbers if n.HasField("agent_id")})
    names = {a.id: a.name for a in (await agents.LookupAgents(agents_pb2.LookupAgentsRequest(ids=ids))).agents}
    numbers = [{"number": n.phone_number, "agent": names.get(n.agent_id, "an agent") if n.HasField("agent_id") else None,
                "forward_to": n.forwarding.to if n.HasField("forwarding") else "",
                "ring_seconds": n.forwarding.ring_seconds if n.HasField("forwarding") else 20}
               for n in listed.phone_numbers]
    return page("numbers.html", status, title="Phone numbers", active="numbers", form_token=form_token(session),
                businesses=businesses, business_id=business_id, numbers=numbers, notice=notice, error=error)


async def numbers(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""))


def _forwarding(form: Form) -> agents_pb2.Forwarding | None:
    """The form's forwarding, or None to turn it off (no forward-to phone given)."""
    to = str(form.get("forward_to", "")).strip()
    if not to:
        return None
    seconds = str(form.get("ring_seconds", "")).strip()
    return agents_pb2.Forwarding(to=to, **({"ring_seconds": int(seconds)} if seconds.isdigit() else {}))


async def set_forwarding(request: web.Request) -> web.StreamResponse:
    async def act(principal: Principal, form: Form) -> dict[str, Any]:
        number, forwarding = str(form.get("phone_number", "")), _forwarding(form)
        update = agents_pb2.UpdatePhoneNumberRequest(business_id=str(form.get("business_id", "")),
                                                     phone_number=number)
        if forwarding is not None:
            update.forwarding.CopyFrom(forwarding)
        update.update_mask.paths.append("forwarding")
        await deps(request).clients["agents"].as_caller(principal.tenant).UpdatePhoneNumber(update)
        return {"notice": f"Calls to {number} now ring {forwarding.to} first." if forwarding is not None
                else f"Calls to {number} now go straight to its agent."}
    return await pages.business_form(request, _render, "changed", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(NUMBERS_PATH, numbers)
    app.router.add_post(NUMBERS_PATH, same_site_form(set_forwarding))
