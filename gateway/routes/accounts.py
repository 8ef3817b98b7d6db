"""Accounts area: signup, API keys (dashboard session), workspaces, discovery, usage, balance."""
from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import grpc
from aiohttp import web

from contracts import accounts, agents, billing
from core import plans, registry
from core.errors import ServiceError
from core.messages import struct
from core.scopes import ALL_SCOPES
from core.settings import SIGNUP_LIMIT_PER_HOUR
from gateway.clientip import address_key, client_ip
from gateway.context import ROUTE_TABLE
from gateway.convert import to_json
from gateway.readiness import nats_status
from gateway.route import KEY, PUBLIC, SESSION, SESSION_WRITE_HEADERS, Creates, Reply, RequestContext, Route
from gateway.routes.params import page_query
from gateway.schemas import (
    CHECKOUT_OPEN,
    KEY_CREATE,
    KEY_UPDATE,
    SIGNUP_REQUEST,
    WORKSPACE_CREATE,
    WORKSPACE_UPDATE,
    WORKSPACE_UPDATE_CHECK,
    X402_RENEW,
)
from gateway.timeparse import set_time
from providers import x402
from switchboard.v1 import accounts_pb2, common_pb2, messaging_pb2, sdr_pb2

ACCOUNTS = "switchboard.v1.Accounts"
X402_PAYMENT_HEADER = {"type": "string", "maxLength": 8000, "pattern": "^[A-Za-z0-9+/]+={0,2}$",
                       "description": "x402: the signed payment (base64 JSON of an x402 v2 PaymentPayload)"}
X402_TERMS_HEADER = "x402: the payment terms (base64 JSON of an x402 v2 PaymentRequired)"


def _payment_signature(ctx: RequestContext) -> str:
    """The PAYMENT-SIGNATURE header, "" without one. Sent empty it is malformed, not absent: a client whose payment
    variable was unset would otherwise be sent to the card checkout (signup) or asked to pay again (renewal)."""
    value = ctx.request.headers.get(x402.PAYMENT_SIGNATURE_HEADER)
    if value is not None and not value.strip():
        raise ServiceError("validation_error", f"the {x402.PAYMENT_SIGNATURE_HEADER} header is malformed: it is "
                           "empty; send the signed payment (base64 JSON of an x402 PaymentPayload), or leave the "
                           "header out")
    return value or ""


# -- signup --------------------------------------------------------------------

async def signup(ctx: RequestContext) -> Reply:
    b = ctx.body
    reply = await ctx.rpc("accounts").Signup(accounts_pb2.SignupRequest(
        business_name=b["business_name"], email=b["email"], business_type=b.get("business_type", ""),
        website=b.get("website", ""), phone_forward_to=b.get("phone_forward_to", ""), plan_id=b.get("plan_id", ""),
        client_ip=address_key(client_ip(ctx.request, ctx.deps.settings.trusted_proxies)),
        payment_signature=_payment_signature(ctx),
        x402=b.get("payment_capture") == billing.X402))
    body = to_json(reply, omit=("payment_response",))
    if body["checkout_url"] is None:
        del body["checkout_url"]
    return _with_payment_response(body, reply.payment_response)


def _with_payment_response(body: dict[str, Any], payment_response: str) -> Reply:
    """An x402 answer: its settlement (when settled) goes in the PAYMENT-RESPONSE header."""
    if payment_response:
        return web.json_response(body, headers={x402.PAYMENT_RESPONSE_HEADER: payment_response})
    return body


# -- API keys (dashboard session) --------------------------------------------------

async def list_keys(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("accounts").ListKeys(accounts_pb2.ListKeysRequest(session_token=ctx.session_token))
    return {"keys": [to_json(k, omit=("key",)) for k in reply.keys]}


async def create_key(ctx: RequestContext) -> Reply:
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


async def update_key(ctx: RequestContext) -> Reply:
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


async def delete_key(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("accounts").RevokeKey(accounts_pb2.RevokeKeyRequest(session_token=ctx.session_token,
                                                                             id=ctx.query["id"]))
    ctx.deps.auth.clear()
    return {"success": reply.success}


# -- workspaces --------------------------------------------------------------------

async def get_workspace(ctx: RequestContext) -> Reply:
    """As a list of one: the published shape of ?id= on this route."""
    workspace = await ctx.rpc("accounts").GetWorkspace(accounts_pb2.GetWorkspaceRequest(id=ctx.query["id"]))
    return ctx.listing("workspaces", [to_json(workspace)], common_pb2.PageInfo(has_more=False))


async def list_workspaces(ctx: RequestContext) -> Reply:
    req = accounts_pb2.ListWorkspacesRequest(page=ctx.page_request())
    reply = await ctx.rpc("accounts").ListWorkspaces(req)
    return ctx.listing("workspaces", [to_json(w) for w in reply.workspaces], reply.page)


async def create_workspace(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = accounts_pb2.CreateWorkspaceRequest(name=b["name"], metadata=struct(b.get("metadata") or {}))
    if b.get("external_ref") is not None:
        req.external_ref = b["external_ref"]
    if "timezone" in b:
        req.timezone = b["timezone"]
    req.payment_signature = _payment_signature(ctx)
    reply = await ctx.rpc("accounts").CreateWorkspace(req)
    # The account's cached principals lack the new business. The accounts service tells every gateway over NATS;
    # this one forgets them now, so the caller's next request here sees the workspace even before that arrives.
    ctx.deps.auth.forget_account(ctx.principal.account_id)
    body = to_json(reply.workspace)
    if reply.payment_response:
        return web.json_response(body, status=201, headers={x402.PAYMENT_RESPONSE_HEADER: reply.payment_response})
    return body


INT32_MAX = 2**31 - 1


def _retention(sent: dict[str, Any]) -> accounts_pb2.Retention:
    """An update's retention as the accounts service takes it (it checks each kind's range): each value a whole
    number, a kind it knows; validation_error naming the kind and its range otherwise."""
    message = accounts_pb2.Retention()
    for kind, days in sent.items():
        if kind not in accounts.RETENTION_DAYS:
            raise ServiceError("validation_error", f"retention.{kind} is not a kind of retention: one of "
                               f"{', '.join(accounts.RETENTION_DAYS)}")
        if isinstance(days, bool) or not isinstance(days, int) or not -INT32_MAX <= days <= INT32_MAX:
            raise ServiceError("validation_error", f"retention.{kind} must be {accounts.retention_range(kind)}; "
                               f"got {json.dumps(days)[:40]}")
        setattr(message, kind, days)
    return message


def workspace_update_scopes(body: dict[str, Any]) -> tuple[str, ...]:
    """Renames, metadata, the time zone and the retention need workspaces:write; a lifecycle action needs
    lifecycle:write."""
    needed: tuple[str, ...] = ()
    if "name" in body or "metadata" in body or "timezone" in body or "retention" in body:
        needed += ("workspaces:write",)
    if "action" in body:
        needed += ("lifecycle:write",)
    return needed or ("workspaces:write",)


async def open_checkout(ctx: RequestContext) -> Reply:
    req = accounts_pb2.OpenCheckoutRequest()
    if "business_id" in ctx.body:
        req.business_id = ctx.body["business_id"]
    return to_json(await ctx.rpc("accounts").OpenCheckout(req))


async def pay_by_x402(ctx: RequestContext) -> Reply:
    req = accounts_pb2.PayByX402Request(
        payment_signature=_payment_signature(ctx))
    if "business_id" in ctx.body:
        req.business_id = ctx.body["business_id"]
    reply = await ctx.rpc("accounts").PayByX402(req)
    body = to_json(reply, omit=("payment_response",))
    if reply.payment_status == billing.X402_PENDING:
        return web.json_response(body, status=202)
    return _with_payment_response(body, reply.payment_response)


async def update_workspace(ctx: RequestContext) -> Reply:
    b = ctx.body
    req = accounts_pb2.UpdateWorkspaceRequest(id=b["id"])
    if "name" in b:
        req.name = b["name"]
    if "metadata" in b:
        req.metadata.CopyFrom(struct(b["metadata"]))
    if "action" in b:
        req.action = b["action"]
    if "timezone" in b:
        req.timezone = b["timezone"]
    if "retention" in b:
        req.retention.CopyFrom(_retention(b["retention"]))
    reply = await ctx.rpc("accounts").UpdateWorkspace(req)
    if "action" in b:
        # A lifecycle move changes what the workspace may spend (its standing in the cached principals). The
        # accounts service tells every gateway over NATS; this one forgets them now, so the caller's next request
        # here already follows the move.
        ctx.deps.auth.forget_account(ctx.principal.account_id)
    return to_json(reply)


# -- discovery, usage, balance ----------------------------------------------------------

async def capabilities(ctx: RequestContext) -> Reply:
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
        "agent_tools": [{"type": kind, "description": what} for kind, what in agents.AGENT_TOOLS.items()],
    }


# What /api/v1/health says while the sdr service, which asks every other service, cannot be asked itself.
SDR_UNREACHABLE = sdr_pb2.PlatformHealth(
    services={s.name: "unreachable" if s.name == "sdr" else "unknown" for s in registry.SERVICES},
    providers=sdr_pb2.ProviderStatuses(voice="unknown", messaging="unknown", payments="unknown"))


async def health(ctx: RequestContext) -> Reply:
    """The sdr service's report of the services and providers (one RPC) beside this replica's own queue; never an
    error: an sdr service that does not answer is part of the report."""
    try:
        reply = await ctx.rpc("sdr").GetHealth(sdr_pb2.GetHealthRequest())
    except grpc.aio.AioRpcError:
        reply = SDR_UNREACHABLE
    queue = nats_status(ctx.deps)
    services = {s.name: reply.services.get(s.name, "unknown") for s in registry.SERVICES}
    providers = to_json(reply.providers)
    return {
        "status": "ok" if {queue, *services.values(), *providers.values()} == {"ok"} else "degraded",
        "api": "ok",
        "queue": queue,
        "services": services,
        "providers": providers,
        "checked_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    }


async def usage(ctx: RequestContext) -> Reply:
    q = ctx.query
    req = accounts_pb2.ListUsageRequest(page=ctx.page_request())
    for field in ("start", "end"):
        if field in q:
            set_time(getattr(req, field), q[field], field)
    reply = await ctx.rpc("accounts").ListUsage(req)
    return ctx.listing("usage", [to_json(u, omit=("api_key_id", "account_id", "business_id")) for u in reply.usage],
                   reply.page)


async def balance(ctx: RequestContext) -> Reply:
    """Each business's balance (accounts) with its daily spend limits and today's use (messaging)."""
    reply, spent = await asyncio.gather(ctx.rpc("accounts").GetBalance(accounts_pb2.GetBalanceRequest()),
                                        ctx.rpc("messaging").GetDailySpend(messaging_pb2.GetDailySpendRequest()))
    spend_of = {s.business_id: to_json(s, omit=("business_id",)) for s in spent.businesses}
    return {"businesses": [{**to_json(b), **spend_of.get(b.business_id, {})} for b in reply.businesses]}


V1 = "/api/v1"
ROUTES = [
    Route("POST", f"{V1}/signup", signup, f"Create an account, a business on a {accounts.TRIAL_DAYS}-day trial and an "
          "API key", "accounts",
          auth=PUBLIC, body=SIGNUP_REQUEST, response="SignupResponse", validation_code="validation_error",
          headers={x402.PAYMENT_SIGNATURE_HEADER: X402_PAYMENT_HEADER},
          reply_headers={200: {x402.PAYMENT_RESPONSE_HEADER: "x402: the settlement (base64 JSON), when paid so"},
                         402: {x402.PAYMENT_REQUIRED_HEADER: X402_TERMS_HEADER}},
          errors=("validation_error", "email_exists", "rate_limited", "payment_required", "provider_error"),
          rpcs=(f"{ACCOUNTS}/Signup",),
          description=f"Limited to {SIGNUP_LIMIT_PER_HOUR} signups per hour per client address by default (429 "
          "rate_limited with Retry-After); every request counts, including one answered 402. "
          "Two ways to pay. (1) The hosted card checkout (the default): the reply has provisioning_deferred true, "
          f"payment_capture '{billing.HOSTED_CHECKOUT}', agent_id and phone_number null, and checkout_url, a "
          f"subscription checkout with a {accounts.TRIAL_DAYS}-day trial that captures a card. Once it completes, "
          "the payment provider tells us and the intake agent and a phone number are provisioned (with ring-first "
          "forwarding to phone_forward_to, 20 seconds, when given); GET /api/v1/workspaces?id= shows how far "
          "(provisioning) and GET /api/v1/agents and /api/v1/phone-numbers show the result. (2) x402 (protocol "
          "version 2): send payment_capture 'x402' without a payment to get 402 payment_required with the "
          f"{x402.PAYMENT_REQUIRED_HEADER} header (base64 JSON: x402Version 2, accepts [{{scheme 'exact', "
          "network, asset, amount, payTo, maxTimeoutSeconds, extra}}]; the same object is in the error body as "
          f"error.payment_required), then repeat the request with the signed payment in the "
          f"{x402.PAYMENT_SIGNATURE_HEADER} header. The amount is the plan's monthly price in USDC; it pays "
          "the trial and the month after it. A valid payment is verified and settled by the x402 facilitator and "
          "the intake agent and number are provisioned before the reply: provisioning_deferred false, agent_id, "
          f"phone_number, payment_capture 'x402' and the settlement in the {x402.PAYMENT_RESPONSE_HEADER} "
          "header. An invalid, expired, insufficient or replayed payment is 402 again with fresh requirements; a "
          f"{x402.PAYMENT_SIGNATURE_HEADER} that is empty or not base64 JSON of a payment is 400 validation_error. If "
          "no number is free or the voice provider is down, an x402 signup is still paid and answered with "
          "provisioning_deferred true; provisioning goes on by itself. 500 provider_error when the payment "
          "provider or facilitator cannot be reached before the payment is taken: nothing is created or charged. "
          "When the facilitator leaves the settlement itself unanswered (the money may have moved), the account is "
          "kept with payment_status 'pending' (payment_status is 'settled' otherwise, null for the card "
          "checkout): its workspace is unpaid (it may read and be set up, not spend) and nothing is provisioned "
          "until the payment is reconciled with the facilitator, within minutes; settled, it is provisioned as "
          "above, refused, it stays unpaid (pay with POST /api/v1/subscription/x402 or /checkout); the owner is "
          "e-mailed either way. "
          f"dashboard_magic_link signs the owner in once within {accounts.MAGIC_LINK_TTL.total_seconds() / 3600:g} "
          f"hours; the dashboard session it opens lasts {accounts.SESSION_TTL.days} days, or until unused for "
          f"{accounts.SESSION_IDLE.total_seconds() / 3600:g} hours (POST /api/v1/sessions/logout ends it sooner)."),
    Route("GET", f"{V1}/keys", list_keys, "List the account's API keys (without secrets)", "keys", auth=SESSION,
          response="ApiKeyList", errors=("unauthorized",), rpcs=(f"{ACCOUNTS}/ListKeys",)),
    Route("POST", f"{V1}/keys", create_key, "Create an API key; the full key is shown once", "keys", auth=SESSION,
          body=KEY_CREATE, response="ApiKeyCreated", status=201, creates=Creates("key_id"), errors=("unauthorized", "invalid_request", "forbidden"),
          rpcs=(f"{ACCOUNTS}/CreateKey",),
          description="Scopes default to the read-only set. business_id limits the key to one business. Send the "
          "body as JSON, {} when it is empty (or send an X-Requested-With header): see POST /api/v1/sessions/logout."),
    Route("PATCH", f"{V1}/keys", update_key, "Rename, rescope, expire or revoke an API key", "keys", auth=SESSION,
          body=KEY_UPDATE, response="ApiKey", errors=("unauthorized", "invalid_request", "not_found", "forbidden"),
          rpcs=(f"{ACCOUNTS}/UpdateKey",),
          description="revoke: true stops the key on the next request on every gateway replica; expire: true sets "
          "its expiry to now; expires_at: null removes the expiry."),
    Route("DELETE", f"{V1}/keys", delete_key, "Revoke an API key", "keys", auth=SESSION, query={
        "type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]},
          headers=SESSION_WRITE_HEADERS,
          response="Success", errors=("unauthorized", "invalid_request", "not_found"), rpcs=(f"{ACCOUNTS}/RevokeKey",)),
    Route("GET", f"{V1}/workspaces", list_workspaces, "List workspaces, newest first, or read one with ?id=",
          "workspaces", scope="workspaces:read", query=page_query(50, 100, id={"type": "string", "format": "uuid"}),
          response="WorkspaceList", read_one=get_workspace,
          errors=("unauthorized", "forbidden", "not_found", "invalid_request"),
          rpcs=(f"{ACCOUNTS}/ListWorkspaces", f"{ACCOUNTS}/GetWorkspace")),
    Route("POST", f"{V1}/workspaces", create_workspace, "Create a workspace (business)", "workspaces",
          scope="workspaces:write", body=WORKSPACE_CREATE, response="Workspace", status=201, creates=Creates("business_id"),
          headers={x402.PAYMENT_SIGNATURE_HEADER: X402_PAYMENT_HEADER},
          reply_headers={201: {x402.PAYMENT_RESPONSE_HEADER: "x402: the settlement (base64 JSON), when paid so"},
                         402: {x402.PAYMENT_REQUIRED_HEADER: X402_TERMS_HEADER}},
          errors=("unauthorized", "forbidden", "invalid_request", "validation_error", "conflict", "payment_required",
                  "provider_error"),
          rpcs=(f"{ACCOUNTS}/CreateWorkspace",),
          description="A workspace belongs to its account's subscription, and there is one trial per account: a new "
          "workspace has no trial of its own and takes its account's subscription status and standing (those of "
          "the account's first, paying workspace, the signup's) and follows it from then on: when a payment fails, "
          "every workspace billed on the subscription is held with it. Each plan allows a number of workspaces per "
          "account, torn-down ones not counted (" + ", ".join(f"{plan} {n}" for plan, n in
                                                              plans.WORKSPACE_LIMITS.items()) + "): one more is "
          "403 forbidden naming the limit and the plan. Paid by card: the workspace is one more unit (quantity) of "
          "the account's subscription at the payment provider, prorated onto the next invoice (nothing during the "
          "trial); 409 conflict while another workspace of the account is being added, or before the signup's "
          "checkout completed; 500 provider_error when the payment provider refuses it (nothing is created) or "
          "does not answer (the workspace named in the message stays unpaid and is added within minutes, by "
          "itself). Paid by x402: each further workspace pays its own "
          f"{billing.X402_PERIOD.days} days as the signup did (the plan's monthly price in USDC): without a "
          f"{x402.PAYMENT_SIGNATURE_HEADER} header 402 payment_required with the terms in the "
          f"{x402.PAYMENT_REQUIRED_HEADER} header; repeat the request with the signed payment: 201 with the "
          f"settlement in the {x402.PAYMENT_RESPONSE_HEADER} header (a settlement left unanswered gives the "
          "workspace unpaid until it is reconciled); a refused or replayed payment is 402 again. 403 forbidden "
          "for a key limited to one business, or while the account's subscription is held (unpaid or canceled)."),
    Route("PATCH", f"{V1}/workspaces", update_workspace, "Rename, update metadata or run a lifecycle action",
          "workspaces", scope=workspace_update_scopes, body=WORKSPACE_UPDATE, body_check=WORKSPACE_UPDATE_CHECK,
          response="Workspace", errors=("unauthorized", "forbidden", "not_found", "invalid_request", "validation_error"),
          rpcs=(f"{ACCOUNTS}/UpdateWorkspace",),
          description="name, metadata, timezone and retention need workspaces:write (metadata is merged); action "
          "needs lifecycle:write. retention sets how long the business keeps its customers' personal data, per kind "
          "in days (0: back to the default; out of range: 400 validation_error naming the kind and its range; "
          "defaults, limits and what is deleted or redacted where: docs/privacy.md); a change makes the retention "
          "job due at once. "
          "Lifecycle: pause (active -> paused, emits workspace.paused), resume (paused or canceled -> active), "
          "cancel (active or paused -> canceled, emits workspace.canceled), teardown (canceled -> inactive, emits "
          "workspace.teardown_completed; inactive is final; the workspace's customers' personal data is deleted "
          "everywhere at data_deletion_due_at, the end of a grace period of TEARDOWN_GRACE_DAYS, 30 by default, and "
          "its keys, sessions and OAuth grants revoked: docs/privacy.md). Repeating the action that led to the current state "
          "changes nothing and emits nothing; any other move is refused with 400 invalid_request."),
    Route("POST", f"{V1}/subscription/checkout", open_checkout, "Open a new hosted checkout, or a past-due invoice's page",
          "workspaces", scope="workspaces:write", sessions=True, body=CHECKOUT_OPEN, response="CheckoutLink",
          status=201, errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found", "conflict",
                              "provider_error"),
          rpcs=(f"{ACCOUNTS}/OpenCheckout",),
          description="For a workspace with no subscription in force: a signup whose checkout was never completed "
          f"(its link expires after 24 hours; the new one keeps the {accounts.TRIAL_DAYS}-day trial, which starts "
          "once the card is taken) or a canceled subscription (resubscribe: no trial; completing it makes the "
          "subscription active and resumes a canceled workspace). The earlier checkout link stops working; the "
          "Stripe customer of an earlier subscription is reused. A past_due subscription is not replaced: "
          "checkout_url is its open invoice's hosted page (invoice_id set, checkout_session_id and expires_at "
          "null), where another card pays it and stays on file; paid, the subscription is active and a workspace "
          "billing paused resumes. 409 conflict while a subscription is in force and paid (trialing, active), "
          "for a past_due one with no open invoice at that moment, or for a torn-down workspace. A key with "
          "workspaces:write or the dashboard session."),
    Route("POST", f"{V1}/subscription/x402", pay_by_x402, "Pay the next period of the subscription with x402",
          "workspaces", scope="workspaces:write", sessions=True, body=X402_RENEW, response="X402Renewal",
          own_replies={202: ("The facilitator left the settlement unanswered: the payment is pending and reconciled "
                             "(payment_status pending); nothing is extended until it is settled, and the owner is "
                             "e-mailed the outcome", "X402Renewal")},
          headers={x402.PAYMENT_SIGNATURE_HEADER: X402_PAYMENT_HEADER},
          reply_headers={200: {x402.PAYMENT_RESPONSE_HEADER: "the settlement (base64 JSON)"},
                         402: {x402.PAYMENT_REQUIRED_HEADER: X402_TERMS_HEADER}},
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "validation_error", "not_found",
                  "conflict", "payment_required", "provider_error"),
          rpcs=(f"{ACCOUNTS}/PayByX402",),
          description="x402 pays once, so a workspace paid by x402 renews here before paid_through (GET "
          f"/api/v1/workspaces shows it; the owner is e-mailed {billing.X402_REMIND_BEFORE.days} days before it). "
          f"Without a {x402.PAYMENT_SIGNATURE_HEADER} header: 402 payment_required with the terms in the "
          f"{x402.PAYMENT_REQUIRED_HEADER} header (the plan's monthly price in USDC for the next "
          f"{billing.X402_PERIOD.days} days); repeat the request with the signed payment. Settled: 200, "
          f"paid_through moved {billing.X402_PERIOD.days} days on from the end of the period (or from now when it "
          "has passed), the subscription active, a workspace paused for non-payment resumed and one canceled with "
          "its subscription active again, the settlement in the PAYMENT-RESPONSE header. Sending the same payment "
          "again answers the same outcome. A refused payment is 402 with fresh terms; a malformed (or empty) header 400 "
          "validation_error. 409 conflict for a workspace billed to a card (the card provider charges it), one "
          f"already paid more than {billing.X402_PERIOD.days} days ahead, one whose earlier payment is still being "
          "confirmed, or a torn-down one. It also pays a signup whose x402 payment failed, and moves a workspace "
          "without a subscription in force (incomplete or canceled) to x402. A key with workspaces:write or the "
          "dashboard session."),
    Route("GET", f"{V1}/capabilities", capabilities, "Workspaces, scopes and endpoints available to this key",
          "discovery", response="Capabilities", errors=("unauthorized",), rpcs=(f"{ACCOUNTS}/ListWorkspaces",)),
    Route("GET", f"{V1}/health", health, "API, queue and provider status", "discovery", response="Health",
          errors=("unauthorized",), rpcs=("switchboard.v1.Sdr/GetHealth",),
          description="status is ok when the queue and every service are ready and the voice, messaging and "
          "payments providers answer (the providers' part is at most 10 seconds old: the sdr service, which "
          "gathers the services' and providers' status, asks the providers at most that often); "
          "providers.voice, providers.messaging and providers.payments (the card checkout and the x402 "
          "facilitator: the worse of the two) are each ok, unreachable, rejected_credentials, refused, or "
          "unknown while the service that checks it (agents, messaging, accounts) is down. While the sdr service "
          "itself cannot be reached the answer is still 200: services.sdr is unreachable, the other services and "
          "the providers unknown, status degraded."),
    Route("GET", f"{V1}/usage", usage, "Usage log of the key's account, newest first", "account",
          query=page_query(100, 500, start={"type": "string", "format": "date-time"},
                            end={"type": "string", "format": "date-time"}),
          response="UsageList", errors=("unauthorized", "invalid_request"), rpcs=(f"{ACCOUNTS}/ListUsage",),
          description="Entries are written behind the request path and appear within about a second. A key "
          "limited to one business sees only the requests made with keys limited to that business."),
    Route("GET", f"{V1}/balance", balance, "Minutes used, numbers, subscription status, daily spend limits and "
          "today's use per business", "account",
          response="Balance", errors=("unauthorized",),
          rpcs=(f"{ACCOUNTS}/GetBalance", "switchboard.v1.Agents/CountPhoneNumbers",
                "switchboard.v1.Messaging/GetDailySpend"),
          description="phone_numbers counts the numbers assigned to each business; minutes_used sums the calls' "
          "billed minutes (every started minute counts), which the usage log lists as method CALL entries with "
          "their call_id and cost_cents. limits are the business's plan's daily spend limits (plan_id), shared by "
          "every key, session, communication run and the sales pipeline of the business; today is what it used of "
          "them on the UTC day `day` (calls placed, minutes of calls ended, texts sent; emails queued in the last 24 "
          "hours, the email queue's window). Past a limit, placing a call or sending a text or email answers 429 "
          "rate_limited with Retry-After (until resets_at, the next UTC midnight; for email, until the oldest email "
          "of the window is 24 hours old) and error.limit naming the limit."),
]
