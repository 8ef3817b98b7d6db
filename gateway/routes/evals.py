"""Evals area: eval scenarios (scripted mock conversations graded per assistant turn), mirrored to the voice
provider."""
from __future__ import annotations

from contracts import evals
from core import deadlines
from core.messages import struct
from gateway.convert import to_json
from gateway.route import Reply, RequestContext, Route
from gateway.routes.params import page_query
from gateway.schemas import EVAL_CREATE, EVAL_RUN_REQUEST, EVAL_UPDATE, FAN_OUT_ENTRY, UUID
from switchboard.v1 import evals_pb2

EVALS = "switchboard.v1.Evals"
V1 = "/api/v1"
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request", "bad_request")
# A run that waits: its deadline is max_wait_ms with this much more for starting the runs and answering.
WAIT_MARGIN_SECONDS = 15.0


async def create_eval(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = evals_pb2.CreateEvalRequest(agent_id=b["agent_id"], business_id=b["business_id"], name=b["name"],
                                      messages=[struct(turn) for turn in b["messages"]])
    if "description" in b:
        req.description = b["description"]
    return to_json(await ctx.rpc("evals").CreateEval(req))


async def list_evals(ctx: RequestContext) -> Reply:
    req = evals_pb2.ListEvalsRequest(page=ctx.page_request())
    if "agent_id" in ctx.query:
        req.agent_id = ctx.query["agent_id"]
    reply = await ctx.rpc("evals").ListEvals(req)
    return ctx.listing("evals", [to_json(e, omit=("messages",)) for e in reply.evals], reply.page)


async def get_eval(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("evals").GetEval(evals_pb2.GetEvalRequest(id=ctx.query["id"])))


async def update_eval(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = evals_pb2.UpdateEvalRequest(id=b["id"])
    for field in ("name", "description"):
        if field in b:
            setattr(req, field, b[field])
    if "messages" in b:
        req.messages_given = True
        req.messages.extend(struct(turn) for turn in b["messages"])
    return to_json(await ctx.rpc("evals").UpdateEval(req))


async def delete_eval(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("evals").DeleteEval(evals_pb2.DeleteEvalRequest(id=ctx.query["id"]))
    return {"success": reply.success, "id": reply.id}


async def run_eval(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = evals_pb2.RunEvalRequest()
    for field in ("eval_id", "agent_id", "wait", "max_wait_ms"):
        if field in b:
            setattr(req, field, b[field])
    # The call waits up to max_wait_ms for the runs: its deadline is that wait with room for the rest.
    wait_seconds = (b.get("max_wait_ms", evals.MAX_WAIT_MS[0]) / 1000) if b.get("wait", True) else 0
    reply = await ctx.rpc("evals").RunEval(req, timeout=max(deadlines.of_rpc(f"{EVALS}/RunEval"),
                                                            wait_seconds + WAIT_MARGIN_SECONDS))
    if reply.HasField("run"):
        return to_json(reply.run, omit=RUN_DETAILS)
    fan = to_json(reply.fan_out)
    fan["results"] = [{k: r[k] for k in FAN_OUT_ENTRY} for r in fan["results"]]
    return fan


async def eval_runs(ctx: RequestContext) -> Reply:
    req = evals_pb2.GetEvalRunsRequest()
    for field in ("run_id", "provider_run_id", "agent_id"):
        if field in ctx.query:
            setattr(req, field, ctx.query[field])
    reply = await ctx.rpc("evals").GetEvalRuns(req)
    if "agent_id" in ctx.query:
        return {"runs": [to_json(r) for r in reply.runs]}
    return to_json(reply.runs[0])


# The single-run reply is the spec's {run_id, provider_run_id, status, passed, results}; GET shows the rest.
RUN_DETAILS = ("eval_id", "name", "agent_id", "ended_reason", "created_at", "ended_at", "trigger", "channel",
               "stubbed_tool_calls")
RUN_STATES = ("status: queued (stored, or submitted to the provider and not started: a run may wait here for a "
              "free slot under the provider's per-organisation rate limit), in-progress (the mock conversation is "
              "playing), ended. Once ended, results and passed never change; passed is true when every graded turn "
              "passed and the conversation was played to its end.")
TEST_MODE = ("Test mode: no tool runs in an eval run (nothing is texted, booked, written, transferred or fetched). "
             "stubbed_tool_calls lists the tool calls the assistant made in the ended run ({turn, name, arguments, "
             "result}), read from the provider's result messages; result is the stub the assistant got instead, a "
             "sentence saying what a live call would have done (\"(test mode) An appointment at ... would be booked. "
             "Nothing was booked.\"), given to the provider as the scenario's mock tool response for each call a "
             "judge plan's toolCalls expects; null for a call the scenario did not expect. trigger says what started "
             "a run: request (this API) or eval_gate (an agent's eval gate; channel names the agent channels whose "
             "new configuration it tested).")
MIRRORED = ("Each scenario is mirrored to the voice provider's eval API (provider_eval_id); when the provider "
            "refuses or cannot be reached the answer is 500 provider_error and nothing changes on either side.")
ROUTES = [
    Route("POST", f"{V1}/evals", create_eval, "Create an eval scenario of an agent", "evals", scope="evals:write",
          body=EVAL_CREATE, response="EvalScenario", status=201, errors=(*ERRORS, "provider_error"),
          rpcs=(f"{EVALS}/CreateEval",),
          description="A scripted mock conversation graded per assistant turn. Turns alternate user and assistant "
          "(at least one assistant turn); each refusal names the turn and the field (400 invalid_request). "
          + MIRRORED),
    Route("GET", f"{V1}/evals", list_evals, "Eval scenarios, newest first, or one with ?id=", "evals",
          scope="evals:read", query=page_query(50, 100, id=UUID, agent_id=UUID), read_one=get_eval,
          response=("EvalScenarioList", "EvalScenario"), errors=ERRORS,
          rpcs=(f"{EVALS}/ListEvals", f"{EVALS}/GetEval"),
          description="With agent_id: that agent's scenarios; without it, every scenario of the key's businesses; "
          "both without their messages. With id: one scenario with its messages. A scenario of another business "
          "is 404, an agent of another business an empty list."),
    Route("PATCH", f"{V1}/evals", update_eval, "Rename an eval scenario or replace its turns", "evals",
          scope="evals:write", body=EVAL_UPDATE, response="EvalScenario",
          errors=(*ERRORS, "conflict", "provider_error"), rpcs=(f"{EVALS}/UpdateEval",),
          description="messages replaces the whole turn list. The provider's mirror is changed first, under the "
          "scenario's write lease (a concurrent write waits, then 409 conflict); if our write then fails the "
          "mirror is put back. " + MIRRORED),
    Route("DELETE", f"{V1}/evals", delete_eval, "Delete an eval scenario and its mirror", "evals",
          scope="evals:write", query={"type": "object", "properties": {"id": UUID}, "required": ["id"]},
          response="Success", errors=(*ERRORS, "provider_error"), rpcs=(f"{EVALS}/DeleteEval",),
          description="A mirror already gone at the provider does not stop the delete. " + MIRRORED),
    Route("POST", f"{V1}/evals/run", run_eval, "Run one eval scenario, or every scenario of an agent", "evals",
          scope="evals:write", body=EVAL_RUN_REQUEST, response=("EvalRun", "EvalFanOut"),
          errors=ERRORS, rpcs=(f"{EVALS}/RunEval",),
          time_limit_seconds=evals.MAX_WAIT_MS[1] / 1000 + WAIT_MARGIN_SECONDS,
          description="Exactly one of eval_id (one run: {run_id, provider_run_id, status, passed, results}) and "
          "agent_id (every scenario of the agent in parallel: {total, completed, passed, failed, results: [{eval_id, "
          "name, run_id, provider_run_id, status, passed}]}). With wait (the default) the answer comes when the runs "
          "have ended or after max_wait_ms (default 60000, at most 110000), whichever is first; unfinished runs are "
          "then read with GET /api/v1/evals/run. Runs go to the voice provider at most EVAL_RUN_CONCURRENCY (5) at a "
          "time from each evals replica, backing off on the provider's 429 answers; a run it never takes ends with "
          "passed false and ended_reason saying why. " + RUN_STATES),
    Route("GET", f"{V1}/evals/run", eval_runs, "Read an eval run, or an agent's recent runs", "evals",
          scope="evals:read", query={"type": "object", "properties": {
              "run_id": UUID, "provider_run_id": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,200}$",
                                  "description": "the run's id at the voice provider"},
              "agent_id": UUID}},
          response=("EvalRun", "EvalRunList"), errors=ERRORS, rpcs=(f"{EVALS}/GetEvalRuns",),
          description="Exactly one of run_id, provider_run_id (one run) and agent_id (its 50 most recent runs, newest "
          "first, as {runs}). An unfinished run is refreshed from the provider as it is read. " + RUN_STATES + " "
          + TEST_MODE),
]
