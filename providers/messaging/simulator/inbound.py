"""Texts from a phone to one of the account's numbers (control plane `POST /_simulator/inbound`).

Twilio POSTs an inbound text to the number's (or its Messaging Service's) inbound request URL, form-encoded and
signed like every webhook: MessageSid, SmsSid, SmsMessageSid, AccountSid, From, To, Body, NumMedia (with
MediaContentType{N} and MediaUrl{N} for each of an MMS's media: the control plane's `media`), NumSegments,
SmsStatus (`received`), ApiVersion, and where it knows them FromCountry/FromState/FromCity/FromZip and the To
equivalents (empty when unknown), and OptOutType for a keyword text to a number with Advanced Opt-Out. The server
answers with TwiML; each `<Message>` in it (its text, or its `<Body>`) is sent back to the texter, from the number
texted, as an `outbound-reply` message. Anything that is not a 2xx TwiML `<Response>` sends nothing back, as with
Twilio (which logs an error).

Before it is passed on, a keyword text meets Twilio's opt-out handling (`optout`): a STOP blocks the texter
for the number (and Twilio confirms it), a START lifts the block, a HELP gets Twilio's help text. A TwiML reply to
a blocked texter is refused (recorded `failed`, 21610). The block is made even when the inbound URL cannot be
reached.
"""
from __future__ import annotations

import logging
import xml.etree.ElementTree as ElementTree
from typing import Any

import aiohttp
from aiohttp import web

from core.contact import is_e164
from providers.messaging.simulator.control import refused
from providers.messaging.simulator.errors import UNSUBSCRIBED, error_response
from providers.messaging.simulator.messages import API_VERSION, BODY_MAX, Messages, country_of
from providers.messaging.simulator.numbers import Numbers
from providers.messaging.simulator.optout import OptOuts
from providers.messaging.simulator.webhooks import new_idempotency_token, post_signed
from providers.simulator_control import PREFIX, json_object

log = logging.getLogger(__name__)

TWILIO_API = "https://api.twilio.com"  # what a MediaUrl starts with (Twilio serves the media there)
FIELDS = frozenset({"from", "to", "body", "url", "media"})


def webhook_params(record: dict[str, Any]) -> dict[str, str]:
    media = {f"{name}{i}": value for i, m in enumerate(record["_media"])
             for name, value in (("MediaContentType", m["content_type"]), ("MediaUrl", TWILIO_API + m["uri"]))}
    return media | {"ToCountry": country_of(record["to"]), "ToState": "", "ToCity": "", "ToZip": "",
              "FromCountry": country_of(record["from"]), "FromState": "", "FromCity": "", "FromZip": "",
              "SmsMessageSid": record["sid"], "NumMedia": record["num_media"], "SmsSid": record["sid"], "SmsStatus": "received",
              "Body": record["body"], "To": record["to"], "NumSegments": record["num_segments"],
              "MessageSid": record["sid"], "AccountSid": record["account_sid"], "From": record["from"],
              "ApiVersion": API_VERSION}


def replies_in(content_type: str, text: str) -> list[str]:
    """The texts of the `<Message>` verbs in a TwiML answer (none when it is not TwiML)."""
    if not text.strip() or "html" in content_type:
        return []
    try:
        root = ElementTree.fromstring(text.strip())
    except ElementTree.ParseError:
        return []
    if root.tag != "Response":
        return []
    replies = []
    for verb in root.findall("Message"):
        body = verb.find("Body")
        said = (body.text if body is not None else verb.text) or ""
        if said.strip():
            replies.append(said.strip())
    return replies


def check(body: dict[str, Any]) -> list[str]:
    errors = [f"property {k} should not exist" for k in sorted(set(body) - FIELDS)]
    errors += [f"{k} must be a valid E.164 phone number" for k in ("from", "to") if not is_e164(body.get(k))]
    text = body.get("body")
    if not isinstance(text, str) or not text:
        errors.append("body must be a non-empty string")
    elif len(text) > BODY_MAX:
        errors.append(f"body must be at most {BODY_MAX} characters")
    media = body.get("media", [])
    if not isinstance(media, list) or not all(isinstance(m, str) and "/" in m for m in media):
        errors.append("media must be a list of content types (image/jpeg)")
    if body.get("url") is not None and not (isinstance(body["url"], str)
                                            and body["url"].startswith(("http://", "https://"))):
        errors.append("url must be an http(s) URL")
    return errors


def add_inbound_route(router: web.UrlDispatcher, messages: Messages, opt_outs: OptOuts, auth_token: str,
                      inbound_url: str | None, numbers: Numbers) -> None:
    def reply(record: dict[str, Any], text: str) -> dict[str, Any]:
        """A TwiML reply sent back to the texter from the number they texted: delivered, or refused (21610) while
        they are blocked for it."""
        blocked = opt_outs.is_blocked(record["to"], record["from"])
        sent = messages.create(to=record["from"], from_=record["to"], body=text, direction="outbound-reply",
                               status="failed" if blocked else "delivered")
        return messages.move(sent["sid"], "failed", UNSUBSCRIBED) if blocked else sent

    async def inbound(request: web.Request) -> web.Response:
        body = await json_object(request)
        errors = check(body)
        url = body.get("url") or (numbers.sms_url(body["to"]) if not errors else None) or inbound_url
        if not errors and not url:
            errors = ["no inbound URL: pass url, or start the simulator with --inbound-url (SMS_INBOUND_URL)"]
        if errors or not url:
            return refused(errors)
        record = messages.create(to=body["to"], from_=body["from"], body=body["body"], direction="inbound",
                                 status="received")
        messages.attach_media(record["sid"], body.get("media", []))
        handled = opt_outs.take(record["from"], record["to"], record["body"])
        if handled.reply is not None:  # Twilio's own answer, whatever our server says
            messages.create(to=record["from"], from_=record["to"], body=handled.reply, direction="outbound-reply",
                            status="delivered")
        params = webhook_params(record)
        if handled.opt_out_type is not None:
            params["OptOutType"] = handled.opt_out_type
        try:
            status, content_type, answer = await post_signed(url, params, auth_token,
                                                             idempotency_token=new_idempotency_token())
        except (TimeoutError, aiohttp.ClientError) as exc:
            log.info("inbound text %s to %s: %s", record["sid"], url, type(exc).__name__)
            return error_response(502, None, f"the inbound URL could not be reached ({type(exc).__name__})")
        texts = replies_in(content_type, answer) if 200 <= status < 300 else []
        sent = [reply(record, text) for text in texts]
        replies = [m["body"] for m in sent if m["status"] == "delivered"]
        log.info("inbound text %s answered %d with %d replies (%d delivered)", record["sid"], status, len(sent),
                 len(replies))
        return web.json_response({"sid": record["sid"], "status": status, "auto_reply": handled.reply,
                                  "replies": replies, "refused": [m["body"] for m in sent if m["status"] == "failed"]},
                                 status=201)

    router.add_post(f"{PREFIX}/inbound", inbound)
