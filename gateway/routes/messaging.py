"""SMS: send, threads and messages, consent, the do-not-call list, the email queue (the messaging provider's
webhooks: gateway.routes.providers)."""
from __future__ import annotations

from contracts import messaging
from gateway.convert import to_json
from gateway.patterns import NOT_BLANK
from gateway.route import Reply, RequestContext, Route
from gateway.routes.calls import IDEMPOTENCY_HEADER
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, CONSENT_RECORD, DNC_ADD, E164, EMAIL_APPROVE, EMAIL_QUEUE, SMS_SEND, UUID
from switchboard.v1 import messaging_pb2

MESSAGING = "switchboard.v1.Messaging"
V1 = "/api/v1"
CHECKS = ("number_on_dnc", "dnc_registry_stale", "number_opted_out", "content_blocked", "tcpa_violation")


async def send(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.SendSmsRequest(), ctx.body, "to", "from_agent_id", "message", "lead_id")
    if IDEMPOTENCY_HEADER in ctx.request.headers:
        req.idempotency_key = ctx.request.headers[IDEMPOTENCY_HEADER]
    return to_json(await ctx.rpc("messaging").SendSms(req))


async def list_conversations(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("messaging").ListConversations(messaging_pb2.ListConversationsRequest(
        page=ctx.page_request()))
    return ctx.listing("conversations", [to_json(c) for c in reply.conversations], reply.page)


async def get_conversation(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("messaging").ListConversations(messaging_pb2.ListConversationsRequest(id=ctx.query["id"]))
    return to_json(reply.conversations[0])


async def list_messages(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.ListMessagesRequest(page=ctx.page_request()), ctx.query, "conversation_id",
                     "direction")
    reply = await ctx.rpc("messaging").ListMessages(req)
    return ctx.listing("messages", [to_json(m) for m in reply.messages], reply.page)


async def get_consent(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.GetConsentRequest(), ctx.query, "phone", "business_id")
    return to_json(await ctx.rpc("messaging").GetConsent(req))


async def record_consent(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.RecordConsentRequest(), ctx.body, "phone", "business_id", "state", "note")
    return to_json(await ctx.rpc("messaging").RecordConsent(req))


async def add_dnc(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.AddDncRequest(), ctx.body, "phone", "business_id", "reason")
    return to_json(await ctx.rpc("messaging").AddDnc(req))


async def read_dnc(ctx: RequestContext) -> Reply:
    """The check of one phone with ?phone=, else the list."""
    if "phone" in ctx.query:
        check = set_fields(messaging_pb2.CheckDncRequest(), ctx.query, "phone", "business_id")
        return to_json(await ctx.rpc("messaging").CheckDnc(check))
    listing = set_fields(messaging_pb2.ListDncRequest(page=ctx.page_request()), ctx.query, "business_id")
    reply = await ctx.rpc("messaging").ListDnc(listing)
    return ctx.listing("entries", [to_json(e) for e in reply.entries], reply.page)


async def remove_dnc(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.RemoveDncRequest(), ctx.query, "phone", "business_id", "reason")
    return to_json(await ctx.rpc("messaging").RemoveDnc(req))


async def queue_email(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.QueueEmailRequest(), ctx.body, "to", "subject", "body", "business_id")
    req.hold_for_approval = ctx.body.get("approve") is False
    return to_json(await ctx.rpc("messaging").QueueEmail(req))


async def approve_email(ctx: RequestContext) -> Reply:
    return to_json(await ctx.rpc("messaging").ApproveEmail(messaging_pb2.ApproveEmailRequest(id=ctx.body["id"])))


async def list_emails(ctx: RequestContext) -> Reply:
    req = set_fields(messaging_pb2.ListEmailsRequest(page=ctx.page_request()), ctx.query, "status")
    reply = await ctx.rpc("messaging").ListEmails(req)
    return ctx.listing("emails", [to_json(e) for e in reply.emails], reply.page)


async def get_email(ctx: RequestContext) -> Reply:
    reply = await ctx.rpc("messaging").ListEmails(messaging_pb2.ListEmailsRequest(id=ctx.query["id"]))
    return to_json(reply.emails[0])


ROUTES = [
    Route("POST", f"{V1}/sms/send", send, "Send a text from an agent's number", "sms", scope="sms:write",
          body=SMS_SEND, response="SmsSent",
          headers={IDEMPOTENCY_HEADER: {
              "type": "string", "minLength": 1, "maxLength": 255,
              "description": "makes a retry safe: a send whose key already names a text of the business answers "
              "with that text as it is now (no second text); another message or recipient with the same key is "
              "409 conflict"}},
          errors=("unauthorized", "forbidden", "bad_request", "not_found", "conflict", *CHECKS, "sms_send_failed"),
          rpcs=(f"{MESSAGING}/SendSms",),
          description="Checks, in order, each refusal 400 with a message saying what to do: number_on_dnc (the "
          "business's do-not-call list or the platform's, or the national do-not-call registry where the platform's "
          "operator loaded the recipient's area code, unless they opted in or have an established business "
          "relationship: a purchase within 18 months, an inquiry within 3), dnc_registry_stale (the registry's data "
          "of that area code is older than 31 days: nothing there is texted until the operator refreshes it), "
          "number_opted_out (the recipient replied STOP, was opted "
          "out through the API, or never consented: consent is an opt-in recorded through POST /api/v1/sms/consent "
          "or START, or the recipient having called or texted the business within the last "
          f"{messaging.CONVERSATIONAL_CONSENT_DAYS} days), content_blocked (naming the rule: "
          f"{', '.join(messaging.CONTENT_RULES)}), tcpa_violation (outside 08:00-21:00 in the recipient's time zone - "
          "the lead's stated US state, else the number's zones, the window legal in all of them; numbers that "
          "cannot be narrowed below their country code use the sending number's zones - or a state's stricter "
          "window, or a frequency cap reached: the platform's COMPLIANCE_TEXTS_PER_24H texts to one person in 24 "
          "hours, or a state's cap counting calls and texts together, such as Florida's 3; saying when texting "
          "opens). The legal refusals come first so the answer says what no rewording can fix; a content refusal "
          "comes before a wait for the time. Every text sent, whatever path sent it (this route, a communication "
          "run, the sales pipeline), is counted against the recipient's caps together with the calls placed to "
          "them. Each business may send its plan's texts_per_day in a UTC day, whatever key, replica or run sends "
          "them (GET /api/v1/balance shows it with today's use): past it, 429 rate_limited with error.limit "
          "texts_per_day and Retry-After until the next UTC midnight. "
          "An agent of another business, or one without a number, is 404 not_found. The text is written "
          "to its thread first; when the provider refuses it, it is recorded failed and the answer is 500 "
          "sms_send_failed, except when the provider refuses it because the recipient replied STOP to the agent's "
          "number there (its own opt-out handling): then their opt-out is recorded too (source provider) and the "
          "answer is 400 number_opted_out. Emits sms.sent, then sms.delivered or sms.failed as the carrier "
          "reports."),
    Route("GET", f"{V1}/sms/conversations", list_conversations, "Text threads, latest message first", "sms",
          scope="sms:read", query=page_query(50, 100, id=UUID), read_one=get_conversation,
          response=("ConversationList", "Conversation"),
          errors=("unauthorized", "forbidden", "not_found", "invalid_request"),
          rpcs=(f"{MESSAGING}/ListConversations",),
          description="One thread per business number and contact, across the key's businesses: both numbers, "
          "message counts, unread count (inbound texts since the thread's messages were last listed) and the "
          "latest message's time, preview, direction and status. {conversations, has_more, next_cursor}; the "
          "after cursor is the last_message_at of the last thread. ?id= returns that thread."),
    Route("GET", f"{V1}/sms/messages", list_messages, "Texts newest first", "sms", scope="sms:read",
          query=page_query(50, 100, conversation_id=UUID,
                           direction={"type": "string", "enum": list(messaging.DIRECTIONS)}),
          response="SmsMessageList", errors=("unauthorized", "forbidden", "invalid_request"),
          rpcs=(f"{MESSAGING}/ListMessages",),
          description="{messages, has_more, next_cursor}: content, direction, delivery status (pending, accepted, "
          "queued, sending, sent, delivered, undelivered, failed; received for inbound), the provider's sid and "
          "error, timestamps. Listing a thread's messages (conversation_id) marks the thread read."),
    Route("GET", f"{V1}/sms/consent", get_consent, "A phone's consent to texts from a business", "sms",
          scope="sms:read", query={"type": "object", "properties": {"phone": E164, "business_id": BUSINESS},
                                   "required": ["phone"]},
          response="Consent", errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{MESSAGING}/GetConsent",),
          description="state (opted_in, opted_out, conversational, none), can_text, and the append-only history: "
          "each opt-in, opt-out and conversational evidence with its source (api, keyword, inbound_text, "
          "inbound_call, call_request: they asked for a text on a call, provider: the messaging provider "
          "refused a text because the recipient replied STOP to it), actor, reference (message sid, call id, our "
          "message id) and time. An opt-out wins until an opt-in."),
    Route("POST", f"{V1}/sms/consent", record_consent, "Record an opt-in or opt-out", "sms", scope="sms:write",
          body=CONSENT_RECORD, response="Consent", status=201,
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{MESSAGING}/RecordConsent",),
          description="Appends to the phone's consent history with this key as the actor (nothing is ever "
          "rewritten) and returns the consent as it now stands."),
    Route("POST", f"{V1}/dnc", add_dnc, "Put a phone on the business's do-not-call list", "sms", scope="sms:write",
          body=DNC_ADD, response="DncEntry", status=201,
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request"), rpcs=(f"{MESSAGING}/AddDnc",),
          description="Texts to the phone are refused (number_on_dnc) from now on. A phone already listed returns "
          "its entry as it is."),
    Route("GET", f"{V1}/dnc", read_dnc, "Check a phone, or list the business's do-not-call entries", "sms",
          scope="sms:read", query=page_query(50, 100, phone=E164, business_id=BUSINESS),
          response=("DncList", "DncCheck"), errors=("unauthorized", "forbidden", "bad_request", "invalid_request"),
          rpcs=(f"{MESSAGING}/CheckDnc", f"{MESSAGING}/ListDnc"),
          description="With phone: {phone, business_id, listed, entry, platform} (platform: on the platform-wide "
          "list). Without: {entries, has_more, next_cursor}, the listed entries newest first."),
    Route("DELETE", f"{V1}/dnc", remove_dnc, "Take a phone off the business's do-not-call list", "sms",
          scope="sms:write",
          query={"type": "object", "properties": {
              "phone": E164, "business_id": BUSINESS,
              "reason": {"type": "string", "pattern": NOT_BLANK,
                         "description": "why the phone may be contacted again"}},
                 "required": ["phone", "reason"]},
          response="DncEntry", errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found"),
          rpcs=(f"{MESSAGING}/RemoveDnc",),
          description="The entry is kept with removed_at and the reason. A phone not on the list is 404. The "
          "platform-wide list cannot be changed through the API."),
    Route("POST", f"{V1}/emails", queue_email, "Queue an email", "emails", scope="emails:write", body=EMAIL_QUEUE,
          response="Email", status=201, sessions=True,
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "rate_limited"),
          rpcs=(f"{MESSAGING}/QueueEmail",),
          description="An email to the business's owner (recipient owner, once the address is confirmed) or to an "
          "address known to the business (recipient known: one the owner approved in person, or a lead's that the "
          "person gave on an inbound call) is approved at once (it goes out within seconds) unless approve is "
          "false, which leaves it pending_approval until POST /api/v1/emails/approve. An email to any other "
          "address (recipient other), a lead's that a key wrote among them, is held pending_approval for the "
          "owner to approve signed in to the dashboard, whatever approve says: the platform's sender is no relay "
          "for keys. The owner's approval makes the address known. It goes out from "
          "the platform's address as '<business name> via <platform>', with Reply-To the owner's address. A "
          "business may queue its plan's emails_per_day, at most EMAIL_DAILY_QUOTA (default 200), in any 24 hours "
          "(429 rate_limited with error.limit emails_per_day and Retry-After beyond; GET /api/v1/balance shows it), "
          "and only in good standing (403 forbidden saying what to do while the workspace "
          "is paused, canceled or unpaid). Delivery retries with backoff "
          f"({messaging.EMAIL_ATTEMPTS} tries) and ends sent or failed (last_error says why). The platform queues "
          "the owner's notifications here too (kind owner_notification), e.g. for each agent prompt change."),
    Route("POST", f"{V1}/emails/approve", approve_email, "Approve a queued email", "emails", scope="emails:write",
          body=EMAIL_APPROVE, response="Email", sessions=True,
          errors=("unauthorized", "forbidden", "bad_request", "invalid_request", "not_found"),
          rpcs=(f"{MESSAGING}/ApproveEmail",),
          description="Only an email pending approval can be approved (400 otherwise); another business's email "
          "is 404. An email to an address the business does not know (recipient other) may only be "
          "approved by the owner signed in to the dashboard (the session cookie): a key is 403."),
    Route("GET", f"{V1}/emails", list_emails, "The email queue, newest first, or one email with ?id=", "emails",
          scope="emails:read", query=page_query(50, 100, id=UUID, status={
              "type": "string", "enum": list(messaging.EMAIL_STATUSES)}), read_one=get_email,
          response=("EmailList", "Email"), errors=("unauthorized", "forbidden", "not_found", "invalid_request"),
          rpcs=(f"{MESSAGING}/ListEmails",),
          description="{emails, has_more, next_cursor} across the key's businesses: recipient, subject, body, "
          "kind, status (pending_approval, approved, sent, failed), attempts, last_error, Message-ID, who queued "
          "and approved it, and when."),
]
