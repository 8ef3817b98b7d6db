"""Calls: place an outbound call, list calls, read one."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from contracts import calls, messaging
from core import deadlines
from core.errors import ServiceError
from core.outbound import GuardedClient, RefusedAddress, TooLarge
from core.settings import Settings
from gateway.convert import to_json
from gateway.route import PUBLIC, Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query, set_fields
from gateway.schemas import CALL_CREATE, CALL_STATUS, CREATED_FIELDS, LIST_FIELDS, UUID
from switchboard.v1 import calls_pb2

CALLS = "switchboard.v1.Calls"
V1 = "/api/v1"
# Spec aliases: the second name of each pair is read when the first is absent.
ALIASES = (("name", "customer_name"), ("first_message", "firstMessage"))
IDEMPOTENCY_HEADER = "Idempotency-Key"


def _pick(call: calls_pb2.Call, fields: tuple[str, ...]) -> dict[str, Any]:
    out = to_json(call)
    return {f: out[f] for f in fields}


async def create_call(ctx: RequestContext) -> Reply:
    b = dict(ctx.body)
    for name, alias in ALIASES:
        if name not in b and alias in b:
            b[name] = b[alias]
    req = set_fields(calls_pb2.CreateCallRequest(agent_id=b["agent_id"], to=b["to"]), b, "name", "context",
                     "first_message", "lead_id", "webhook_url", "max_duration", "callee_timezone")
    if b.get("compliance") == "enforce":
        req.compliance = calls_pb2.COMPLIANCE_MODE_ENFORCE
    if IDEMPOTENCY_HEADER in ctx.request.headers:
        req.idempotency_key = ctx.request.headers[IDEMPOTENCY_HEADER]
    call = await ctx.rpc("calls").CreateCall(req)
    ctx.call_id = call.id
    return _pick(call, CREATED_FIELDS)


async def list_calls(ctx: RequestContext) -> Reply:
    req = set_fields(calls_pb2.ListCallsRequest(page=ctx.page_request()), ctx.query, "agent_id", "status")
    reply = await ctx.rpc("calls").ListCalls(req)
    return ctx.listing("calls", [_pick(c, LIST_FIELDS) for c in reply.calls], reply.page)


async def get_call(ctx: RequestContext) -> Reply:
    call = await ctx.rpc("calls").GetCall(calls_pb2.GetCallRequest(id=ctx.query["id"]))
    ctx.call_id = call.id
    return to_json(call)


async def list_transcripts(ctx: RequestContext) -> Reply:
    req = set_fields(calls_pb2.ListTranscriptsRequest(page=ctx.page_request()), ctx.query, "agent_id", "days")
    reply = await ctx.rpc("calls").ListTranscripts(req)
    return ctx.listing("transcripts", [to_json(t) for t in reply.transcripts], reply.page)


async def recording(ctx: RequestContext) -> Reply:
    found = await ctx.rpc("calls").GetRecording(calls_pb2.GetRecordingRequest(call_id=ctx.query["call_id"]))
    ctx.call_id = found.call_id  # only once the call is the caller's: the usage log names no other's call
    return to_json(found)


PASSED_ON = ("Content-Length", "Content-Range", "Accept-Ranges")
# What a recording may be served as; any other type the storage names is replaced by audio/wav.
AUDIO_TYPES = ("audio/wav", "audio/x-wav", "audio/wave", "audio/mpeg")
RECORDING_MAX_BYTES = 4 * 1024**3  # above the longest call's WAV (12 h of 16-bit stereo at 16 kHz: 2.8 GB)
RECORDING_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=5, sock_read=30)


def recording_client(settings: Settings) -> GuardedClient:
    """The gateway's one client for recordings (loopback only on the local stack, where the simulator serves them)."""
    return GuardedClient(settings.environment == "local", timeout=RECORDING_TIMEOUT, max_bytes=RECORDING_MAX_BYTES)
STORAGE_FAILURES = (RefusedAddress, TooLarge, aiohttp.ClientError, asyncio.TimeoutError)
# The audio starts within this (the storage's first bytes); then it streams at the listener's pace.
AUDIO_START_SECONDS = 15.0


def at_storage(url: str, origins: tuple[str, ...]) -> bool:
    """Whether a stored recording URL is on one of the voice provider's storage origins (scheme, host and port)."""
    def origin(u: str) -> tuple[Any, ...]:
        parsed = URL(u)
        return parsed.scheme, parsed.host, parsed.port

    try:
        return origin(url) in {origin(o) for o in origins}
    except ValueError:
        return False


def audio_type(upstream: str) -> str:
    """The Content-Type served: never one a browser would render as a page on the API's origin."""
    return upstream if upstream in AUDIO_TYPES else "audio/wav"


async def recording_audio(ctx: RequestContext) -> Reply:
    """The audio itself, streamed from the provider's storage through the guarded client (its storage origins
    only, no redirect); a Range header goes along (a browser seeks)."""
    q = ctx.query
    source = await ctx.rpc("calls").GetRecordingSource(calls_pb2.GetRecordingSourceRequest(
        call_id=q["call_id"], expires=q["expires"], signature=q["signature"]))
    settings = ctx.deps.settings
    if not at_storage(source.url, settings.recording_origins):
        raise ServiceError("provider_error", "the recording is not on the voice provider's storage "
                           "(VOICE_RECORDING_ORIGINS), so it is not fetched")
    asked = {"Accept-Encoding": "identity", **({"Range": ctx.request.headers["Range"]}
                                               if "Range" in ctx.request.headers else {})}
    http = ctx.deps.recordings
    starting = asyncio.timeout(deadlines.time_left())  # the audio starts within the route's time limit
    try:
        async with starting, http.request("GET", source.url, headers=asked) as upstream:
            if upstream.status not in (200, 206, 416):
                raise ServiceError("provider_error", f"the voice provider did not serve the recording "
                                   f"({upstream.status}); try again later")
            chunks = http.chunks(upstream)
            first = await anext(chunks, b"")
            starting.reschedule(None)  # started: the rest streams at the listener's pace
            response = web.StreamResponse(status=upstream.status, headers={
                **{h: upstream.headers[h] for h in PASSED_ON if h in upstream.headers},
                "Content-Type": audio_type(upstream.content_type), "X-Content-Type-Options": "nosniff"})
            await response.prepare(ctx.request)
            await _relay(first, chunks, response)
            return response
    except STORAGE_FAILURES as exc:
        if starting.expired():
            raise ServiceError("timeout", "the voice provider's storage did not start the audio in time") from None
        raise ServiceError("provider_error", f"the voice provider's storage did not serve the recording "
                           f"({exc.__class__.__name__}); try again later") from None


async def _relay(first: bytes, chunks: AsyncIterator[bytes], response: web.StreamResponse) -> None:
    """The audio written on. A failure part-way (the storage stalls, the body outgrows its cap, the listener
    leaves) closes the connection after what was sent: the headers are out, so no error document can follow."""
    try:
        await response.write(first)
        async for chunk in chunks:
            await response.write(chunk)
    except STORAGE_FAILURES:
        response.force_close()


STATUSES = ("Statuses: queued (placed at the provider), ringing, in-progress, forwarding (offered to a "
            "forward-to phone: the number's ring-first forwarding, or a transfer), ended (over, outcome not known "
            "yet), then one outcome: completed (a conversation took place, with the agent or, ended_reason "
            "call.ringing.hook-executed-transfer, handed to the forward-to phone), no-answer, busy, voicemail (reached a "
            "voicemail box; never reported as completed), failed (the provider or the line failed) or canceled. A "
            "call only moves forward along that order, except that in-progress and forwarding may follow each other "
            "(a ring-first call nobody picked up at the forward-to phone goes on with the agent); an outcome is final. "
            "forwarded_to is the phone the call was offered to.")
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request", "bad_request")
COMPLIANCE_CODES = ("number_on_dnc", "dnc_registry_stale", "number_opted_out", "tcpa_violation")
ROUTES = [
    Route("POST", f"{V1}/calls", create_call, "Place an outbound call", "calls", scope="calls:write",
          body=CALL_CREATE, response="CallCreated", status=201, creates=Creates("call_id"),
          errors=(*ERRORS, "conflict", "call_failed", "unavailable", *COMPLIANCE_CODES), rpcs=(f"{CALLS}/CreateCall",),
          description="The agent calls `to` from its phone number (400 when it has none) with its outbound prompt, "
          "its outbound greeting (or firstMessage) and its outbound model, for at most max_duration seconds "
          f"(default {calls.DEFAULT_MAX_DURATION}, {calls.MAX_DURATION_BOUNDS[0]} to "
          f"{calls.MAX_DURATION_BOUNDS[1]}). The lead named by lead_id, or else the business's lead whose phone is "
          "`to`, enriches the prompt with name, lead_score, lead_status, interaction_count, "
          "days_since_first_contact and lead_source; business_name, business_phone (the calling number) and "
          "time_of_day (morning, afternoon or evening in the callee's time zone, from the number) are always set. "
          "API-initiated calls skip the built-in compliance checks unless compliance is enforce: by default the "
          "caller answers for consent and do-not-call. Every call, skip or enforce, is counted against the "
          "callee's frequency caps (with the texts sent to them) and logged (GET /api/v1/compliance/decisions): a "
          "skipped call as allowed with rule not_checked and what the checks would have said, never refused. With "
          "compliance enforce the platform's outbound compliance decision runs before anything reaches the voice "
          "provider. It refuses with 400 and a message saying what would make the call legal: "
          "number_on_dnc (the business's or the platform's do-not-call list, a lead marked do_not_contact, or the "
          "national do-not-call registry where the platform's operator loaded the callee's area code, unless they "
          "opted in or have an established business relationship: a purchase within 18 months, an inquiry within "
          "3), dnc_registry_stale (the registry's data of that area code is older than 31 days: nothing there is "
          "called until the operator refreshes it), "
          "number_opted_out (an opt-out, or no consent basis: an opt-in recorded with POST /api/v1/sms/consent, "
          "the callee having called or texted the business within "
          f"{messaging.CONVERSATIONAL_CONSENT_DAYS} days, or a lead marked converted), or tcpa_violation: "
          "outside the callee's legal window (08:00-21:00 federal, stricter state rules by area code and by the "
          "lead's stated state, Sundays and legal holidays where a state forbids them) in every time zone the "
          "callee may be in (callee_timezone, the lead's state, the area code's zones), or over a frequency cap "
          "(over 24 hours per callee: a state's, counting the channels its law covers, e.g. Florida's 3 calls and "
          "texts together; and the platform's COMPLIANCE_CALLS_PER_24H calls), or outside the business's own calling "
          "hours when it saved them in its SDR config (PUT /api/sdr/config: business_hours_start/end in the "
          "callee's local time, stricter than the law, never looser); the message names the rule and the "
          "instant the call becomes legal. Numbers outside the US get the federal window in their own zones. "
          "Send an Idempotency-Key header to make a retry safe: for 24 hours the same key with the same body "
          "returns the first call (201), with another body 409 conflict. When the provider refuses the call it is "
          "500 call_failed, the call is recorded failed with the provider's reason, and the key is freed for a "
          "retry. When the provider's answer is lost (it may have placed the call) and it cannot say whether it "
          "did, 503 unavailable: retry with the same Idempotency-Key, which answers the call once the provider "
          "says it has it, or places it once. Each business may place its plan's calls_per_day and use its call_minutes_per_day in a UTC day, "
          "whatever key, replica or run places them (GET /api/v1/balance shows them with today's use): past "
          "either, 429 rate_limited with error.limit naming it and Retry-After until the next UTC midnight. "
          + STATUSES),
    Route("GET", f"{V1}/calls", list_calls, "List calls newest first, or read one with ?id=", "calls",
          scope="calls:read", query=page_query(50, 100, id=UUID, agent_id=UUID, status=CALL_STATUS),
          response=("CallList", "Call"), read_one=get_call, errors=ERRORS,
          rpcs=(f"{CALLS}/ListCalls", f"{CALLS}/GetCall"),
          description="Across the key's businesses. With ?id=: the whole call (schema Call), including the "
          "enrichment variables it was placed with; a call of another business is 404. " + STATUSES),
    Route("GET", f"{V1}/transcripts", list_transcripts, "Transcripts of calls, newest first", "calls",
          scope="calls:read", query=page_query(20, 50, agent_id=UUID, days={
              "type": "integer", "minimum": 1, "maximum": calls.TRANSCRIPT_DAYS[1],
              "default": calls.TRANSCRIPT_DAYS[0], "description": "calls of the last `days` days"}),
          response="TranscriptList", errors=ERRORS, rpcs=(f"{CALLS}/ListTranscripts",),
          description="Across the key's businesses, only calls that have a transcript. Each transcript is one "
          "line per turn, 'Agent: ...' or 'Caller: ...', separated by newlines."),
    Route("GET", f"{V1}/recordings", recording, "A call's recording and transcript state, with a link to the audio",
          "calls", scope="calls:read", query={"type": "object", "properties": {"call_id": UUID},
                                              "required": ["call_id"]},
          response="Recording", errors=ERRORS, rpcs=(f"{CALLS}/GetRecording",),
          description="recording_status and transcript_status are available, pending (the call's end-of-call "
          "report has not come yet) or none. recording_url is a signed link to the audio (WAV) that needs no key "
          f"and expires after {calls.RECORDING_URL_TTL_SECONDS // 60} minutes (recording_url_expires_at); it "
          "serves Range requests, so a browser's player can seek. A call of another business is 404."),
    Route("GET", calls.AUDIO_PATH, recording_audio, "The audio of a recording (a signed link)", "calls",
          auth=PUBLIC, media="audio/wav", ranges=True, query={"type": "object", "properties": {
              "call_id": UUID, "expires": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1,
                                           "description": "Unix seconds"},
              "signature": {"type": "string", "pattern": "^[0-9a-f]{64}$"}},
              "required": ["call_id", "expires", "signature"]},
          errors=("unauthorized", "not_found", "provider_error"),
          rpcs=(f"{CALLS}/GetRecordingSource",), time_limit_seconds=AUDIO_START_SECONDS,
          description="The link GET /api/v1/recordings gives; a changed or expired link is 401. Send a Range "
          "header for a part (206 with Content-Range). The audio is fetched only from the voice provider's storage "
          "(VOICE_RECORDING_ORIGINS; by default Vapi's storage, or the simulator on the local stack), at public "
          "addresses, without following redirects, and is always served as audio (audio/wav unless the storage "
          "names another audio type) with X-Content-Type-Options: nosniff. A recording stored anywhere else, a "
          "redirect, or a storage that fails or cannot be reached is 500 provider_error; one that has not started the audio "
          "within the time limit is 504 timeout."),
]
