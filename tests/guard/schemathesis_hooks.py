"""Schemathesis hooks of the fuzzing guard (loaded through tests/guard/schemathesis.toml).

`positive_data_acceptance_unless_documented` is schemathesis's own positive-data check with one
allowance: a schema-valid request may get 400 (or signup's 402) when the spec refuses it by a rule that no JSON
Schema can state. Each such rule is listed below by the error code and message the API answers with, so any
other 400 on valid data still fails the run.
"""
from __future__ import annotations

import ipaddress
import os
import random
import re
from dataclasses import dataclass

import schemathesis
from schemathesis.specs.openapi.checks import ensure_resource_availability, positive_data_acceptance


@dataclass(frozen=True)
class DocumentedRefusal:
    code: str
    message: str  # a regular expression searched in the error message
    why: str
    status: int = 400


# A run's problems (preview and create answer the first ones in one 400) that no schema states: the clock's range of
# scheduled_at, libphonenumber's and the tz database's verdicts, a touch_id used twice, a context's size in bytes,
# the business's agents. The run's refusal is documented only when every problem it names is one of these.
RUN_RULES = (r"scheduled_at: is more than (\d+ days ahead|\d+ hours in the past)",
             r"target\.phone: (\S+ is not a valid phone number|is not a phone number: [^;]*|must be written in E\.164 "
             r"without spaces or punctuation, e\.g\. \+\d+)",
             r"target\.timezone: .{1,70} is not an IANA time zone name \(for example America/New_York\)",
             r"touch_id: duplicate of touches\[\d+\]: each touch_id is used once in a run",
             r"context: is over \d+ bytes as JSON",
             r"(context\.)?agent_id: (no agent \S+ in the business|agent \S+ has no phone number: assign it one before "
             r"it calls or texts)",
             r"agent_id: (the business has no agent with a phone number: assign one a number|required: the business has "
             r"\d+ agents with numbers; name the one that places the touches \(or context\.agent_id per touch\)"
             r"|required: the touches name \d+ agents in context\.agent_id; give agent_id, the run's own agent \(a "
             r"touch's context\.agent_id still places that touch\))")
_RUN_PROBLEM = rf"(touches\[\d+\] \(.*?\) )?({'|'.join(RUN_RULES)})"
RUN_REFUSED_BY_RULES = (rf"^the run has \d+ problem\(s\): {_RUN_PROBLEM}(; {_RUN_PROBLEM})*( \(and \d+ more\))?; POST "
                        r"/api/v1/communication-runs/validate lists them all$")

DOCUMENTED_REFUSALS = (
    DocumentedRefusal("invalid_request", RUN_REFUSED_BY_RULES,
                      "a run (preview, create) refused only for problems no schema can state (RUN_RULES)"),
    DocumentedRefusal("bad_request", r"^business_id is required: this key spans several businesses",
                      "depends on how many businesses the key reaches (the fuzzer creates workspaces)"),
    DocumentedRefusal("invalid_request", r"^cannot \w+ a workspace that is ",
                      "workspace lifecycle: which action is allowed depends on the current state"),
    DocumentedRefusal("invalid_request", r"(is not a valid phone number|is not a phone number|must be written in "
                      r"E\.164 without)", "libphonenumber's verdict on an E.164-shaped number"),
    DocumentedRefusal("validation_error", r"(is not a valid phone number|is not a phone number|must be written in "
                      r"E\.164 without)", "signup: libphonenumber's verdict on an E.164-shaped number"),
    DocumentedRefusal("invalid_request", r"^email is invalid: ", "email-validator's verdict beyond the schema's "
                      "email format"),
    DocumentedRefusal("validation_error", r"^email is invalid: ", "signup: email-validator's verdict"),
    DocumentedRefusal("invalid_request", r"^to is invalid: ", "emails: email-validator's verdict on the recipient"),
    # SMS and calls with compliance enforce: the spec answers these compliance checks with 400 and their own codes;
    # each depends on the recipient's history, lists, lead, the clock or the text's content, which no schema states.
    DocumentedRefusal("number_on_dnc", r"(do-not-call list|is marked do_not_contact)",
                      "the recipient is on a do-not-call list, or their lead is marked do_not_contact"),
    DocumentedRefusal("number_on_dnc", r"is on the national do-not-call registry",
                      "the recipient is on the national registry (area codes the operator imported) with no exemption"),
    DocumentedRefusal("dnc_registry_stale", r"^the national do-not-call registry's data for area code \d+ ",
                      "the operator's copy of the registry for the recipient's area code is older than 31 days"),
    DocumentedRefusal("number_opted_out", r"(opted out|has not opted in|has not agreed to be called)",
                      "no consent from the recipient"),
    DocumentedRefusal("content_blocked", r"^rule \w+: ", "SMS: the text breaks a content rule"),
    DocumentedRefusal("tcpa_violation", r"^(quiet hours|frequency): ",
                      "outside the recipient's legal window, or over the calls-per-24-hours cap"),
    DocumentedRefusal("tcpa_violation", r"^no moment in the next \d+ days is legal",
                      "the callee's zones share no legal moment"),
    DocumentedRefusal("invalid_request", r"^callee_timezone: .* is not an IANA time zone name",
                      "a callee's time zone must be in the tz database (the schema gives its shape)"),
    DocumentedRefusal("invalid_request", r"(must be valid text without NUL characters|must not contain NUL)",
                      "text may not hold NUL or unpaired surrogates (OpenAPI info); not expressible per field"),
    DocumentedRefusal("validation_error", r"must be valid text without NUL characters",
                      "signup: text may not hold NUL or unpaired surrogates"),
    DocumentedRefusal("invalid_request", r"^webhook_url host .* (does not resolve|resolves to)",
                      "webhook hosts must resolve to public addresses, checked by DNS"),
    DocumentedRefusal("invalid_request", r"^webhook_url is not a valid URL: ",
                      "a URL the pattern shapes but urllib or yarl cannot read (core.urls): a bracketed host that is no "
                      "IP address, a port past 65535"),
    DocumentedRefusal("validation_error", r"^website is not a valid URL: ", "signup: the same of the website"),
    DocumentedRefusal("invalid_request", r"^agent_id is not an agent of this business",
                      "a record's agent must belong to the record's business (another business of the same key)"),
    DocumentedRefusal("invalid_request", r"^timezone must be an IANA time zone name",
                      "a workspace's timezone must be in the tz database (about 550 names: the schema gives their shape; "
                      "an enum of them all made the fuzzer's coverage phase stall)"),
    DocumentedRefusal("invalid_request", r"^start must be before end", "a window whose ends are reversed"),
    DocumentedRefusal("invalid_request", r"^expires_at must be in the future", "depends on the clock"),
    DocumentedRefusal("invalid_request", r"must be between years 1 and 9999 in UTC",
                      "an RFC 3339 time whose offset moves it outside years 1-9999"),
    DocumentedRefusal("invalid_request", r"^request body is larger than \d+ KiB",
                      "a body's size in bytes (a run of 10,000 touches with large contexts); schemas count items"),
    DocumentedRefusal("invalid_request", r"^this webhook is disabled", "replay to a disabled webhook"),
    DocumentedRefusal("invalid_request", r"^with the dashboard session, a request that changes something must send",
                      "CSRF: with the dashboard session, a write whose optional body is left out needs X-Requested-With "
                      "(the document declares the header only where a route takes no body)"),
    DocumentedRefusal("invalid_request", r"^at most \d+ events per replay", "backfill window too large"),
    # Signup and the x402 renewal: the spec answers an x402 payment that is missing or not valid with 402
    # payment_required; whether a payment is there and valid is the PAYMENT-SIGNATURE header's content, which no
    # schema can state.
    DocumentedRefusal("payment_required", r"(asks to pay with x402|the payment was refused|could not be settled|"
                      r"pay the next \d+ days|this payment was used already)",
                      "x402 without a valid payment", status=402),
    DocumentedRefusal("validation_error", r"^the PAYMENT-SIGNATURE header is malformed",
                      "x402: the header must hold base64 JSON of an x402 payment; the schema can only shape base64"),
    DocumentedRefusal("invalid_request", r"^messages(\[\d+\]\S*)? ",
                      "eval turns: alternation, each judge plan's fields and the rubric's pass/fail words go beyond "
                      "what the published schema states per turn"),
    DocumentedRefusal("invalid_request", r"^send exactly one of ",
                      "eval runs: exactly one of several optional parameters (a query schema cannot say so)"),
    DocumentedRefusal("invalid_request", r"^this agent has no eval scenarios to run",
                      "eval fan-out: depends on the agent's stored scenarios"),
    # Bookings (services.sdr.bookings_domain): what a slot is depends on the clock and the business's saved
    # availability, and the pairs of fields that go together are beyond a query or body schema.
    DocumentedRefusal("invalid_request", r"^weekly_hours\.\w+(\[\d+\])? (must open before it closes|has overlapping "
                      r"windows)", "availability: a window's ends reversed, or two windows of a day overlapping"),
    DocumentedRefusal("invalid_request", r"^(give either date or from and to|give date, or from and to|to must not be "
                      r"before from|from\.\.to covers at most \d+ days)",
                      "slots: date, or from and to, at most 14 days apart (a query schema cannot say so)"),
    DocumentedRefusal("invalid_request", r"^(starts_at is in the past|starts_at is beyond the booking horizon|"
                      r"\S+ is a blackout date|starts_at \S+ is not a slot of the business's availability)",
                      "bookings: a free slot depends on the clock and the business's availability"),
    DocumentedRefusal("invalid_request", r"^give starts_at to reschedule or status canceled to cancel",
                      "bookings: a change is either a new time or a cancel"),
    DocumentedRefusal("invalid_request", r"^to must be after from", "bookings: a list window whose ends are reversed"),
    DocumentedRefusal("invalid_request", r"^cursor is not one this API returned",
                      "a page cursor is an opaque token the API issued; its alphabet is all a schema can state"),
    # OAuth sign-in (RFC 6749 refusals, {error, error_description}): the spec leaves these endpoints' parameters to
    # the RFCs, whose rules go beyond a schema.
    DocumentedRefusal("invalid_grant", r"^the (authorization code|refresh token) is invalid",
                      "OAuth: a code or refresh token is an opaque value this server issued"),
    DocumentedRefusal("invalid_request", r"^(code|code_verifier|redirect_uri|refresh_token) is required$",
                      "OAuth: which token parameters are required depends on grant_type (RFC 6749 4.1.3, 6)"),
    DocumentedRefusal("invalid_redirect_uri", r"(must (use https|be an absolute URI)|is not a valid URL: )",
                      "OAuth registration: redirect URIs are https, or http on loopback, absolute (RFC 8252)"),
    DocumentedRefusal("invalid_client_metadata", r"",
                      "OAuth registration: RFC 7591's rules on the URIs and values of client metadata (Authlib)"),
)


def documented_refusal(response) -> DocumentedRefusal | None:
    """The documented rule a 400 answer invokes, if any."""
    if response.status_code not in {r.status for r in DOCUMENTED_REFUSALS}:
        return None
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return None
    if isinstance(error, str):  # an OAuth endpoint's RFC 6749 refusal
        error = {"code": error, "message": response.json().get("error_description", "")}
    return next((r for r in DOCUMENTED_REFUSALS if r.status == response.status_code and r.code == error.get("code")
                 and re.search(r.message, error.get("message", ""))), None)


@schemathesis.check
def positive_data_acceptance_unless_documented(ctx, response, case):
    """Schema-valid requests are accepted, unless refused by one of DOCUMENTED_REFUSALS."""
    try:
        return positive_data_acceptance(ctx, response, case)
    except AssertionError:
        if documented_refusal(response) is None:
            raise
        return None


@schemathesis.check
def ensure_resource_availability_of_linked_ids(ctx, response, case):
    """schemathesis's ensure_resource_availability (a record a POST created answers 404 to the request that follows
    the link from it), for routes that take the record's id in the body (PATCH /api/v1/agents {id}): the stateful
    phase sometimes sends a generated id instead of the link's, to explore, and the stock check, which looks only at
    parameters, then calls the 404 of that unknown id a created record not found (issue 50's seed 20261122 did). A
    404 is judged only when every id the body sends came from the POST's answer."""
    if response.status_code == 404 and isinstance(case.body, dict):
        parent = ctx.internals.find_parent(case_id=case.id)
        answer = ctx.internals.find_response(case_id=parent.id) if parent is not None else None
        try:
            created = answer.json() if answer is not None else None
        except ValueError:
            created = None
        if isinstance(created, dict):
            sent = {v for k, v in case.body.items() if (k == "id" or k.endswith("_id")) and isinstance(v, str)}
            if not sent <= set(_strings(created)):
                return None  # an id no link gave: not the created record, and unknown ids are 404
    return ensure_resource_availability(ctx, response, case)


def _strings(value) -> list:
    """Every string in a JSON value (the ids an answer gives, nested or not)."""
    if isinstance(value, str):
        return [value]
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [s for child in children for s in _strings(child)]


_TEST_NET = ipaddress.ip_network("198.18.0.0/15")  # benchmarking range: never a real client
SIGN_OUT_PATH, SESSION_COOKIE = "/api/v1/sessions/logout", "sb_session"


@schemathesis.hook
def before_call(context, case, kwargs):
    """Each signup from an address of its own (the test stack trusts X-Forwarded-For from 127.0.0.1), so
    the 5-per-hour limit does not turn every later signup into a 429. Signing out ends the session it is sent
    with (everywhere: every session of its account): it is sent with a session of an account of its own, so the
    rest of the run keeps the session it fuzzes key management with."""
    if case.operation.path == "/api/v1/signup":
        address = _TEST_NET[random.randrange(_TEST_NET.num_addresses)]
        case.headers = {**(case.headers or {}), "X-Forwarded-For": str(address)}
    if case.operation.path == SIGN_OUT_PATH and SESSION_COOKIE in (case.cookies or {}):
        case.cookies = {**case.cookies, SESSION_COOKIE: os.environ["SWITCHBOARD_FUZZ_SIGN_OUT_SESSION"]}
