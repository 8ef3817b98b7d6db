"""The messages pages of one business: its SMS conversations (latest first, cursor-paged), each with its thread of
texts, and its email queue, where an email held for approval is approved. Every read and action is the RPC the
`/api/v1/sms` and `/api/v1/emails` routes make, as the signed-in owner (the lists, which span every business of the
caller, as the owner of the chosen business alone: pages.of_business); a thread of another owner is 404."""
from __future__ import annotations

import uuid
from typing import Any

import grpc
from aiohttp import web

from core.errors import not_found
from core.grpc_errors import from_rpc_error
from core.rpc import AsCaller
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import MESSAGES_PATH, signed_in
from gateway.dashboard.templates import page
from switchboard.v1 import common_pb2, messaging_pb2

CONVERSATIONS_SHOWN, EMAILS_SHOWN, TEXTS_SHOWN = 50, 50, 100
APPROVE_PATH = f"{MESSAGES_PATH}/approve"


def messaging(request: web.Request, principal: Principal) -> AsCaller:
    return deps(request).clients["messaging"].as_caller(principal.tenant)


def is_id(value: str) -> bool:
    """Whether `value` is an object's id (a UUID); any other path is no object, 404 without asking a service."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def listed_page(request: web.Request, limit: int) -> common_pb2.PageRequest:
    """The page of a list the address asks for: its `cursor` (from the previous page's Next link)."""
    return common_pb2.PageRequest(limit=limit, cursor=request.query.get("cursor", ""))


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None) -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    conversations, cursor, held, latest = [], "", [], []
    if business_id:
        texts = deps(request).clients["messaging"].as_caller(pages.of_business(principal, business_id))
        try:
            listed = await texts.ListConversations(messaging_pb2.ListConversationsRequest(
                page=listed_page(request, CONVERSATIONS_SHOWN)))
            conversations, cursor = list(listed.conversations), listed.page.next_cursor
        except grpc.aio.AioRpcError as exc:  # a cursor of no list of this page's
            err = from_rpc_error(exc)
            status, error = err.http_status, err.message
        recent = common_pb2.PageRequest(limit=EMAILS_SHOWN)
        held = list((await texts.ListEmails(messaging_pb2.ListEmailsRequest(status="pending_approval",
                                                                            page=recent))).emails)
        latest = [e for e in (await texts.ListEmails(messaging_pb2.ListEmailsRequest(page=recent))).emails
                  if e.status != "pending_approval"]
    return page("messages.html", status, title="Messages", active="messages", form_token=form_token(session),
                businesses=businesses, business_id=business_id, conversations=conversations, cursor=cursor,
                held=held, latest=latest, query={**request.query, "business_id": business_id}, notice=notice,
                error=error)


async def messages(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""))


async def thread(request: web.Request) -> web.StreamResponse:
    """One conversation's texts, oldest first (a page of them: the newest TEXTS_SHOWN, then older ones). Reading
    them marks the thread read, as the API's listing does."""
    _, principal = await signed_in(request)
    conversation_id = request.match_info["id"]
    businesses = await pages.businesses_of(request, principal)
    shown: dict[str, Any] = {"title": "Conversation", "active": "messages", "businesses": businesses, "conversation": None,
             "texts": [], "cursor": "", "query": dict(request.query)}
    if not is_id(conversation_id):
        return page("thread.html", 404, **shown, error=not_found("conversation").message)
    texts = messaging(request, principal)
    try:
        [conversation] = (await texts.ListConversations(
            messaging_pb2.ListConversationsRequest(id=conversation_id))).conversations
        listed = await texts.ListMessages(messaging_pb2.ListMessagesRequest(
            conversation_id=conversation_id, page=listed_page(request, TEXTS_SHOWN)))
    except grpc.aio.AioRpcError as exc:
        err = from_rpc_error(exc)
        return page("thread.html", err.http_status, **shown, error=err.message)
    return page("thread.html", **{**shown, "title": f"Texts with {conversation.contact_number}",
                                  "conversation": conversation, "texts": list(reversed(listed.messages)),
                                  "cursor": listed.page.next_cursor}, error=None)


async def approve(request: web.Request) -> web.StreamResponse:
    """Approve a held email: the RPC of POST /api/v1/emails/approve, as the owner signed in here (who alone may
    approve an email to an address that is neither theirs nor a lead's)."""
    async def act(principal: Principal, form: Form) -> dict[str, Any]:
        email = await messaging(request, principal).ApproveEmail(
            messaging_pb2.ApproveEmailRequest(id=str(form.get("id", ""))))
        return {"notice": f"Approved the email to {email.to} ({email.subject!r}): it is {email.status} and goes "
                          "out within seconds."}
    return await pages.business_form(request, _render, "approved", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(MESSAGES_PATH, messages)
    app.router.add_post(APPROVE_PATH, same_site_form(approve))
    app.router.add_get(f"{MESSAGES_PATH}/{{id}}", thread)
