"""Communication runs: validate, preview, create (idempotent), list, pause/resume/cancel, jobs and attempts."""
from __future__ import annotations

import json

from contracts import runs
from core.text import IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN
from gateway.convert import to_json
from gateway.route import Reply, RequestContext, Route
from gateway.routes.calls import IDEMPOTENCY_HEADER
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, COMMUNICATION_RUN, RUN_CHANGE, RUN_DRAFT, RUN_ENVELOPE, UUID
from switchboard.v1 import sdr_pb2

SDR = "switchboard.v1.Sdr"
V1 = "/api/v1/communication-runs"
ERRORS = ("unauthorized", "forbidden", "bad_request", "invalid_request")
READ, WRITE = "communication-runs:read", "communication-runs:write"
# A run of the most touches, each with a modest context, fits; it travels to the sdr service in one gRPC message
# (4 MiB at most by default).
RUN_BODY_BYTES = 3 * 1024 * 1024


def _run_request(ctx: RequestContext) -> sdr_pb2.RunRequest:
    return sdr_pb2.RunRequest(run_json=json.dumps(ctx.body, separators=(",", ":")).encode())


async def validate(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").ValidateRun(_run_request(ctx)))


async def preview(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").PreviewRun(_run_request(ctx)))


async def create(ctx: RequestContext) -> Reply:
    req = _run_request(ctx)
    if IDEMPOTENCY_HEADER in ctx.request.headers:
        req.idempotency_key = ctx.request.headers[IDEMPOTENCY_HEADER]
    return to_json(await ctx.rpc("sdr").CreateRun(req))


async def list_runs(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.ListRunsRequest(page=ctx.page_request()), ctx.query, "id", "external_ref",
                     "business_id")
    reply = await ctx.rpc("sdr").ListRuns(req)
    if "id" in ctx.query:
        return to_json(reply.runs[0])
    return ctx.listing("runs", [to_json(r) for r in reply.runs], reply.page)


async def change(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("sdr").ChangeRun(sdr_pb2.ChangeRunRequest(id=ctx.body["id"],
                                                                            action=ctx.body["action"])))


async def list_jobs(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.ListJobsRequest(page=ctx.page_request()), ctx.query, "communication_run_id", "channel",
                     "status", "id")
    reply = await ctx.rpc("sdr").ListJobs(req)
    return ctx.listing("jobs", [to_json(j) for j in reply.jobs], reply.page)


async def list_attempts(ctx: RequestContext) -> Reply:
    req = set_fields(sdr_pb2.ListAttemptsRequest(page=ctx.page_request()), ctx.query, "sequence_id", "status")
    reply = await ctx.rpc("sdr").ListAttempts(req)
    return ctx.listing("attempts", [to_json(a) for a in reply.attempts], reply.page)


SHAPE = ("The body is the spec's run shape: {business_id, external_ref, touches: [{touch_id, channel (call or sms), "
         "target {phone, timezone}, scheduled_at, context}]}, with an optional agent_id (the agent that calls and "
         "texts; context.agent_id overrides it per touch; default the agent every touch names, else the business's "
         "one agent with a phone number) and retry "
         f"{{max_retries (default {runs.RetryPolicy.max_retries}), backoff_seconds (default "
         f"{list(runs.RetryPolicy.backoff_seconds)}), retry_on (default {list(runs.RETRYABLE)})}}. At most "
         f"{runs.MAX_TOUCHES} touches and {RUN_BODY_BYTES // 1024 // 1024} MiB of JSON; scheduled_at is RFC 3339 with an offset, at most {runs.HORIZON.days} days "
         "ahead and at most 24 hours past; an sms touch needs context.body. ")
STATES = ("Run states: scheduled (nothing executed yet) -> running (a touch was executed) -> completed (every job "
          "ended); pause (from scheduled or running) -> paused; resume -> scheduled or running; cancel (from "
          "scheduled, running or paused) -> canceled, final. Job states: pending (waits for its time), deferred (the "
          "compliance decision moved it to planned_at, at the run's creation or when it was due; rule and reason say "
          "why), executing (a scheduler is placing "
          "it), in_progress (its call was placed; the outcome is awaited), retrying (its call ended no-answer, busy "
          "or failed; due again at planned_at), paused, and the ends succeeded (a call answered by a person or a "
          "voicemail box, a text accepted by the provider), failed (attempts ran out, or a provider refused), "
          "refused (by the compliance decision: code number_on_dnc, dnc_registry_stale, number_opted_out or tcpa_violation) and "
          "canceled. ")
EXECUTION = ("Each job is created with the decision its touch gets as things stand at creation, the preview's: a "
             "touch outside the callee's legal window, or outside the business's own calling hours when it saved them "
             "(PUT /api/sdr/config), is created deferred with planned_at at its next opening and the rule and reason; "
             "one that would be refused stays pending at its time with the rule, code and reason (a consent or a "
             "do-not-call removal may come first). Every touch is executed when due (within about a second) by the "
             "scheduler, as the account that created the run, through the outbound compliance decision, taken again "
             "as of then (a STOP, a do-not-call entry or the frequency cap since creation count): a touch it defers "
             "waits for its next opening (communication.touch_deferred), a refused one ends refused. A business has at most "
             "RUNS_CALLS_IN_FLIGHT (default 10) calls in flight across its runs. Events: "
             "communication.touch_completed, communication.touch_failed, communication.touch_deferred and "
             "communication.run_ended; the call.* and sms.* events of a touch carry its external_ref and touch_id. ")

ROUTES = [
    Route("POST", f"{V1}/validate", validate, "Validate a communication run", "communication-runs", scope=WRITE,
          body=RUN_DRAFT, max_body_bytes=RUN_BODY_BYTES,
          response="CommunicationRunValidation",
          errors=ERRORS, rpcs=(f"{SDR}/ValidateRun",),
          description=SHAPE + "Nothing is stored. Validate reports rather than refuses: its body is a draft, any JSON "
          "object with a touches array (400 invalid_request only for a body that is not one; 403 forbidden for a "
          "business the key does not reach), and it answers 200 {valid, touches, problems}: every problem at once, each with the "
          "touch's index and touch_id (null for the run's own fields), the field (e.g. target.phone) and what to "
          "fix: a field the run or a touch does not have, a number that is not E.164, an unknown IANA zone, an "
          "unknown channel, a scheduled_at that is not RFC 3339 or out of range, a touch_id used twice, an sms "
          "touch without context.body, an agent that is not the business's or has no phone number, too many "
          "touches. Preview and create refuse a run with problems (400 invalid_request naming the first ones)."),
    Route("POST", f"{V1}/preview", preview, "Preview a communication run's planned execution", "communication-runs",
          scope=WRITE, body=COMMUNICATION_RUN, body_check=RUN_ENVELOPE, max_body_bytes=RUN_BODY_BYTES,
          response="CommunicationRunPreview",
          errors=ERRORS, rpcs=(f"{SDR}/PreviewRun",),
          description=SHAPE + "Nothing is stored or sent. For each touch (planned, in touch order): the requested "
          "time, the planned time after the outbound compliance decision as things stand now (the next legal "
          "moment in every time zone the callee may be in, for a touch outside it: outcome defer with the rule; "
          "the run's own earlier calls count towards the frequency cap), or outcome refuse with the code and why; "
          "counts by channel and by outcome; the first and last planned times. A run with problems is 400 "
          "invalid_request naming the first ones (validate lists them all)."),
    Route("POST", V1, create, "Create a communication run", "communication-runs", scope=WRITE,
          body=COMMUNICATION_RUN, body_check=RUN_ENVELOPE, max_body_bytes=RUN_BODY_BYTES,
          response="CommunicationRun", status=201,
          errors=(*ERRORS, "conflict"), rpcs=(f"{SDR}/CreateRun",),
          headers={IDEMPOTENCY_HEADER: {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX,
                                        "pattern": IDEMPOTENCY_KEY_PATTERN, "required": True,
                                        "description": "a unique value per run (e.g. a UUID): printable ASCII"}},
          description=SHAPE + "Requires the Idempotency-Key header (400 bad_request without it): the same key and "
          "body return the run created the first time (201, replayed true, the run as it stands now); the same "
          "key with another body is 409 conflict, and so is an external_ref another run of the business has. The "
          "run and all its jobs are stored in one transaction; its jobs counts them by status (deferred ones "
          "included). " + EXECUTION + STATES),
    Route("GET", V1, list_runs, "List communication runs newest first, or read one with ?id=",
          "communication-runs", scope=READ,
          query=page_query(20, 100, id=UUID, external_ref={"type": "string",
                                                           "pattern": f"^.{{1,{runs.REF_MAX}}}$"},
                           business_id=BUSINESS),
          response=("CommunicationRunList", "CommunicationRun"), read_one=list_runs, errors=(*ERRORS, "not_found"),
          rpcs=(f"{SDR}/ListRuns",),
          description="Each run with its jobs counted by status. ?id= answers the run itself (404 for another "
          "business's); ?external_ref= lists the run with that reference. " + STATES),
    Route("PATCH", V1, change, "Pause, resume or cancel a communication run", "communication-runs", scope=WRITE,
          body=RUN_CHANGE, response="CommunicationRun", errors=(*ERRORS, "not_found", "conflict"),
          rpcs=(f"{SDR}/ChangeRun",),
          description="pause: touches not yet started wait (calls in progress finish; a retry they earn waits too); "
          "resume: they are planned again from now, with the same rules (each is decided again when it runs); "
          "cancel: final, touches not yet started end canceled and communication.run_ended is sent. A move the "
          "run's state does not allow (e.g. resume a running run, anything on a completed or canceled one) is 409 "
          "conflict saying why. " + STATES),
    Route("GET", "/api/v1/communication-jobs", list_jobs, "Jobs of communication runs (one per touch)",
          "communication-runs", scope=READ,
          query=page_query(50, 500, communication_run_id=UUID, id=UUID,
                           channel={"type": "string", "enum": list(runs.CHANNELS)},
                           status={"type": "string", "enum": list(runs.JOB_STATES)}),
          response="CommunicationJobList", errors=ERRORS, rpcs=(f"{SDR}/ListJobs",),
          description="Latest scheduled first, across the key's businesses; planned_at is when a job still waiting "
          "goes out as the compliance decision has it (from the run's creation), scheduled_at when the run asked; "
          "rule, code and reason say why they differ, or what last happened to it. " + STATES),
    Route("GET", "/api/v1/communication-attempts", list_attempts, "Call attempts of communication runs",
          "communication-runs", scope=READ,
          query=page_query(50, 100, sequence_id={**UUID, "description": "the run's id"},
                           status={"type": "string", "enum": list(runs.ATTEMPT_STATES)}),
          response="CommunicationAttemptList", errors=ERRORS, rpcs=(f"{SDR}/ListAttempts",),
          description="Newest first. Each call placed for a touch: placed, then the call's outcome (completed, "
          "voicemail, no-answer, busy, failed, canceled); retry_eligible says whether the run's retry policy "
          "retries it (reason says why or why not) and next_attempt_at when. sequence_id is the run's id."),
]
