"""The outbound compliance decision log: why a person was or was not called or texted."""
from __future__ import annotations

from gateway.convert import to_json
from gateway.route import Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, E164, UUID
from switchboard.v1 import messaging_pb2

MESSAGING = "switchboard.v1.Messaging"


async def list_decisions(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.ListComplianceDecisionsRequest(page=ctx.page_request()), ctx.query,
                     "business_id", "phone", "lead_id")
    reply = await ctx.rpc("messaging").ListComplianceDecisions(req)
    return ctx.listing("decisions", [to_json(d) for d in reply.decisions], reply.page)


ROUTES = [
    Route("GET", "/api/v1/compliance/decisions", list_decisions, "Outbound compliance decisions, newest first",
          "compliance", scope="events:read",
          query=page_query(50, 100, business_id=BUSINESS, phone={**E164, "description": "decisions on this phone"},
                           lead_id={**UUID, "description": "decisions on touches for this lead"}),
          response="ComplianceDecisionList", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{MESSAGING}/ListComplianceDecisions",),
          description="Every decision the platform made on an outbound touch of the business, kept append-only: "
          "texts sent through POST /api/v1/sms/send (actor sms) and calls placed with compliance enforce (actor "
          "enforced_call; run and pipeline for communication runs and the sales pipeline; agent_tool for an agent's "
          "send_sms or send_link during a call, referencing the tool call). Each has the outcome "
          "(allow; defer with not_before, the instant the touch becomes legal; refuse), the rule that decided "
          "(allowed, platform_dnc, business_dnc, lead_do_not_contact, opted_out, national_dnc, national_dnc_stale, "
          "no_consent_call, no_consent_sms, "
          "zones, federal_hours, state_hours, business_hours, frequency), its source (the statute or policy), the "
          "public error code and message, the actor and reference (the call or message), and the inputs: every "
          "time zone considered with the callee's local time and why (stated, lead_state, area_code, sender, "
          "country, unknown), the states whose law applied, the calls counted in the last 24 hours and the cap, "
          "the consent basis (opt_in, inbound_contact, existing_relationship), and national_registry: the national "
          "do-not-call registry's status for the number (status not_subscribed: the platform's operator does not "
          "subscribe to its area code; not_loaded: subscribed, no file imported yet, not consulted; checked, with "
          "refreshed_at, listed and, when listed, the exemption: opt_in, purchase, inquiry or null). The decision log is a durable "
          "record of what happened, like the event history, hence events:read. {decisions, has_more, "
          "next_cursor}; the after cursor is the decided_at of the last decision."),
]
