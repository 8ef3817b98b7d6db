"""Phone numbers: the business's numbers, the pool, assign, release, and the legacy /numbers listing."""
from __future__ import annotations

from core.contact import AREA_CODE_PATTERN, REGIONS
from gateway.convert import to_json
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, E164, NUMBER_ASSIGN, NUMBER_UPDATE, UUID
from switchboard.v1 import agents_pb2

AGENTS = "switchboard.v1.Agents"
V1 = "/api/v1"
LIST_ERRORS = ("unauthorized", "forbidden", "bad_request", "invalid_request")


async def list_numbers(ctx: RequestContext) -> Reply:
    req = set_fields(agents_pb2.ListPhoneNumbersRequest(page=ctx.page_request()), ctx.query, "business_id",
                     "phone_number")
    reply = await ctx.rpc("agents").ListPhoneNumbers(req)
    return ctx.listing("phone_numbers", [to_json(n) for n in reply.phone_numbers], reply.page,
                   business_id=reply.business_id or None)


async def available(ctx: RequestContext) -> Reply:
    req = set_fields(agents_pb2.ListAvailableNumbersRequest(), ctx.query, "country", "area_code", "capability", "limit",
                     "after")
    reply = await ctx.rpc("agents").ListAvailableNumbers(req)
    found = {"numbers": [to_json(n) for n in reply.numbers], "has_more": reply.page.has_more}
    return {**found, "purchase": to_json(reply.purchase)} if reply.HasField("purchase") else found


async def assign(ctx: RequestContext) -> Reply:
    req = set_fields(agents_pb2.AssignPhoneNumberRequest(), ctx.body, "business_id", "phone_number", "agent_id")
    return to_json(await ctx.rpc("agents").AssignPhoneNumber(req))


async def update(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = set_fields(agents_pb2.UpdatePhoneNumberRequest(), b, "business_id", "phone_number", "agent_id")
    if b.get("forwarding") is not None:
        req.forwarding.CopyFrom(set_fields(agents_pb2.Forwarding(), b["forwarding"], "to", "ring_seconds"))
    req.update_mask.paths.extend(part for part in ("agent_id", "forwarding") if part in b)
    return to_json(await ctx.rpc("agents").UpdatePhoneNumber(req))


async def release(ctx: RequestContext) -> Reply:
    req = set_fields(agents_pb2.ReleasePhoneNumberRequest(), ctx.query, "business_id", "phone_number")
    return to_json(await ctx.rpc("agents").ReleasePhoneNumber(req))


async def legacy_numbers(ctx: RequestContext) -> Reply:
    req = set_fields(agents_pb2.ListPhoneNumbersRequest(page=ctx.page_request()), ctx.query, "business_id")
    req.all_businesses = "business_id" not in ctx.query
    reply = await ctx.rpc("agents").ListPhoneNumbers(req)
    legacy = ("id", "phone_number", "agent_id", "business_id", "created_at")
    return ctx.listing("numbers", [{k: v for k, v in to_json(n).items() if k in legacy} for n in reply.phone_numbers],
                   reply.page)


ROUTES = [
    Route("GET", f"{V1}/phone-numbers", list_numbers, "A business's phone numbers", "phone-numbers",
          scope="numbers:read", query=page_query(50, 100, business_id=BUSINESS, phone_number=E164),
          response="PhoneNumberList", errors=LIST_ERRORS, rpcs=(f"{AGENTS}/ListPhoneNumbers",),
          description="{business_id, phone_numbers: [...], has_more}, newest assignment first (cursor: after = the "
          "created_at of the last number of a page). Each number carries its "
          "capabilities (voice_inbound, voice_outbound, sms_inbound, sms_outbound, mms), block status (blocked, "
          "block_reason) and compliance: a2p.status (A2P 10DLC registration for application SMS from US numbers: "
          "not_required, not_started, pending, approved, rejected) and emergency_address.status (a registered "
          "emergency address for US and Canadian voice: not_required, not_set, pending, verified). created_at is "
          "when the number was assigned. A key that spans several businesses must pass business_id (400 "
          "bad_request otherwise); another account's business is 403."),
    Route("GET", f"{V1}/phone-numbers/available", available, "Unassigned numbers in the pool", "phone-numbers",
          scope="numbers:read", query={"type": "object", "properties": {
              "country": {"type": "string", "enum": list(REGIONS), "description": "an upper-case ISO 3166 two-letter code, e.g. US"},
              "area_code": {"type": "string", "pattern": AREA_CODE_PATTERN, "description": "digits, e.g. 415"},
              "capability": {"type": "string", "enum": ["voice", "sms", "voice_inbound", "voice_outbound",
                                                        "sms_inbound", "sms_outbound", "mms"],
                             "description": "voice and sms mean both directions"},
              "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 25},
              "after": {**E164, "description": "cursor: the phone_number of the last number of the previous page"}}},
          response="AvailableNumberList", errors=("unauthorized", "forbidden", "invalid_request"),
          rpcs=(f"{AGENTS}/ListAvailableNumbers",),
          description="{numbers: [{phone_number, country, area_code, locality, capabilities}], has_more}, ordered "
          "by country, area code and number. While has_more is true, pass the phone_number of the last number as "
          "after for the next page (the pool has no created_at, so this list's cursor is the number). Blocked "
          "numbers are never offered. The pool buys numbers from the carrier where they are wanted: when the first "
          "page (no after) of a request naming a country (and area_code) finds no number, the reply adds "
          "purchase: {country, area_code, status, requested_at, message}, a purchase asked for there (made once "
          "however many ask): status requested means numbers are being bought (usually within a minute; ask "
          "again), unavailable that the carrier had none for sale when last asked (message says so; it is asked "
          "again regularly). Without a country nothing is bought."),
    Route("POST", f"{V1}/phone-numbers", assign, "Assign a pool number to a business and agent", "phone-numbers",
          scope="numbers:write", body=NUMBER_ASSIGN, response="PhoneNumber", status=201,
          creates=Creates("phone_number", "/phone_number", carries=("business_id",)),
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found", "conflict",
                  "provider_error"),
          rpcs=(f"{AGENTS}/AssignPhoneNumber",),
          description="Imports the number at the voice provider, linked to the agent's assistant (agent_id "
          "optional), and emits phone_number.assigned. A number belongs to one business at a time: a number that "
          "is already assigned (even to this business) or blocked is 409 conflict, so of two concurrent assigns of "
          "one number exactly one succeeds. To move a number to another agent, use PATCH. A "
          "number not in the pool is 404; an agent of another business is 404."),
    Route("PATCH", f"{V1}/phone-numbers", update, "Point a number at another agent, or set its ring-first forwarding",
          "phone-numbers",
          scope="numbers:write", body=NUMBER_UPDATE, response="PhoneNumber",
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found", "provider_error"),
          rpcs=(f"{AGENTS}/UpdatePhoneNumber",),
          description="The number stays with the business (it never goes back to the pool). Send agent_id, "
          "forwarding or both; a field left out stays as it is. agent_id names the agent that answers the number "
          "from now on, or null for none (emits phone_number.assigned with the new agent_id when it changes). "
          "forwarding {to, ring_seconds} turns on ring-first forwarding: an inbound call first rings `to` (the "
          "owner's phone) for ring_seconds (default 20, 5 to 60); when nobody picks up there, the agent answers "
          "and the call goes on as usual (at the voice provider this needs its organization setting for "
          "transfer-outcome detection and fallback; providers/voice/vapi/FIDELITY-calls.md). A call handed to `to` ends "
          "with ended_reason call.ringing.hook-executed-transfer (the provider's transfer hook ended its part of "
          "the call); either way it is listed with forwarded_to. null turns forwarding "
          "off. Forwarding is set at the voice provider first (provider_error, nothing changed, when it refuses). "
          "`to` must be E.164 and not the number itself (400 invalid_request). A number this business does not "
          "hold, or an agent of another business, is 404. The reply is the number with its forwarding."),
    Route("DELETE", f"{V1}/phone-numbers", release, "Release a number back to the pool", "phone-numbers",
          scope="numbers:write",
          query={"type": "object", "properties": {"phone_number": E164, "business_id": BUSINESS},
                 "required": ["phone_number"]},
          response="PhoneNumberReleased", errors=("unauthorized", "forbidden", "bad_request", "invalid_request",
                                                  "not_found", "provider_error"),
          rpcs=(f"{AGENTS}/ReleasePhoneNumber",),
          description="Detaches the number at the voice provider, returns it to the pool (its compliance state "
          "is reset) and emits phone_number.released: {success: true, phone_number, business_id}. A number this "
          "business does not hold is 404."),
    Route("GET", f"{V1}/numbers", legacy_numbers, "Legacy alias of GET /api/v1/phone-numbers", "phone-numbers",
          scope="numbers:read", query=page_query(50, 100, business_id=UUID),
          response="LegacyNumberList", errors=("unauthorized", "forbidden", "invalid_request"),
          rpcs=(f"{AGENTS}/ListPhoneNumbers",),
          description="Deprecated: prefer /api/v1/phone-numbers. {numbers: [{id, phone_number, agent_id, "
          "business_id, created_at}], has_more} across every business of the key, or of business_id, newest "
          "assignment first (cursor: after = created_at of the last number)."),
]
