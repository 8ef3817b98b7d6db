"""Twilio's webhook signature and its TwiML replies, through the `twilio` package rather than our own copy.

Twilio signs every request it makes to us (status callbacks, inbound texts) with `X-Twilio-Signature`:
base64 HMAC-SHA1, keyed with the account's auth token, over the exact URL it requested followed by each
form parameter's name and value in name order. A receiver must check it over the URL as Twilio saw it
(scheme, host, port, path and query) and over every parameter received, including ones it does not know
(Twilio adds parameters without notice). The simulator signs with `sign`, receivers check with `is_valid`.

An inbound text is answered with TwiML: `<Response>` with one `<Message>` per reply (none: no reply).
"""
from __future__ import annotations

from twilio.request_validator import RequestValidator
from twilio.twiml.messaging_response import MessagingResponse

SIGNATURE_HEADER = "X-Twilio-Signature"
TWIML = "application/xml"  # the media type of a TwiML answer


def sign(auth_token: str, url: str, params: dict[str, str]) -> str:
    """The `X-Twilio-Signature` value of a form POST of `params` to `url`."""
    return str(RequestValidator(auth_token).compute_signature(url, params))


def is_valid(auth_token: str, url: str, params: dict[str, str], signature: str) -> bool:
    """Whether `signature` is Twilio's for this URL and these form parameters (constant-time comparison; the
    URL is tried with and without its default port, as Twilio's own validators do)."""
    if not auth_token or not signature:
        return False
    return bool(RequestValidator(auth_token).validate(url, dict(params), signature))


def twiml_reply(texts: list[str]) -> str:
    """The TwiML answer to an inbound text: one `<Message>` per text, escaped; an empty list: `<Response />`."""
    response = MessagingResponse()
    for text in texts:
        response.message(text)
    return str(response.to_xml())
