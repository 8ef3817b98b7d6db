"""Evals area: eval scenarios (scripted mock conversations graded per assistant turn), mirrored to the voice
provider."""
from __future__ import annotations

from core.messages import struct
from gateway.convert import to_json
from gateway.routes import RequestContext, Route
from gateway.routes.params import page_query
from gateway.schemas import EVAL_CREATE, EVAL_UPDATE, UUID
from switchboard.v1 import evals_pb2

EVALS = "switchboard.v1.Evals"
V1 = "/api/v1"
ERRORS = ("unauthorized", "forbidden", "not_found", "invalid_request", "bad_request")


async def create_eval(ctx: RequestContext):
    b = ctx.body
    req = evals_pb2.CreateEvalRequest(agent_id=b["agent_id"], business_id=b["business_id"], name=b["name"],
                                      messages=[struct(turn) for turn in b["messages"]])
    if "description" in b:
        req.description = b["description"]
    return to_json(await ctx.rpc("evals").CreateEval(req))


async def list_evals(ctx: RequestContext):
    req = evals_pb2.ListEvalsRequest(page=ctx.page_request())
    if "agent_id" in ctx.query:
        req.agent_id = ctx.query["agent_id"]
    reply = await ctx.rpc("evals").ListEvals(req)
    return ctx.listing("evals", [to_json(e, omit=("messages",)) for e in reply.evals], reply.page)


async def get_eval(ctx: RequestContext):
    return to_json(await ctx.rpc("evals").GetEval(evals_pb2.GetEvalRequest(id=ctx.query["id"])))


async def update_eval(ctx: RequestContext):
    b = ctx.body
    req = evals_pb2.UpdateEvalRequest(id=b["id"])
    for field in ("name", "description"):
        if field in b:
            setattr(req, field, b[field])
    if "messages" in b:
        req.messages_given = True
        req.messages.extend(struct(turn) for turn in b["messages"])
    return to_json(await ctx.rpc("evals").UpdateEval(req))


async def delete_eval(ctx: RequestContext):
    reply = await ctx.rpc("evals").DeleteEval(evals_pb2.DeleteEvalRequest(id=ctx.query["id"]))
    return {"success": reply.success, "id": reply.id}


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
]
