"""Accounts area: signup, API keys (dashboard session), workspaces, discovery, usage, balance."""
from __future__ import annotations

import asyncio
from datetime import datetime, timezone

import grpc

from core.messages import struct
from core.scopes import ALL_SCOPES
from core.settings import SIGNUP_LIMIT_PER_HOUR
from gateway.clientip import client_ip
from gateway.context import ROUTE_TABLE
from gateway.convert import to_json
from gateway.readiness import check_ready
from gateway.routes import KEY, PUBLIC, SESSION, Creates, RequestContext, Route
from gateway.routes.params import page_query
from gateway.schemas import (
    KEY_CREATE,
    KEY_UPDATE,
    SIGNUP_REQUEST,
    WORKSPACE_CREATE,
    WORKSPACE_UPDATE,
)
from gateway.timeparse import set_time
from services.accounts import domain as accounts
from switchboard.v1 import accounts_pb2, agents_pb2, common_pb2, messaging_pb2

ACCOUNTS = "switchboard.v1.Accounts"
# -- signup --------------------------------------------------------------------

async def signup(ctx: RequestContext):
    b = ctx.body
    reply = await ctx.rpc("accounts").Signup(accounts_pb2.SignupRequest(
        business_name=b["business_name"], email=b["email"], business_type=b.get("business_type", ""),
        website=b.get("website", ""), phone_forward_to=b.get("phone_forward_to", ""), plan_id=b.get("plan_id", ""),
        client_ip=client_ip(ctx.request, ctx.deps.settings.trusted_proxies)))
    return to_json(reply)


# -- API keys (dashboard session) --------------------------------------------------

async def list_keys(ctx: RequestContext):
    reply = await ctx.rpc("accounts").ListKeys(accounts_pb2.ListKeysRequest(session_token=ctx.session_token))
    return {"keys": [to_json(k, omit=("key",)) for k in reply.keys]}


async def create_key(ctx: RequestContext):
    b = ctx.body
    req = accounts_pb2.CreateKeyRequest(session_token=ctx.session_token)
    if b.get("name") is not None:
        req.name = b["name"]
    if b.get("business_id"):
        req.business_id = b["business_id"]
    if "scopes" in b:
        req.scopes_given = True
        req.scopes.extend(b["scopes"])
    if b.get("expires_at"):
        set_time(req.expires_at, b["expires_at"], "expires_at")
    return to_json(await ctx.rpc("accounts").CreateKey(req))


async def update_key(ctx: RequestContext):
    b = ctx.body
    req = accounts_pb2.UpdateKeyRequest(session_token=ctx.session_token, id=b["id"], expire=bool(b.get("expire")),
                                        revoke=bool(b.get("revoke")))
    if "name" in b:
        req.name = b["name"]
    if "scopes" in b:
        req.scopes_given = True
        req.scopes.extend(b["scopes"])
    if "business_id" in b:
        req.business_id = b["business_id"] or ""
    if "expires_at" in b:
        if b["expires_at"] is None:
            req.clear_expires_at = True
        else:
            set_time(req.expires_at, b["expires_at"], "expires_at")
    reply = await ctx.rpc("accounts").UpdateKey(req)
    ctx.deps.auth.clear()  # this replica forgets at once; the others hear it over NATS
    return to_json(reply, omit=("key",))


async def delete_key(ctx: RequestContext):
    reply = await ctx.rpc("accounts").RevokeKey(accounts_pb2.RevokeKeyRequest(session_token=ctx.session_token,
                                                                             id=ctx.query["id"]))
    ctx.deps.auth.clear()
    return {"success": reply.success}


# -- workspaces --------------------------------------------------------------------

async def get_workspace(ctx: RequestContext):
    """As a list of one: the published shape of ?id= on this route."""
    workspace = await ctx.rpc("accounts").GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=ctx.query["id"]))
    return ctx.listing("workspaces", [to_json(workspace)], common_pb2.PageInfo(has_more=False))


async def list_workspaces(ctx: RequestContext):
    req = accounts_pb2.ListWorkspacesRequest(page=ctx.page_request())
    reply = await ctx.rpc("accounts").ListWorkspaces(req)
    return ctx.listing("workspaces", [to_json(w) for w in reply.workspaces], reply.page)


async def create_workspace(ctx: RequestContext):
    b = ctx.body
    req = accounts_pb2.CreateWorkspaceRequest(name=b["name"], metadata=struct(b.get("metadata") or {}))
    if b.get("external_ref") is not None:
        req.external_ref = b["external_ref"]
    return to_json(await ctx.rpc("accounts").CreateWorkspace(req))


def workspace_update_scopes(body: dict) -> tuple[str, ...]:
    """Renames and metadata need workspaces:write; a lifecycle action needs lifecycle:write."""
    needed = ()
    if "name" in body or "metadata" in body:
        needed += ("workspaces:write",)
    if "action" in body:
        needed += ("lifecycle:write",)
    return needed or ("workspaces:write",)


async def update_workspace(ctx: RequestContext):
    b = ctx.body
    req = accounts_pb2.UpdateWorkspaceRequest(id=b["id"])
    if "name" in b:
        req.name = b["name"]
    if "metadata" in b:
        req.metadata.CopyFrom(struct(b["metadata"]))
    if "action" in b:
        req.action = b["action"]
    return to_json(await ctx.rpc("accounts").UpdateWorkspace(req))


# -- discovery, usage, balance ----------------------------------------------------------

async def capabilities(ctx: RequestContext):
    p = ctx.principal
    reply = await ctx.rpc("accounts").ListWorkspaces(
        accounts_pb2.ListWorkspacesRequest(page=common_pb2.PageRequest(limit=100)))
    endpoints = []
    for r in ctx.request.app[ROUTE_TABLE]:
        scope = r.scope if isinstance(r.scope, str) else None
        endpoints.append({"method": r.method, "path": r.path, "scope": scope, "auth": r.auth,
                          "allowed": r.auth != KEY or scope is None or p.has_scope(scope)})
    return {
        "account_id": p.account_id,
        "key": {"id": p.key_id, "scopes": list(p.scopes), "business_id": p.bound_business_id or None},
        "workspaces": [{"id": w.id, "name": w.name, "lifecycle_state": w.lifecycle_state} for w in reply.workspaces],
        "scopes": list(ALL_SCOPES),
        "endpoints": endpoints,
    }


async def health(ctx: RequestContext):
    report, voice, messaging = await asyncio.gather(
        check_ready(ctx.deps),
        _provider_status(ctx.deps.clients["agents"].CheckVoiceProvider(agents_pb2.CheckVoiceProviderRequest(),
                                                                       timeout=10)),
        _provider_status(ctx.deps.clients["messaging"].CheckProvider(messaging_pb2.CheckProviderRequest(),
                                                                     timeout=10)))
    return {
        "status": "ok" if report["ready"] and voice == messaging == "ok" else "degraded",
        "api": "ok",
        "queue": report["nats"],
        "services": report["services"],
        # The payments adapter arrives with signup payments.
        "providers": {"voice": voice, "messaging": messaging, "payments": "not_configured"},
        "checked_at": datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"),
    }


async def _provider_status(check) -> str:
    """A provider's status as the service that checks it reports it."""
    try:
        return (await check).status
    except grpc.aio.AioRpcError:
        return "unknown"  # the checking service itself is down: readiness says so under services


async def usage(ctx: RequestContext):
    q = ctx.query
    req = accounts_pb2.ListUsageRequest(page=ctx.page_request())
    for field in ("start", "end"):
        if field in q:
            set_time(getattr(req, field), q[field], field)
    reply = await ctx.rpc("accounts").ListUsage(req)
    return ctx.listing("usage", [to_json(u, omit=("api_key_id", "account_id", "business_id")) for u in reply.usage],
                   reply.page)


async def balance(ctx: RequestContext):
    reply, counts = await asyncio.gather(ctx.rpc("accounts").GetBalance(accounts_pb2.GetBalanceRequest()),
                                         ctx.rpc("agents").CountPhoneNumbers(agents_pb2.CountPhoneNumbersRequest()))
    numbers = {c.business_id: c.phone_numbers for c in counts.businesses}
    return {"businesses": [{**to_json(b), "phone_numbers": numbers.get(b.business_id, 0)} for b in reply.businesses]}


V1 = "/api/v1"
ROUTES = [
    Route("POST", f"{V1}/signup", signup, f"Create an account, a business on a {accounts.TRIAL_DAYS}-day trial and an "
          "API key", "accounts",
          auth=PUBLIC, body=SIGNUP_REQUEST, response="SignupResponse", validation_code="validation_error",
          errors=("validation_error", "email_exists", "rate_limited"), rpcs=(f"{ACCOUNTS}/Signup",),
          description=f"Limited to {SIGNUP_LIMIT_PER_HOUR} signups per hour per client address by default (429 "
          "rate_limited with Retry-After). Payment capture and provisioning of the intake agent and phone number "
          "arrive in a later release: until then provisioning_deferred is always true, agent_id and phone_number "
          f"are null, payment_capture is '{accounts.HOSTED_CHECKOUT}' and checkout_url is omitted. "
          f"dashboard_magic_link signs the owner in once within {accounts.MAGIC_LINK_TTL.total_seconds() / 3600:g} "
          f"hours; the dashboard session it opens lasts {accounts.SESSION_TTL.days} days."),
    Route("GET", f"{V1}/keys", list_keys, "List the account's API keys (without secrets)", "keys", auth=SESSION,
          response="ApiKeyList", errors=("unauthorized",), rpcs=(f"{ACCOUNTS}/ListKeys",)),
    Route("POST", f"{V1}/keys", create_key, "Create an API key; the full key is shown once", "keys", auth=SESSION,
          body=KEY_CREATE, response="ApiKeyCreated", status=201, creates=Creates("key_id"), errors=("unauthorized", "invalid_request", "forbidden"),
          rpcs=(f"{ACCOUNTS}/CreateKey",),
          description="Scopes default to the read-only set. business_id limits the key to one business."),
    Route("PATCH", f"{V1}/keys", update_key, "Rename, rescope, expire or revoke an API key", "keys", auth=SESSION,
          body=KEY_UPDATE, response="ApiKey", errors=("unauthorized", "invalid_request", "not_found", "forbidden"),
          rpcs=(f"{ACCOUNTS}/UpdateKey",),
          description="revoke: true stops the key on the next request on every gateway replica; expire: true sets "
          "its expiry to now; expires_at: null removes the expiry."),
    Route("DELETE", f"{V1}/keys", delete_key, "Revoke an API key", "keys", auth=SESSION, query={
        "type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]},
          response="Success", errors=("unauthorized", "invalid_request", "not_found"), rpcs=(f"{ACCOUNTS}/RevokeKey",)),
    Route("GET", f"{V1}/workspaces", list_workspaces, "List workspaces, newest first, or read one with ?id=",
          "workspaces", scope="workspaces:read", query=page_query(50, 100, id={"type": "string", "format": "uuid"}),
          response="WorkspaceList", read_one=get_workspace,
          errors=("unauthorized", "forbidden", "not_found", "invalid_request"),
          rpcs=(f"{ACCOUNTS}/ListWorkspaces", f"{ACCOUNTS}/GetWorkspace")),
    Route("POST", f"{V1}/workspaces", create_workspace, "Create a workspace (business)", "workspaces",
          scope="workspaces:write", body=WORKSPACE_CREATE, response="Workspace", status=201, creates=Creates("business_id"),
          errors=("unauthorized", "forbidden", "invalid_request"), rpcs=(f"{ACCOUNTS}/CreateWorkspace",),
          description="A key limited to one business cannot create workspaces (403 forbidden)."),
    Route("PATCH", f"{V1}/workspaces", update_workspace, "Rename, update metadata or run a lifecycle action",
          "workspaces", scope=workspace_update_scopes, body=WORKSPACE_UPDATE, response="Workspace",
          errors=("unauthorized", "forbidden", "not_found", "invalid_request"), rpcs=(f"{ACCOUNTS}/UpdateWorkspace",),
          description="name and metadata need workspaces:write (metadata is merged); action needs lifecycle:write. "
          "Lifecycle: pause (active -> paused, emits workspace.paused), resume (paused or canceled -> active), "
          "cancel (active or paused -> canceled, emits workspace.canceled), teardown (canceled -> inactive, emits "
          "workspace.teardown_completed; inactive is final). Repeating the action that led to the current state "
          "changes nothing and emits nothing; any other move is refused with 400 invalid_request."),
    Route("GET", f"{V1}/capabilities", capabilities, "Workspaces, scopes and endpoints available to this key",
          "discovery", response="Capabilities", errors=("unauthorized",), rpcs=(f"{ACCOUNTS}/ListWorkspaces",)),
    Route("GET", f"{V1}/health", health, "API, queue and provider status", "discovery", response="Health",
          errors=("unauthorized",), rpcs=("grpc.health.v1.Health/Check", "switchboard.v1.Agents/CheckVoiceProvider",
                                          "switchboard.v1.Messaging/CheckProvider"),
          description="status is ok when every service is ready and the voice and messaging providers answer; "
          "providers.voice and providers.messaging are each ok, unreachable, rejected_credentials, refused, or "
          "unknown while the service that checks it (agents, messaging) is down."),
    Route("GET", f"{V1}/usage", usage, "Usage log of the key's account, newest first", "account",
          query=page_query(100, 500, start={"type": "string", "format": "date-time"},
                            end={"type": "string", "format": "date-time"}),
          response="UsageList", errors=("unauthorized", "invalid_request"), rpcs=(f"{ACCOUNTS}/ListUsage",),
          description="Entries are written behind the request path and appear within about a second. A key "
          "limited to one business sees only the requests made with keys limited to that business."),
    Route("GET", f"{V1}/balance", balance, "Minutes used, numbers and subscription status per business", "account",
          response="Balance", errors=("unauthorized",),
          rpcs=(f"{ACCOUNTS}/GetBalance", "switchboard.v1.Agents/CountPhoneNumbers"),
          description="phone_numbers counts the numbers assigned to each business; minutes_used sums the calls' "
          "billed minutes (every started minute counts), which the usage log lists as method CALL entries with "
          "their call_id and cost_cents."),
]
