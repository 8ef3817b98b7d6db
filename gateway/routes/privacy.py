"""Privacy: the erasure of a person across every service, as a tracked job (services.accounts.privacy)."""
from __future__ import annotations

from aiohttp import web

from core.text import IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN
from gateway.convert import to_json
from gateway.route import Creates, Reply, RequestContext, Route
from gateway.routes.calls import IDEMPOTENCY_HEADER
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, ERASURE_CREATE, UUID
from switchboard.v1 import accounts_pb2

ACCOUNTS = "switchboard.v1.Accounts"
V1 = "/api/v1/privacy/erasures"
READ, WRITE = "privacy:read", "privacy:write"
ERRORS = ("unauthorized", "forbidden", "bad_request")
JOB = ("The erasure runs as a job in the background, claimed under a lease by one replica of the accounts service at "
       "a time, step by step: sdr (leads, their scores, notes, bookings), calls (calls, transcripts, recordings and "
       "tool-call arguments, here and at the voice provider), messaging (texts, emails, consent; the phone put on the "
       "business's do-not-contact list as a hash unless suppress is false, so their opt-out holds without keeping "
       "the number) and webhooks (the event history naming the person or their records), each step given the ids "
       "the steps before found and its report stored as soon as it answers: a job taken over after a crash resumes "
       "at the first step not done (steps_done). status: queued (waiting for its next attempt: after a step failed, "
       "error says why and next_attempt_at when it is tried again, the wait doubling from ERASURE_RETRY_SECONDS up "
       "to an hour), running, completed (completed_at; report lists {service, what, action, count} per kind of "
       "record, e.g. calls calls.transcript redacted 2; a person the business does not know completes with counts "
       "of zero, not an error), failed (given up after ERASURE_MAX_ATTEMPTS attempts, 20 by default, about half a "
       "day: send the request again). Completed, it emits erasure.completed {erasure_id, business_id, report} to "
       "webhook subscribers, with no personal data, for partners to erase their own copies. The subject is never "
       "answered in full: phone_masked keeps the last 4 digits and email_masked the domain; the phone and email "
       "themselves are kept only until the job is over (completed or failed), then cleared.")


def _erasure(reply: accounts_pb2.Erasure) -> dict[str, object]:
    return to_json(reply)


async def create(ctx: RequestContext) -> Reply:
    req = set_fields(accounts_pb2.CreateErasureRequest(suppress=ctx.body.get("suppress", True)), ctx.body,
                     "business_id", "phone", "email")
    if IDEMPOTENCY_HEADER in ctx.request.headers:
        req.idempotency_key = ctx.request.headers[IDEMPOTENCY_HEADER]
    created = await ctx.rpc("accounts").CreateErasure(req)
    body = _erasure(created.erasure)
    return web.json_response(body, status=200) if created.existing else body


async def get_erasure(ctx: RequestContext) -> Reply:
    return _erasure(await ctx.rpc("accounts").GetErasure(accounts_pb2.GetErasureRequest(id=ctx.query["id"])))


async def list_erasures(ctx: RequestContext) -> Reply:
    req = set_fields(accounts_pb2.ListErasuresRequest(page=ctx.page_request()), ctx.query, "business_id")
    reply = await ctx.rpc("accounts").ListErasures(req)
    return ctx.listing("erasures", [_erasure(e) for e in reply.erasures], reply.page)


ROUTES = [
    Route("POST", V1, create, "Erase a person's data everywhere (a job)", "privacy", scope=WRITE,
          body=ERASURE_CREATE, response="Erasure", status=202, creates=Creates("erasure_id"),
          validation_code="validation_error", errors=(*ERRORS, "validation_error", "invalid_request", "conflict"), rpcs=(f"{ACCOUNTS}/CreateErasure",),
          own_replies={200: "An erasure of the same person (the same phone and email) is already queued or running "
                            "in the business: that one, as it stands"},
          headers={IDEMPOTENCY_HEADER: {
              "type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX, "pattern": IDEMPOTENCY_KEY_PATTERN,
              "description": "a unique value per request (e.g. a UUID): the same key of the business answers the "
              "erasure it made (202, as it stands now); with another body 409 conflict while that erasure is not "
              "over (once over, its subject is no longer kept to compare: the key answers it whatever the body)"}},
          description="Give phone, email or both (400 validation_error with neither, saying what to send). phone is "
          "E.164 (+14155550123) or the national format of the business's country, the country of its "
          "phone_forward_to (US without one), e.g. (415) 555-0123; email is checked and lower-cased. business_id "
          "may be left out when the key reaches one business; a business not the key's is 403 forbidden, and a key "
          "spanning several without business_id is 400 bad_request. Answers 202 with the erasure, queued and "
          "started at once; an erasure of the same person already queued or running in the business answers 200 "
          "with that one. " + JOB),
    Route("GET", V1, list_erasures, "List erasures newest first, or read one with ?id=", "privacy", scope=READ,
          query=page_query(50, 100, id=UUID, business_id=BUSINESS), response=("ErasureList", "Erasure"),
          read_one=get_erasure, errors=(*ERRORS, "not_found"),
          rpcs=(f"{ACCOUNTS}/ListErasures", f"{ACCOUNTS}/GetErasure"),
          description="Across the key's businesses (or the one business_id names). With ?id=: the erasure itself "
          "(schema Erasure); another business's is 404 not_found. " + JOB),
]
