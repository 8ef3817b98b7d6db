"""Twilio's test credentials and their magic numbers, for a send (POST .../Messages.json) made with the test
Account SID and test auth token (Twilio's "Test credentials" page, "Test SMS messages").

With test credentials Twilio checks the request as it checks any other, charges nothing, texts no one and keeps
nothing: the answer is a Message resource (status `queued`) that no GET finds, and no status callback follows.
Every other resource answers 403 (code 20008). A From number must be a magic one, since the account's real numbers
are not the test account's:

- From `+15005550006`: passes every check; `+15005550001`: invalid (21212); `+15005550007`: not owned by the account
  or not SMS-capable (21606); `+15005550008`: its queue of outgoing messages is full (21611); any other: 21606.
- To `+15005550001`: invalid (21211); `+15005550002`: Twilio cannot route to it (21612); `+15005550003`: the
  account lacks the international permission for it (21408); `+15005550004`: blocked for the account, its owner
  replied STOP (21610); `+15005550009`: cannot receive texts (21614); any other: checked as usual.

The magic numbers mean nothing with the live credentials: there a text to `+15005550004` is a text like any other.
"""
from __future__ import annotations

from providers.messaging.simulator import errors
from providers.messaging.simulator.errors import ApiError

VALID_FROM = "+15005550006"
FROM = {
    "+15005550001": (errors.INVALID_FROM, "The 'From' number +15005550001 is not a valid phone number, shortcode, "
                                          "or alphanumeric sender ID."),
    "+15005550007": (errors.FROM_NOT_OURS, "The From phone number +15005550007 is not a valid, SMS-capable inbound "
                                           "phone number or short code for your account."),
    "+15005550008": (errors.QUEUE_FULL, "This 'From' number has exceeded the maximum number of queued messages"),
}
TO = {
    "+15005550001": (errors.INVALID_TO, "The 'To' number +15005550001 is not a valid phone number."),
    "+15005550002": (errors.UNROUTABLE, "The 'To' phone number: +15005550002, is not currently reachable using the "
                                        "'From' phone number: {from_} via SMS."),
    "+15005550003": (errors.GEO_PERMISSION, "Permission to send an SMS has not been enabled for the region indicated "
                                            "by the 'To' number: +15005550003."),
    "+15005550004": (errors.UNSUBSCRIBED, "Attempt to send to unsubscribed recipient"),
    "+15005550009": (errors.NOT_SMS_CAPABLE, "The 'To' number +15005550009 is not a valid mobile number."),
}


def check_test_send(to: str, from_: str) -> None:
    """The magic numbers' refusals, after Twilio's usual checks of the request (messages.check_send): the From
    number first, then the To number."""
    if from_ != VALID_FROM:
        code, message = FROM.get(from_, (errors.FROM_NOT_OURS, f"The From phone number {from_} is not a valid, "
                                         "SMS-capable inbound phone number or short code for your account."))
        raise ApiError(400, code, message)
    if to in TO:
        code, message = TO[to]
        raise ApiError(400, code, message.format(from_=from_))


def forbidden() -> ApiError:
    return ApiError(403, errors.TEST_CREDENTIALS, "Resource not accessible with Test Account Credentials")
