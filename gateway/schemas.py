"""Named JSON Schemas of the public objects, published at /api/v1/schemas and in OpenAPI.

Response objects are derived from the proto messages the handlers convert (see
gateway.convert), request bodies are written here because they are the public
input contract. Their enums, limits and defaults come from the owning service's domain module,
so a rule changes in one place (the services still enforce it: the schema describes it early).
"""
from __future__ import annotations

from typing import Any

from contracts import accounts, agents, billing, bookings, calls, evals, leads, messaging, pipeline, runs, webhooks
from contracts.agents import RING_SECONDS
from core import plans, settings, standing
from core.compliance import recording_rules as recording
from core.contact import E164_PATTERN
from core.events import PARTNER_EVENT_TYPES
from core.scopes import ALL_SCOPES
from gateway.convert import schema_of
from gateway.patterns import E164_OR_EMPTY, HTTP_URL, NOT_BLANK
from gateway.patterns import WEBHOOK_ID as WEBHOOK_ID_PATTERN
from switchboard.v1 import (
    accounts_pb2,
    agents_pb2,
    calls_pb2,
    common_pb2,
    evals_pb2,
    messaging_pb2,
    sdr_pb2,
    webhooks_pb2,
)

UUID = {"type": "string", "format": "uuid"}
TIME = {"type": "string", "format": "date-time"}
NULLABLE_TIME = {"anyOf": [TIME, {"type": "null"}]}
# Configuration versions are 32-bit integers in the services' contracts.
VERSION = {"type": "integer", "minimum": 1, "maximum": 2**31 - 1}
E164 = {"type": "string", "pattern": E164_PATTERN, "description": "E.164, e.g. +14155550123"}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required)}


# The end of every newest-first list (core.pagination).
PAGE_FIELDS = {
    "has_more": {"type": "boolean"},
    "next_cursor": {"anyOf": [{"type": "string"}, {"type": "null"}],
                    "description": "while has_more is true: pass it as `cursor` for the next page (null at the end)"},
}


ERROR = _obj({"error": _obj({
    "code": {"type": "string"}, "message": {"type": "string"},
    "payment_required": {"type": "object", "description": "402 payment_required only: the x402 payment terms, "
                         "as in the PAYMENT-REQUIRED header"},
    "eval_gate": {"type": "object", "description": "409 conflict from an agent's eval gate only: {status (failed or "
                  "unfinished), batch_id, total, completed, passed, failed, runs: the failing and unfinished runs with "
                  "their results}"},
    "limit": {"type": "string", "enum": list(plans.LIMIT_NAMES.values()), "description": "429 rate_limited from a "
              "daily spend limit only: which limit of the business's plan was reached (GET /api/v1/balance shows "
              "them with today's use)"}}, ("code", "message"))}, ("error",))

SIGNUP_REQUEST = _obj({
    "business_name": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": 200},
    "email": {"type": "string", "minLength": 3, "maxLength": 320, "format": "email"},
    "business_type": {"type": "string", "maxLength": 100},
    "website": {"type": "string", "maxLength": 2000, "format": "uri", "pattern": HTTP_URL},
    "phone_forward_to": E164,
    "plan_id": {"type": "string", "enum": [*plans.PLANS, *settings.load().checkout_prices],
                "default": plans.DEFAULT_PLAN,
                "description": "a plan name or one of the checkout price ids this deployment offers. Plans "
                "(monthly price per workspace; workspaces per account, the signup's included): " + "; ".join(
                    f"{plan} ${plans.MONTHLY_PRICE_CENTS[plan] // 100}, {plans.WORKSPACE_LIMITS[plan]} workspaces"
                    for plan in plans.PLANS) + ". Further workspaces (POST /api/v1/workspaces) are billed on the "
                "account's subscription and share its one trial"},
    "payment_capture": {"type": "string", "enum": [billing.HOSTED_CHECKOUT, billing.X402],
                        "description": f"how the subscription is paid: '{billing.HOSTED_CHECKOUT}' (the default: "
                        f"a hosted card checkout, checkout_url) or '{billing.X402}' (the x402 protocol: without a "
                        "PAYMENT-SIGNATURE header the answer is 402 with the PAYMENT-REQUIRED header). A "
                        "PAYMENT-SIGNATURE header alone also means x402."},
}, ("business_name", "email"))

# payment_response is sent as the PAYMENT-RESPONSE header; checkout_url is there only when not paid by x402.
_SIGNUP_REPLY = schema_of(accounts_pb2.SignupReply, omit=("payment_response",))
_SIGNUP_REPLY["properties"]["trial_ends_at"] = TIME
_SIGNUP_REPLY["properties"]["checkout_url"] = {"type": "string", "format": "uri",
                                               "description": "only when not paid by x402"}
_SIGNUP_REPLY["required"].remove("checkout_url")
_SIGNUP_REPLY["properties"]["payment_capture"]["enum"] = [billing.HOSTED_CHECKOUT, billing.X402]
X402_PAYMENT_STATUS = {"type": "string", "enum": [billing.X402_SETTLED, billing.X402_PENDING],
                       "description": "x402: settled, or pending when the facilitator left the settlement unanswered "
                       "(it is reconciled within minutes: nothing is provisioned or extended until it is settled, "
                       "and the owner is e-mailed the outcome)"}
_SIGNUP_REPLY["properties"]["payment_status"] = {"anyOf": [X402_PAYMENT_STATUS, {"type": "null"}],
                                                 "description": "null for the card checkout"}
PAYMENT_EVENT = {"type": "object", "description": "the payment provider's event object (its own schema)",
                 "properties": {"id": {"type": "string"}, "type": {"type": "string"}}, "required": ["id", "type"]}

SCOPES = {"type": "array", "items": {"type": "string", "enum": list(ALL_SCOPES)}, "minItems": 1}
KEY_CREATE = _obj({
    "name": {"type": "string", "maxLength": accounts.KEY_NAME_MAX, "default": accounts.DEFAULT_KEY_NAME},
    "business_id": {"anyOf": [UUID, {"type": "null"}], "description": "limit the key to one business; null or omitted: all"},
    "scopes": SCOPES,
    "expires_at": NULLABLE_TIME,
})
KEY_UPDATE = _obj({
    "id": UUID,
    "name": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": accounts.KEY_NAME_MAX},
    "scopes": SCOPES,
    "business_id": {"anyOf": [UUID, {"type": "null"}]},
    "expires_at": NULLABLE_TIME,
    "expire": {"type": "boolean", "description": "true sets the expiry to now"},
    "revoke": {"type": "boolean", "description": "true revokes the key; it stops working on the next request"},
}, ("id",))
SIGN_OUT = _obj({"everywhere": {
    "type": "boolean", "default": False, "description": "true: end every session of the account (every browser "
    "signed in to it) and its unused sign-in links; false or omitted: this session only"}})

CHECKOUT_OPEN = _obj({"business_id": {**UUID, "description": "the key's only business when omitted"}})
X402_RENEW = CHECKOUT_OPEN

METADATA = {"type": "object", "description": "free-form; merged into the existing metadata on update"}
TIMEZONE = {"type": "string", "pattern": r"^(UTC|[A-Za-z_]+(/[A-Za-z0-9_+-]+){1,2})$", "examples": ["America/New_York"],
            "description": "an IANA time zone of the tz database (e.g. America/New_York, Europe/Paris, UTC; "
            "abbreviations such as EST are refused), in which the business's analytics cut days and weeks"}
WORKSPACE_CREATE = _obj({
    "name": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": accounts.WORKSPACE_NAME_MAX},
    "metadata": METADATA,
    "external_ref": {"type": "string", "maxLength": 200},
    "timezone": {**TIMEZONE, "default": accounts.DEFAULT_TIMEZONE},
}, ("name",))
# What each kind of retention covers (services.accounts.privacy.data_retention; docs/privacy.md).
RETENTION_KINDS = {
    "recordings_days": "call recordings: deleted at the voice provider with the provider's copy of the call (which "
    "holds its transcript too), and the recording link cleared here",
    "transcripts_days": "call transcripts, summaries and what was extracted from them, tool-call arguments: "
    "redacted here (the call stays, for counts and billing); the provider's copy of the call is deleted then too, "
    "so a recording is kept no longer than its transcript",
    "message_bodies_days": "the bodies of texts and emails: redacted here and at the SMS provider (media deleted)",
    "webhook_events_days": "the event history (GET /api/v1/events, replays): events past it are deleted",
    "evidence_days": "the compliance decision and consent logs: redacted of content past it, keeping what proves "
    "consent and decisions (who, when, which rule); at least 4 years, TCPA's statute of limitations",
}


def _retention_days(kind: str, update: bool) -> dict[str, Any]:
    default, least, most = accounts.RETENTION_DAYS[kind]
    days = {"type": "integer", "maximum": most, "description": f"{RETENTION_KINDS[kind]}. Default {default} days"}
    if update:  # 0 (the default) or the range: one range from 0 for the kinds whose minimum is 1
        gap = {"anyOf": [{"const": accounts.RETENTION_RESET}, {"minimum": least}]} if least > 1 else {}
        return {**days, "minimum": accounts.RETENTION_RESET, **gap,
                "description": f"{days['description']}; {accounts.retention_range(kind)}"}
    return {**days, "minimum": least}


RETENTION_NOTE = ("How long the business keeps its customers' personal data, in days per kind, counted from when "
                  "the record was made. A retention job deletes or redacts what is past it, here and at the "
                  "providers, once a day per business (and within minutes of a change), in batches, logged.")
RETENTION = {**_obj({kind: _retention_days(kind, False) for kind in RETENTION_KINDS}, tuple(RETENTION_KINDS)),
             "description": f"{RETENTION_NOTE} Every kind is answered: the business's setting, else the default."}
RETENTION_UPDATE = {**_obj({kind: _retention_days(kind, True) for kind in RETENTION_KINDS}),
                    "additionalProperties": False,
                    "description": f"{RETENTION_NOTE} The kinds named change; the others keep their setting. 0 sets a "
                    "kind back to its default. A value out of its range or not a whole number is 400 "
                    "validation_error naming the kind and its range."}
WORKSPACE_UPDATE = _obj({
    "id": UUID,
    "name": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": accounts.WORKSPACE_NAME_MAX},
    "metadata": METADATA,
    "action": {"type": "string", "enum": list(accounts.LIFECYCLE_ACTIONS)},
    "timezone": TIMEZONE,
    "retention": RETENTION_UPDATE,
}, ("id",))
# What the gateway checks of an update: its retention's values are the accounts service's to refuse
# (validation_error, as the API promises), past the gateway's check that each fits a protobuf int32.
WORKSPACE_UPDATE_CHECK = _obj({**WORKSPACE_UPDATE["properties"], "retention": {"type": "object"}}, ("id",))

# -- agents ------------------------------------------------------------------------------

VOICE = {**_obj({"provider": {"type": "string", "enum": list(agents.VOICE_PROVIDERS)},
                 "voiceId": {"type": "string", "minLength": 1, "pattern": NOT_BLANK}}),
         "additionalProperties": False, "dependentRequired": {"voiceId": ["provider"], "provider": ["voiceId"]},
         "description": "the voice at the provider; omitted or {}: the provider's default voice (at creation only: "
         "once set, a voice can be changed but not unset)"}
MODEL = {**_obj({"provider": {"type": "string", "enum": list(agents.MODEL_PROVIDERS),
                              "default": agents.DEFAULT_MODEL["provider"]},
                 "model": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": NOT_BLANK,
                           "default": agents.DEFAULT_MODEL["model"]},
                 "temperature": {"type": "number", "minimum": 0, "maximum": 2,
                                 "default": agents.DEFAULT_MODEL["temperature"]}}),
         "additionalProperties": False}
PROMPT = {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": agents.PROMPT_MAX}
GREETING = {"type": "string", "maxLength": agents.MESSAGE_MAX}
AGENT_NAME = {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": agents.NAME_MAX}
LLM = {"type": "string", "maxLength": agents.LLM_MAX}


def _provider_groups() -> str:
    """The provider_config groups that pass, numeric ones with their bounds."""
    named = [f"{g} ({agents.PROVIDER_CONFIG_BOUNDS[g][0]}-{agents.PROVIDER_CONFIG_BOUNDS[g][1]})"
             if g in agents.PROVIDER_CONFIG_BOUNDS else g for g in agents.PROVIDER_CONFIG_GROUPS]
    return f"{', '.join(named[:-1])} and {named[-1]}"


EXPECTED_VERSION = {**VERSION, "description": "owner-edit guard: refuse with 409 conflict if "
                    "the agent is no longer at this version (see GET /api/v1/agents/versions)"}
EVAL_GATE = {"type": "boolean", "description": "opt in to the eval gate: a change of a prompt, greeting or model "
             "first runs the agent's eval scenarios against the new configuration and is refused (409) if any fails"}
FORCE = {"type": "boolean", "default": False, "description": "apply the change even if the eval gate would refuse "
         "it (the version records eval_gate {status: forced, forced_by})"}
RECORDING_DISCLOSURE = {**_obj({
    "mode": {"type": "string", "enum": list(recording.MODES), "default": recording.AUTO,
             "description": "auto: spoken on a call whose other party may be in a state that needs every party's "
             "consent to record (CA, CT, DE, FL, IL, MD, MA, MT, NV, NH, OR, PA, WA, by area code and the lead's "
             "state) or whom no US state places; always: on every call; off: never (the business answers for "
             "recording consent, as with compliance skip)"},
    "message": {"anyOf": [{"type": "string", "minLength": 1, "pattern": NOT_BLANK,
                           "maxLength": agents.DISCLOSURE_MESSAGE_MAX}, {"type": "null"}],
                "description": "the words, spoken as a line of their own before the call's first message; null: the "
                f"default wording ({recording.STAY_ON_LINE}: \"{recording.DEFAULT_MESSAGES[recording.STAY_ON_LINE]}\"; "
                f"{recording.VERBAL}: \"{recording.DEFAULT_MESSAGES[recording.VERBAL]}\")"},
    "consent": {"type": "string", "enum": list(recording.CONSENT_TYPES), "default": recording.STAY_ON_LINE,
                "description": f"{recording.STAY_ON_LINE}: staying on the call is consent, hanging up declines; "
                f"{recording.VERBAL}: the other party answers, and a no ends the call"},
}), "additionalProperties": False,
    "description": "the recording disclosure (every call is recorded; the provider records only once the other "
    "party consents). Each field optional, merged into the current setting on update; versioned"}
_TIMEOUT = agents.TIMEOUT_MS
TOOLS = {"type": "array", "items": _obj({"type": {"type": "string", "description": ", ".join(agents.AGENT_TOOLS)}},
                                       ("type",)),
         "description": f"what the agent may do during a call: at most {agents.TOOLS_MAX} tools {{type, ...}}, each "
         "built-in type at most once (GET /api/v1/capabilities lists them as agent_tools). send_sms, "
         "check_availability, book_appointment, update_lead and end_call take no options. send_link: links [{name "
         f"(unique, at most {agents.LINK_NAME_MAX} characters), url (https)}}] (1 to {agents.LINKS_MAX}). "
         f"transfer_call: destinations [{{name, phone_number (E.164), mode: warm (the default: the person hears who "
         f"is coming and why) or blind, message (at most {agents.TRANSFER_MESSAGE_MAX} characters, said to the "
         f"caller first)}}] (at most {agents.DESTINATIONS_MAX}); none: the business's phone_forward_to, with mode (warm, "
         "the default, or blind) for it. custom: the "
         "business's own function: name (letters, digits, _ and -, at most 64, unique, not a built-in type), "
         f"description (1 to {agents.CUSTOM_DESCRIPTION_MAX} characters), parameters (a JSON Schema of an object "
         f"{{type: object, properties, required}}, at most {agents.PARAMETERS_MAX_BYTES} bytes, with the keywords "
         f"{', '.join(sorted(agents.PARAMETER_KEYWORDS))} only), url (https, a host that resolves to public addresses "
         "only: the local stack of `make run` also takes loopback URLs), timeout_ms "
         f"({_TIMEOUT[1]} to {_TIMEOUT[2]}, default {_TIMEOUT[0]}). A bad tool is 400 invalid_request naming it, e.g. "
         "tools[2].url. Versioned; PATCH replaces the whole list ([] removes every tool)."}
AGENT_CREATE = _obj({
    "business_id": UUID,
    "name": AGENT_NAME,
    "system_prompt": {**PROMPT, "description": "the inbound prompt"},
    "first_message": {**GREETING, "minLength": 1, "pattern": NOT_BLANK, "default": agents.DEFAULT_FIRST_MESSAGE},
    "voice": VOICE,
    "model": MODEL,
    "metadata": {"type": "object"},
    "eval_gate": {**EVAL_GATE, "default": False},
    "recording_disclosure": RECORDING_DISCLOSURE,
    "tools": TOOLS,
}, ("business_id", "name", "system_prompt"))
AGENT_UPDATE = _obj({
    "id": UUID,
    "name": AGENT_NAME,
    "inbound_prompt": {**PROMPT, "description": "synced to the provider assistant"},
    "system_prompt": {**PROMPT, "description": "legacy alias of inbound_prompt (send one of the two)", "deprecated": True},
    "outbound_prompt": {"type": "string", "maxLength": agents.PROMPT_MAX,
                        "description": "applied at call time; empty clears"},
    "sms_prompt": {"type": "string", "maxLength": agents.PROMPT_MAX, "description": "empty clears"},
    "first_message": {**GREETING, "minLength": 1, "pattern": NOT_BLANK, "description": "inbound greeting"},
    "outbound_first_message": {**GREETING, "description": "opening line of outbound calls; empty clears"},
    "outbound_llm": {**LLM, "description": "model for outbound calls; empty clears"},
    "sms_llm": {**LLM, "description": "model for SMS replies; empty clears"},
    "voice": VOICE,
    "model": {**MODEL, "description": "merged into the current model"},
    "metadata": METADATA,
    "provider_config": {"type": "object", "description": "provider assistant settings, forwarded after sanitizing: "
                        f"only the setting groups {_provider_groups()} pass; other keys are dropped and listed in ignored_provider_config. "
                        "analysisPlan.structuredDataPlan is always the built-in lead collection. Groups are merged into the ones in "
                        "force: a group can be replaced but not removed by PATCH (a rollback to a version without it resets it "
                        "to the provider's default)."},
    "expected_version": EXPECTED_VERSION,
    "eval_gate": {**EVAL_GATE, "description": EVAL_GATE["description"] + " (true or false; not versioned; a write "
                  "that turns it off is still gated)"},
    "force": FORCE,
    "recording_disclosure": RECORDING_DISCLOSURE,
    "tools": TOOLS,
}, ("id",))
ROTATE_TOOL_SECRET = _obj({"id": UUID}, ("id",))
AGENT_UPDATE["not"] = {"required": ["inbound_prompt", "system_prompt"]}
PERSONA = _obj({
    "lead_name": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": agents.PERSONA_TEXT_MAX},
    "scenario": {"type": "string", "minLength": 1, "pattern": NOT_BLANK, "maxLength": agents.PERSONA_TEXT_MAX},
    "objective": {"type": "string", "maxLength": agents.PERSONA_TEXT_MAX},
    "script": {"type": "string", "maxLength": agents.PERSONA_TEXT_MAX},
    "persona_traits": {"type": "string", "maxLength": agents.PERSONA_TEXT_MAX},
    "callback_number": {"type": "string", "maxLength": agents.PERSONA_TEXT_MAX},
    "facts_to_reveal": {"type": "array", "items": {"type": "string"}, "maxItems": 50,
                        "description": "shared only when asked"},
    "facts_to_withhold": {"type": "array", "items": {"type": "string"}, "maxItems": 50,
                          "description": "never volunteered"},
}, ("lead_name", "scenario"))
PERSONA_LOAD = _obj({
    "agent_id": {**UUID, "description": "the agent (or send it as id; one of the two is required)"},
    "id": {**UUID, "description": "alias of agent_id"},
    "persona": PERSONA,
    "voice": VOICE,
    "model": MODEL,
    "first_message": {**GREETING, "minLength": 1, "pattern": NOT_BLANK,
                      "description": "overrides the opening line derived from the persona"},
    "expected_version": EXPECTED_VERSION,
    "force": {"type": "boolean", "default": False,
              "description": "replace an inbound prompt the owner wrote in the dashboard (owner-edit guard), and "
              "apply the persona even if the eval gate would refuse it (recorded in the version)"},
}, ("persona",))
PERSONA_LOAD["oneOf"] = [{"required": ["agent_id"]}, {"required": ["id"]}]
SMS_PROMPT_UPDATE = _obj({
    "agent_id": UUID,
    "sms_prompt": PROMPT,
    "reason": {"type": "string", "maxLength": agents.REASON_MAX, "description": "audit note"},
    "force": FORCE,
}, ("agent_id", "sms_prompt"))
ROLLBACK = _obj({
    "agent_id": UUID,
    "version": {**VERSION, "description": "the version whose configuration is re-deployed"},
    "expected_version": EXPECTED_VERSION,
    "force": FORCE,
}, ("agent_id", "version"))

# -- phone numbers -------------------------------------------------------------------------

NUMBER_ASSIGN = _obj({
    "business_id": {**UUID, "description": "needed when the key spans several businesses"},
    "phone_number": {**E164, "description": "E.164, e.g. +14155550123 (checked with libphonenumber: a number "
                     "that does not exist is refused)"},
    "agent_id": {**UUID, "description": "the agent that answers the number; omitted: no agent yet"},
}, ("phone_number",))

NUMBER_UPDATE = _obj({
    "business_id": {**UUID, "description": "needed when the key spans several businesses"},
    "phone_number": E164,
    "agent_id": {"anyOf": [UUID, {"type": "null"}], "description": "the agent that answers the number; null: none"},
    "forwarding": {"anyOf": [_obj({
        "to": {**E164, "description": "the phone an inbound call rings first, e.g. the owner's mobile"},
        "ring_seconds": {"type": "integer", "minimum": RING_SECONDS[1], "maximum": RING_SECONDS[2],
                         "default": RING_SECONDS[0],
                         "description": "how long it rings there before the agent answers; keep it below that "
                         "phone's own voicemail delay (often 20-25 s)"}}, ("to",)), {"type": "null"}],
        "description": "ring-first forwarding; null: calls go straight to the agent"},
}, ("phone_number",))
NUMBER_UPDATE["anyOf"] = [{"required": ["agent_id"]}, {"required": ["forwarding"]}]

# -- leads ------------------------------------------------------------------------------------

LEAD_STATUSES = list(leads.STATUSES)


def _lead_text(field: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": leads.LIMITS[field], **extra}


_LEAD_WRITABLE = {
    "name": _lead_text("name", description="omitted: first_name and last_name joined"),
    **{f: _lead_text(f) for f in ("first_name", "last_name", "address", "city", "state", "zip", "notes")},
    "email": _lead_text("email", description="checked and lower-cased"),
    "phone": {"type": "string", "pattern": E164_OR_EMPTY, "description": "E.164, e.g. +14155550123; empty clears it"},
    "source": _lead_text("source", minLength=1, pattern=NOT_BLANK),
}
LEAD_CREATE = _obj({
    "business_id": UUID, **_LEAD_WRITABLE,
    "status": {"type": "string", "enum": LEAD_STATUSES, "default": leads.DEFAULT_STATUS},
    "source": {**_LEAD_WRITABLE["source"], "default": leads.DEFAULT_SOURCE},
    **{f: _lead_text(f) for f in ("source_url", "source_page", "message", "event_date", "event_type")},
    "agent_id": UUID,
}, ("business_id",))
LEAD_UPDATE = _obj({
    "id": UUID, **_LEAD_WRITABLE,
    "status": {"type": "string", "enum": list(leads.PATCH_STATUSES),
               "description": ", ".join(leads.PATCH_STATUSES[:-1]) + f" or {leads.PATCH_STATUSES[-1]}"},
}, ("id",))

# -- calls ------------------------------------------------------------------------------------

CALL_STATUS = {"type": "string", "enum": list(calls.STATUSES)}
_CALL_TEXTS = {"name": {"type": "string", "maxLength": calls.NAME_MAX, "description": "the agent greets the callee "
                        "by this name; alias customer_name"},
               "customer_name": {"type": "string", "maxLength": calls.NAME_MAX, "description": "alias of name"},
               "context": {"type": "string", "maxLength": calls.CONTEXT_MAX,
                           "description": "free-form task or appointment notes, added to the prompt"},
               "first_message": {"type": "string", "maxLength": calls.FIRST_MESSAGE_MAX,
                                 "description": "overrides the opening line; alias firstMessage; default: the "
                                 "agent's outbound greeting"},
               "firstMessage": {"type": "string", "maxLength": calls.FIRST_MESSAGE_MAX,
                                "description": "alias of first_message"}}
CALL_CREATE = _obj({
    "agent_id": UUID,
    "to": E164,
    **_CALL_TEXTS,
    "lead_id": {**UUID, "description": "links the call to this lead and enriches the prompt with it"},
    "webhook_url": {"type": "string", "maxLength": 2000, "pattern": HTTP_URL,
                    "description": "receives call.completed or call.failed for this call"},
    "max_duration": {"type": "integer", "minimum": calls.MAX_DURATION_BOUNDS[0],
                     "maximum": calls.MAX_DURATION_BOUNDS[1], "default": calls.DEFAULT_MAX_DURATION,
                     "description": "seconds"},
    "compliance": {"type": "string", "enum": list(calls.COMPLIANCE_MODES), "default": "skip",
                   "description": "skip (the spec's default: the caller answers for consent and do-not-call; the call "
                   "is still counted against the callee's frequency caps and logged, never refused) or enforce: the "
                   "platform's outbound compliance decision runs first and refuses with its code"},
    "callee_timezone": {**TIMEZONE, "description": "with compliance enforce: the IANA time zone the callee is in, "
                        "judged together with their area code's and their lead's state's zones"},
}, ("agent_id", "to"))
CALL_CREATE["allOf"] = [{"not": {"required": ["name", "customer_name"]}},
                        {"not": {"required": ["first_message", "firstMessage"]}},
                        {"if": {"required": ["callee_timezone"]},
                         "then": {"properties": {"compliance": {"const": "enforce"}}, "required": ["compliance"]}}]
PROVIDER_MESSAGE = _obj({"message": {**_obj({"type": {"type": "string"}, "call": {"type": "object"}}, ("type",)),
                                     "description": "the provider's server message (its own schema)"}},
                        ("message",))
_CALL = schema_of(calls_pb2.Call)
_CALL["properties"]["status"] = CALL_STATUS
_CALL["properties"]["tool_calls"]["items"]["properties"]["outcome"] |= {
    "enum": list(calls.TOOL_OUTCOMES), "description": "running (its result is not written yet), ok (the tool ran), "
    "refused (not run: the agent has no such tool, or it may not run) or failed (it failed, timed out or answered "
    "with an error)"}
_CALL_DISCLOSURE = _CALL["properties"]["recording_disclosure"]["anyOf"][0]["properties"]
_CALL_DISCLOSURE["reason"] |= {"enum": list(recording.REASONS), "description": ", ".join(recording.SPOKEN_REASONS)
                               + ": spoken (unplaced: no US state places the other party); "
                               f"{recording.ONE_PARTY_ONLY}, {recording.TURNED_OFF} (the agent's setting): not spoken"}
_CALL_DISCLOSURE["consent"] = {"anyOf": [{"type": "string", "enum": ["granted", "not_granted"]}, {"type": "null"}],
                               "description": "from the end-of-call report: granted, or not_granted (declined or "
                               "hung up first; no recording is kept then); null before the report or when not spoken"}
_CALL_DISCLOSURE["consent_type"] = {"anyOf": [{"type": "string", "enum": list(recording.CONSENT_TYPES)},
                                              {"type": "null"}]}
_AGENT = schema_of(agents_pb2.Agent)
_AGENT["properties"]["recording_disclosure"] = {
    **_obj({"mode": {"type": "string", "enum": list(recording.MODES)}, "message": {"type": "string"},
            "consent": {"type": "string", "enum": list(recording.CONSENT_TYPES)}}, ("mode", "message", "consent")),
    "description": "the recording disclosure in force (see AgentCreateRequest; message: the words spoken, the default "
    "wording of the consent type unless the agent has its own)"}
# The spec's creation reply and list entries (inbound entries carry direction and summary).
CREATED_FIELDS = ("id", "conversation_id", "status", "agent_id", "to", "name", "created_at")
LIST_FIELDS = ("id", "conversation_id", "status", "direction", "duration", "agent_id", "agent_name", "to", "summary",
               "forwarded_to", "created_at")

BUSINESS = {**UUID, "description": "needed when the key spans several businesses"}

# -- privacy: export of a business's data (gateway.routes.exports) -------------------------------------------------

EXPORT_CREATE = _obj({"business_id": BUSINESS})
_EXPORT = schema_of(accounts_pb2.Export, omit=("download_query",))
_EXPORT["properties"]["download_url"] = {
    "anyOf": [{"type": "string", "format": "uri"}, {"type": "null"}],
    "description": "completed: a signed link to the archive (.tar.gz) that needs no key, freshly signed on each read "
    "and valid until download_expires_at; null otherwise"}
_EXPORT["required"] = [*_EXPORT.get("required", []), "download_url"]

# -- privacy: erasure of a person (gateway.routes.privacy) ------------------------------------------------------------

ERASURE_CREATE = {**_obj({
    "business_id": BUSINESS,
    "phone": {"type": "string", "minLength": 1, "maxLength": 40,
              "description": "E.164, or the national format of the business's country (that of its phone_forward_to; "
              "US without one)", "examples": ["+14155550123", "(415) 555-0123"]},
    "email": {"type": "string", "minLength": 1, "maxLength": 254, "description": "checked and lower-cased",
              "examples": ["dana.reyes@example.com"]},
    "suppress": {"type": "boolean", "default": True,
                 "description": "put the phone on the business's do-not-contact list (kept as a hash) so the person "
                 "is not called or texted again; false only when they asked to be contacted again later"},
}), "description": "at least one of phone and email",
    "anyOf": [{"required": ["phone"]}, {"required": ["email"]}],
    "examples": [{"phone": "+14155550123", "email": "dana.reyes@example.com"}, {"phone": "(415) 555-0123",
                                                                               "suppress": False}]}

# -- communication runs ----------------------------------------------------------------------

_TOUCH = {**_obj({
    "touch_id": {"type": "string", "minLength": 1, "maxLength": runs.REF_MAX, "pattern": NOT_BLANK,
                 "description": "your own reference of the touch, unique in the run; on every event of it"},
    "channel": {"type": "string", "enum": list(runs.CHANNELS)},
    "target": {**_obj({"phone": E164, "timezone": {**TIMEZONE, "description": "the IANA time zone the callee is in; "
                                                   "judged with their area code's and their lead's state's zones"}},
                      ("phone",)), "additionalProperties": False},
    "scheduled_at": {**TIME, "description": "RFC 3339 with an offset (Z for UTC); at most "
                     f"{runs.HORIZON.days} days ahead, at most 24 hours past (it then goes out at once)"},
    "context": {"type": "object", "description": "free-form, at most 8,000 bytes as JSON; given to the agent as the "
                "call's context. Keys the platform reads: body (the text of an sms touch, required there, at most "
                f"{runs.SMS_BODY_MAX} characters), agent_id (the agent of this touch), lead_id, first_message (a "
                "call's greeting)",
                "properties": {"agent_id": UUID, "lead_id": UUID,
                               "first_message": {"type": ["string", "null"], "maxLength": runs.FIRST_MESSAGE_MAX}}},
}, ("touch_id", "channel", "target", "scheduled_at")), "additionalProperties": False,
    # an sms touch needs the text to send
    "if": {"properties": {"channel": {"const": "sms"}}, "required": ["channel"]},
    "then": {"required": ["context"], "properties": {"context": {"required": ["body"], "properties": {"body": {
        "type": "string", "minLength": 1, "maxLength": runs.SMS_BODY_MAX, "pattern": NOT_BLANK}}}}}}
COMMUNICATION_RUN = {**_obj({
    "business_id": BUSINESS,
    "external_ref": {"type": "string", "minLength": 1, "maxLength": runs.REF_MAX, "pattern": NOT_BLANK,
                     "description": "your own reference of the run, unique per business; on every event of it"},
    "agent_id": {**UUID, "description": "the agent that calls and texts (its number is the caller id); default: "
                 "the agent every touch names in context.agent_id, else the business's one agent with a phone number"},
    "touches": {"type": "array", "items": _TOUCH, "minItems": 1, "maxItems": runs.MAX_TOUCHES},
    "retry": {**_obj({
        "max_retries": {"type": "integer", "minimum": runs.RETRY_BOUNDS["max_retries"][0],
                        "maximum": runs.RETRY_BOUNDS["max_retries"][1], "default": runs.RetryPolicy.max_retries},
        "backoff_seconds": {"type": "array", "minItems": 1, "maxItems": 10, "default": list(runs.RetryPolicy.backoff_seconds),
                            "items": {"type": "integer", "minimum": runs.RETRY_BOUNDS["backoff_seconds"][0],
                                      "maximum": runs.RETRY_BOUNDS["backoff_seconds"][1]},
                            "description": "the wait before the n-th retry (the last figure for any further one)"},
        "retry_on": {"type": "array", "items": {"type": "string", "enum": list(runs.RETRYABLE)}, "uniqueItems": True,
                     "default": list(runs.RETRYABLE)}}), "additionalProperties": False,
        "description": "how call touches are retried (texts are not)"},
}, ("external_ref", "touches")), "additionalProperties": False}
# What the gateway checks itself: the service checks the rest, touch by touch, and reports every problem at once.
RUN_ENVELOPE = _obj({"touches": {"type": "array"}}, ("touches",))
# Validate's body: a draft of a run is any object with a touches array. Validate is there to report what is wrong
# with a draft, so it refuses nothing else: an unknown field or a touch of the wrong shape is a problem in its 200.
RUN_DRAFT = {**RUN_ENVELOPE, "description": "a draft of a communication run (CommunicationRunRequest, the body of "
             "POST /api/v1/communication-runs): any JSON object with a touches array; whatever else does not match "
             "the run's shape (a field it does not have, a touch of the wrong shape, a value out of range) is "
             "reported in the reply's problems, not refused"}
RUN_CHANGE = _obj({"id": UUID, "action": {"type": "string", "enum": list(runs.ACTIONS)}}, ("id", "action"))
_JOB = schema_of(sdr_pb2.CommunicationJob)
for _name, _about in {
    "scheduled_at": "the time the run asked for",
    "planned_at": "when it goes out next, as the outbound compliance decision has it: from the run's creation the "
                  "decision the preview shows (a call asked for 03:00 in the callee's time is planned for 08:00 there, "
                  "deferred), then moved by a deferral or a retry; the decision is taken again, as of then, when it "
                  "is due. Null once the job ended",
    "status": "deferred: the compliance decision moved it to planned_at (at the run's creation or when it was due)",
    "rule": "the compliance rule behind planned_at or the end: a deferral's (federal_hours, state_hours, "
            "business_hours, frequency, ...) or a refusal's; on a pending job, the refusal its touch would get as "
            "things stood at the run's creation (decided again when it is due); null when no rule held it",
    "code": "the error code that goes with rule (tcpa_violation for a deferral; number_on_dnc, number_opted_out, "
            "tcpa_violation for a refusal), or of a failure (call_failed, sms_send_failed, the call's outcome)",
    "reason": "what happened last, in words: why it was planned later, refused or failed, or that a call was placed",
}.items():
    _JOB["properties"][_name]["description"] = _about
_JOB["properties"]["status"]["enum"] = list(runs.JOB_STATES)
_COUNTS = {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}}
_PROBLEM = _obj({
    "index": {"type": ["integer", "null"], "description": "the touch's position in touches; null for the run's own "
              "fields"},
    "touch_id": {"type": ["string", "null"], "description": "the touch's touch_id as sent (null for the run's own "
                 "fields, or a touch without one)"},
    "field": {"type": "string", "description": "where, e.g. target.phone, scheduled_at, agent_id, or the name of a "
              "field the run or touch does not have"},
    "message": {"type": "string", "description": "what to fix"}}, ("index", "touch_id", "field", "message"))
RUN_VALIDATION = {**_obj({
    "valid": {"type": "boolean", "description": "true when the run can be created as it is: its shape, values and "
              "agents are right (the compliance decision is the preview's)"},
    "touches": {"type": "integer", "minimum": 0, "description": "how many touches the draft has"},
    "problems": {"type": "array", "items": _PROBLEM, "description": "every problem at once, in the draft's order; "
                 "empty when valid"}}, ("valid", "touches", "problems")),
    "description": "the report on a draft: a draft with problems is answered 200 with valid false, not 400"}

# -- webhooks and events ---------------------------------------------------------------------

WEBHOOK_ID = {"type": "string", "pattern": WEBHOOK_ID_PATTERN, "description": "e.g. wh_0123456789abcdef01234567"}
WEBHOOK_SAVE = _obj({
    "business_id": BUSINESS,
    "webhook_url": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": HTTP_URL,
                    "description": "http(s) URL of a public host; the same URL again updates that subscription"},
    "events": {"type": "array", "items": {"type": "string", "enum": list(PARTNER_EVENT_TYPES)}, "minItems": 1},
    "description": {"type": "string", "maxLength": webhooks.DESCRIPTION_MAX},
}, ("webhook_url", "events"))
CALL_SECRET = _obj({"business_id": BUSINESS})
WEBHOOK_TARGET = _obj({"business_id": BUSINESS, "id": WEBHOOK_ID}, ("id",))
WEBHOOK_TEST = _obj({"business_id": BUSINESS, "id": {**WEBHOOK_ID, "description": "omitted: every active webhook"}})
REPLAY = _obj({
    "business_id": BUSINESS, "webhook_id": WEBHOOK_ID,
    "event_ids": {"type": "array", "items": UUID, "minItems": 1, "maxItems": webhooks.REPLAY_MAX,
                  "description": "replay: these stored events"},
    "since": {**TIME, "description": "backfill: stored events of the webhook's types from then"},
    "until": {**TIME, "description": "backfill: up to then (default now); only with since"},
}, ("webhook_id",))
REPLAY["oneOf"] = [{"required": ["event_ids"]}, {"required": ["since"]}]
REPLAY["dependentRequired"] = {"until": ["since"]}

_AGENT_VERSION = schema_of(agents_pb2.AgentVersion, omit=("config_snapshot",))
_NUMBER = schema_of(agents_pb2.PhoneNumber)
_LEGACY_NUMBER = _obj({"id": UUID, "phone_number": E164, "agent_id": {"anyOf": [UUID, {"type": "null"}]},
                       "business_id": UUID, "created_at": TIME},
                      ("id", "phone_number", "agent_id", "business_id", "created_at"))

_KEY = schema_of(accounts_pb2.ApiKey, omit=("key",))
_KEY_WITH_SECRET = schema_of(accounts_pb2.ApiKey)
_WORKSPACE = schema_of(accounts_pb2.Workspace)
SUBSCRIPTION_STATUS = {"type": "string", "enum": list(billing.SUBSCRIPTION_STATUSES),
                       "description": "incomplete until the card checkout completes; then the payment provider's: "
                       "trialing, active, past_due (a payment failed and is retried), canceled (final)"}
_WORKSPACE["properties"]["subscription_status"] = SUBSCRIPTION_STATUS
_WORKSPACE["properties"]["retention"] = RETENTION
_WORKSPACE["properties"]["standing"] = {
    "type": "string", "enum": [*standing.GOOD, *standing.HELD],
    "description": "What the workspace may spend. In good standing (its subscription status: trialing, active, "
    "past_due) it may place calls, send texts and email, take pool numbers and run outreach; held (paused, "
    "canceled, inactive: torn down, unpaid: the signup's checkout is not complete or its x402 payment not settled) it may only read and change "
    "its setup, and those actions answer 403 forbidden saying what to do."}
_WORKSPACE["properties"]["data_deletion_due_at"]["description"] = (
    "Torn down: when its customers' personal data is deleted everywhere (the teardown's time plus TEARDOWN_GRACE_DAYS, "
    "30 days by default, kept for billing disputes); null otherwise (docs/privacy.md, Teardown deletes).")
_WORKSPACE["properties"]["data_deleted_at"]["description"] = (
    "When its customers' personal data was deleted (then its keys, sessions and OAuth grants are revoked and no key "
    "reaches it any more); null before.")
_X402_RENEWAL = schema_of(accounts_pb2.X402Renewal, omit=("payment_response",))
_X402_RENEWAL["properties"].update(payment_status=X402_PAYMENT_STATUS, subscription_status=SUBSCRIPTION_STATUS)
_USAGE = schema_of(accounts_pb2.UsageEntry, omit=("api_key_id", "account_id", "business_id"))
_BALANCE = schema_of(accounts_pb2.BalanceEntry)
_BALANCE["properties"]["subscription_status"] = SUBSCRIPTION_STATUS
# Beside the spec's fields, the business's daily spend limits and today's use (services.messaging.spend).
_DAY_SPEND = schema_of(messaging_pb2.DailySpend, omit=("business_id",))
_DAY_SPEND["properties"].update(
    plan_id={"type": "string", "enum": list(plans.PLANS), "description": "The plan whose daily limits apply"},
    day={"type": "string", "format": "date", "description": "The UTC day counted"},
    limits={**_DAY_SPEND["properties"]["limits"], "description": "What the business may spend a day, shared by "
            "every key, session, communication run and the sales pipeline of it; past one, 429 rate_limited naming it "
            "(error.limit) with Retry-After"},
    today={**_DAY_SPEND["properties"]["today"], "description": "Used on `day`: calls placed, minutes of calls "
           "ended (every started minute counts; a call's minutes count once it ends), texts sent; emails queued "
           "in the last 24 hours (the email queue's window)"},
    resets_at={**TIME, "description": "The next UTC midnight: the day's counts start again"})
_BALANCE["properties"].update(_DAY_SPEND["properties"])
_BALANCE["required"] = [*_BALANCE["required"], *_DAY_SPEND["required"]]


# -- the sales pipeline ------------------------------------------------------------------------

SDR_CONFIG_PUT = _obj({
    "businessId": UUID,
    "enabled": {"type": "boolean"},
    "min_touch_gap_hours": {"type": "integer", "minimum": 0, "maximum": 24 * 90},
    "max_touches": {"type": "integer", "minimum": 1, "maximum": 100},
    "auto_call": {"type": "boolean"}, "auto_email": {"type": "boolean"}, "auto_sms": {"type": "boolean"},
    "sdr_agent_id": {"type": "string", "maxLength": 36, "description": "an agent id; an empty string clears it"},
    "business_hours_start": {"type": "integer", "minimum": 0, "maximum": 23},
    "business_hours_end": {"type": "integer", "minimum": 0, "maximum": 23},
    "email_from_account_id": {"type": "string", "maxLength": 36,
                              "description": "the owner's account id; an empty string clears it"},
}, ("businessId",)) | {"additionalProperties": False}
SDR_ACTION = _obj({"businessId": UUID, "leadId": UUID,
                   "action": {"type": "string", "enum": list(pipeline.ACTIONS)}},
                  ("businessId", "leadId", "action")) | {"additionalProperties": False}
SDR_RUN = _obj({"businessId": UUID, "dryRun": {"type": "boolean", "default": False}},
               ("businessId",)) | {"additionalProperties": False}
SDR_RUNNER = _obj({"businessId": {**UUID, "description": "only this business (default: every one due)"}}) | {
    "additionalProperties": False}
_SDR_REPORT = schema_of(sdr_pb2.PipelineReport, omit=("business_id",))
_SDR_REPORT["properties"] = {"businessId": UUID, **_SDR_REPORT["properties"]}
_SDR_REPORT["required"] = list(_SDR_REPORT["properties"])
_SDR_CONFIG = schema_of(sdr_pb2.SdrConfig, omit=("business_id",))
_SDR_CONFIG["properties"] = {"businessId": UUID, **_SDR_CONFIG["properties"]}
_SDR_CONFIG["required"] = list(_SDR_CONFIG["properties"])


# -- bookings --------------------------------------------------------------------------------

_HHMM = {"type": "string", "pattern": bookings.TIME_PATTERN, "examples": ["09:00"]}
_HOURS_ABOUT = ("each day's opening windows [opens, closes], HH:MM on the business's wall clock (its workspace's "
                "timezone), not overlapping; a day left out or [] is closed")
WEEKLY_HOURS: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "description": _HOURS_ABOUT,
    "properties": {day: {"type": "array", "maxItems": bookings.WINDOWS_PER_DAY_MAX,
                         "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": _HHMM}}
                   for day in bookings.DAYS},
    "examples": [{day: [list(w) for w in windows] for day, windows in bookings.DEFAULT_HOURS.items()}]}


def _minutes(bounds: tuple[int, int], default: int, about: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": bounds[0], "maximum": bounds[1], "default": default, "description": about}


AVAILABILITY_PUT = _obj({
    "business_id": BUSINESS,
    "weekly_hours": {**WEEKLY_HOURS, "description": _HOURS_ABOUT + "; default Monday to Friday 09:00-17:00"},
    "slot_minutes": _minutes(bookings.SLOT_MINUTES, bookings.DEFAULT_SLOT_MINUTES, "the length of a slot"),
    "buffer_minutes": _minutes(bookings.BUFFER_MINUTES, bookings.DEFAULT_BUFFER_MINUTES,
                               "the gap kept free between two slots"),
    "blackout_dates": {"type": "array", "maxItems": bookings.BLACKOUT_DATES_MAX,
                       "items": {"type": "string", "format": "date"},
                       "description": "local dates (YYYY-MM-DD) nothing can be booked on"},
    "horizon_days": _minutes(bookings.HORIZON_DAYS, bookings.DEFAULT_HORIZON_DAYS,
                             "how many days after the business's today may be booked"),
}) | {"additionalProperties": False}
BOOKING_CREATE = _obj({
    "business_id": BUSINESS,
    "starts_at": {**TIME, "description": "RFC 3339 with an offset: the start of a free slot (GET "
                  "/api/v1/availability/slots)"},
    "name": {"type": "string", "minLength": 1, "maxLength": bookings.NAME_MAX, "pattern": NOT_BLANK},
    "phone_number": E164,
    "email": {"type": "string", "format": "email", "maxLength": bookings.EMAIL_MAX,
              "description": "checked and lower-cased"},
    "notes": {"type": "string", "maxLength": bookings.NOTES_MAX},
    "lead_id": {**UUID, "description": "a lead of the business; omitted: its newest lead with phone_number, if any"},
    "call_id": {**UUID, "description": "the call it was booked on"},
}, ("starts_at", "name", "phone_number")) | {"additionalProperties": False}
BOOKING_CHANGE = _obj({
    "id": UUID,
    "starts_at": {**TIME, "description": "reschedule to this free slot's start"},
    "status": {"type": "string", "enum": [bookings.CANCELED], "description": "cancel"},
}, ("id",)) | {"additionalProperties": False, "description": "either starts_at or status"}
_AVAILABILITY = schema_of(sdr_pb2.Availability)
_AVAILABILITY["properties"]["weekly_hours"] = WEEKLY_HOURS
_AVAILABILITY["properties"]["blackout_dates"]["items"]["format"] = "date"
_BOOKING = schema_of(sdr_pb2.Booking)
_BOOKING["properties"]["status"]["enum"] = list(bookings.STATUSES)
_SLOT_LIST = schema_of(sdr_pb2.SlotList)
for _schema in (_BOOKING, _SLOT_LIST["properties"]["slots"]["items"]):
    for _name in ("starts_at", "ends_at"):
        _schema["properties"][_name] = {"type": "string", "format": "date-time",
                                        "description": "RFC 3339 with the business's offset then"}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


# -- messaging ---------------------------------------------------------------------------------

SMS_SEND = _obj({
    "to": E164,
    "from_agent_id": {**UUID, "description": "the agent whose number sends the text"},
    "message": {"type": "string", "description": f"the text; empty or over {messaging.MAX_BODY} characters is "
                "content_blocked"},
    "lead_id": {**UUID, "description": "the lead the text is for (its thread, its stated time zone)"},
}, ("to", "from_agent_id", "message"))
CONSENT_RECORD = _obj({
    "phone": E164,
    "business_id": BUSINESS,
    "state": {"type": "string", "enum": list(messaging.API_CONSENT)},
    "note": {"type": "string", "maxLength": messaging.NOTE_MAX, "description": "how the consent was given, e.g. a web form"},
}, ("phone", "state"))
DNC_ADD = _obj({"phone": E164, "business_id": BUSINESS,
                "reason": {"type": "string", "maxLength": messaging.REASON_MAX}}, ("phone",))
EMAIL_QUEUE = _obj({
    "to": {"type": "string", "format": "email", "maxLength": 254},
    "subject": {"type": "string", "minLength": 1, "maxLength": messaging.SUBJECT_MAX, "pattern": r"^[^\r\n]*$"},
    "body": {"type": "string", "minLength": 1, "maxLength": messaging.EMAIL_BODY_MAX, "pattern": NOT_BLANK},
    "business_id": BUSINESS,
    "approve": {"type": "boolean", "default": True,
                "description": "false leaves it pending approval (POST /api/v1/emails/approve)"},
}, ("to", "subject", "body"))
EMAIL_APPROVE = _obj({"id": UUID}, ("id",))
_JUDGE_PLAN = {"type": "object", "description": "how the assistant's reply at this turn is graded: {type: exact, "
               "content, toolCalls?} (the reply equals content), {type: regex, content, toolCalls?} (content, a "
               "regular expression, matches the reply), content at most " + str(evals.CONTENT_MAX) + " characters; "
               "toolCalls: [{name, arguments?}], the tool calls the reply must make, in order (exact: arguments "
               "equal the call's; regex: each argument given is a regular expression searched in that argument's "
               "value; arguments left out are not checked), each answered in the run by a test-mode stub, never "
               "run; or "
               "{type: ai, model: {provider (" + ", ".join(evals.JUDGE_PROVIDERS) + "), model, messages: [{role, "
               "content}]}} (a language-model rubric that may use {{messages[-1]}} and {{messages}} and must make the "
               "judge answer exactly pass or fail)",
               "properties": {"type": {"type": "string", "enum": list(evals.JUDGE_TYPES)}}, "required": ["type"]}
EVAL_TURNS = {"type": "array", "minItems": 1, "maxItems": evals.TURNS_MAX,
              "description": "turns alternating user and assistant: {role: user, content} or {role: assistant, "
              "judgePlan}; a refusal names the turn and the field, e.g. messages[3].judgePlan.content",
              "items": {"type": "object", "properties": {
                  "role": {"type": "string", "enum": list(evals.ROLES)},
                  "content": {"type": "string", "minLength": 1, "maxLength": evals.CONTENT_MAX},
                  "judgePlan": _JUDGE_PLAN}, "required": ["role"]}}
_EVAL_NAME = {"type": "string", "minLength": 1, "maxLength": evals.NAME_MAX, "pattern": NOT_BLANK,
              "description": "e.g. booking.asks_for_phone"}
_EVAL_DESCRIPTION = {"type": "string", "maxLength": evals.DESCRIPTION_MAX}
EVAL_CREATE = _obj({"agent_id": UUID, "business_id": UUID, "name": _EVAL_NAME, "description": _EVAL_DESCRIPTION,
                    "messages": EVAL_TURNS}, ("agent_id", "business_id", "name", "messages"))
EVAL_UPDATE = _obj({"id": UUID, "name": _EVAL_NAME, "description": _EVAL_DESCRIPTION,
                    "messages": {**EVAL_TURNS, "description": "replaces the whole turn list"}}, ("id",))
EVAL_RUN_REQUEST = _obj({
    "eval_id": {**UUID, "description": "run this scenario"},
    "agent_id": {**UUID, "description": "run every scenario of this agent (fan-out)"},
    "wait": {"type": "boolean", "default": True, "description": "false: answer at once with the runs queued"},
    "max_wait_ms": {"type": "integer", "minimum": 0, "maximum": evals.MAX_WAIT_MS[1],
                    "default": evals.MAX_WAIT_MS[0], "description": "how long to wait for the runs to end"},
})
_EVAL_RUN = schema_of(evals_pb2.EvalRun)
_EVAL_RUN["properties"]["status"] = {"type": "string", "enum": list(evals.RUN_STATUSES)}
_EVAL_RUN["properties"]["stubbed_tool_calls"] = {
    "type": "array", "description": "the tool calls the assistant made in the ended run; none ran (test mode)",
    "items": _obj({
        "turn": {"type": "integer", "minimum": 0, "description": "the index of the assistant message in results[0]"
                 ".messages"},
        "name": {"type": "string", "description": "the tool, e.g. send_sms"},
        "arguments": {"type": "object", "description": "the arguments the assistant gave"},
        "result": {"anyOf": [{"type": "string"}, {"type": "null"}],
                   "description": "the stub the assistant got instead of the tool's result, e.g. \"(test mode) A text "
                   "would be sent to the caller: ... Nothing was sent.\"; null when the scenario expected no tool "
                   "call at that turn (no stub was given)"}}, ("turn", "name", "arguments", "result"))}
FAN_OUT_ENTRY = ("eval_id", "name", "run_id", "provider_run_id", "status", "passed")
_EVAL = schema_of(evals_pb2.EvalScenario)
_EVAL["properties"]["messages"] = EVAL_TURNS
_CONVERSATION = schema_of(messaging_pb2.Conversation)
_MESSAGE = schema_of(messaging_pb2.Message)
_DNC_ENTRY = schema_of(messaging_pb2.DncEntry)

# -- analytics ------------------------------------------------------------------------------

_RATE = {"type": "number", "description": "a percentage with two decimals (0.0 over nothing)"}
_AVG = {"type": "number", "description": "two decimals; 0.0 over nothing"}
_COUNT = {"type": "integer", "minimum": 0}
_DATE = {"type": "string", "format": "date"}
_PERIOD = _obj({"days": {"type": "integer"}, "since": {"anyOf": [_DATE, {"type": "null"}]}}, ("days", "since"))
_LEAD_FIGURES = _obj({"total": _COUNT, "converted": _COUNT, "conversion_rate": _RATE},
                     ("total", "converted", "conversion_rate"))
_WEEK = _obj({"start": _DATE, "end": _DATE}, ("start", "end"))
_CHANGE = _obj({"this_week": _COUNT, "last_week": _COUNT,
                "change": {"anyOf": [_RATE, {"type": "null"}],
                           "description": "null when last week had none and this week has some"}},
               ("this_week", "last_week", "change"))
# The assistant connector (gateway/mcp): get_business_info's result and the plain-HTTP helper endpoints' shapes
# (the JSON-RPC endpoint itself speaks MCP's own schemas).
_JSON_SCHEMA = {"type": "object", "description": "a JSON Schema (draft 2020-12)"}
_WITHHELD = "left out, and named in withheld, when the caller lacks the scope that shows it"
_TOOL_RESULT = _obj({
    "content": {"type": "array", "items": _obj({"type": {"type": "string", "enum": ["text"]}, "text": {"type": "string"}},
                                                ("type", "text"))},
    "structuredContent": {"type": "object", "description": "the result, checked by the tool's outputSchema"},
    "isError": {"type": "boolean", "description": "true when the tool failed: content names the error code and "
                "what to fix"}}, ("content",))
MCP = {
    "BusinessInfo": _obj({
        "businesses": {"type": "array", "items": _obj({
            "id": UUID, "name": {"type": "string"}, "timezone": {"type": "string"}, "created_at": TIME,
            "agent_count": {"type": "integer", "minimum": 0},
            "phone_numbers": {"type": "array", "items": {"type": "string"}},
            "status": {"type": "string", "description": f"its lifecycle state; {_WITHHELD}"},
            "subscription_status": {"type": "string", "description": _WITHHELD},
            "calls_last_7_days": {"type": "integer", "minimum": 0, "description": _WITHHELD},
            "calls_last_30_days": {"type": "integer", "minimum": 0, "description": _WITHHELD},
        }, ("id", "name", "timezone", "created_at", "agent_count", "phone_numbers"))},
        "withheld": {"type": "array", "description": "the fields left out of every business because the caller "
                     "lacks the scope the REST API shows them behind (empty when nothing is)",
                     "items": _obj({"scope": {"type": "string", "description": "the scope that would show them"},
                                    "fields": {"type": "array", "items": {"type": "string"}}}, ("scope", "fields"))},
    }, ("businesses", "withheld")),
    "McpInitializeRequest": _obj({
        "protocolVersion": {"type": "string", "description": "the handshake-era version the client speaks"},
        "clientInfo": _obj({"name": {"type": "string"}, "version": {"type": "string"}}),
        "capabilities": {"type": "object"}}),
    "McpInitializeResult": _obj({
        "protocolVersion": {"type": "string"},
        "capabilities": {"type": "object"},
        "serverInfo": _obj({"name": {"type": "string"}, "version": {"type": "string"}}, ("name", "version")),
        "instructions": {"type": "string"}}, ("protocolVersion", "capabilities", "serverInfo")),
    "McpToolList": _obj({"tools": {"type": "array", "items": _obj({
        "name": {"type": "string"}, "title": {"type": "string"}, "description": {"type": "string"},
        "inputSchema": _JSON_SCHEMA, "outputSchema": _JSON_SCHEMA, "annotations": {"type": "object"}},
        ("name", "inputSchema"))}}, ("tools",)),
    "McpToolResult": _TOOL_RESULT,
    "JsonRpcRequest": _obj({
        "jsonrpc": {"type": "string", "enum": ["2.0"]}, "id": {"type": ["string", "integer"]},
        "method": {"type": "string", "examples": ["initialize", "server/discover", "tools/list", "tools/call"]},
        "params": {"type": "object"}}, ("jsonrpc", "method")),
    "JsonRpcResponse": _obj({
        "jsonrpc": {"type": "string", "enum": ["2.0"]}, "id": {"type": ["string", "integer", "null"]},
        "result": {"type": "object"},
        "error": _obj({"code": {"type": "integer"}, "message": {"type": "string"}, "data": {}}, ("code", "message"))},
        ("jsonrpc",)),
}

# OAuth 2.1 sign-in for the connector (gateway/routes/oauth.py): the RFCs' own shapes.
_STRINGS = {"type": "array", "items": {"type": "string"}}
_TEXT = {"type": "string"}
_PARAM = {"type": "string", "maxLength": 4096}  # a form parameter (RFC 6749 3.1: empty is absent)
_NEEDED = {**_PARAM, "minLength": 1}
OAUTH = {
    "OAuthProtectedResource": _obj({
        "resource": _TEXT, "authorization_servers": _STRINGS, "scopes_supported": _STRINGS,
        "bearer_methods_supported": _STRINGS, "resource_name": _TEXT, "resource_documentation": _TEXT},
        ("resource", "authorization_servers", "scopes_supported")),
    "OAuthServerMetadata": _obj({
        "issuer": _TEXT, "authorization_endpoint": _TEXT, "token_endpoint": _TEXT, "registration_endpoint": _TEXT,
        "revocation_endpoint": _TEXT, "scopes_supported": _STRINGS, "response_types_supported": _STRINGS,
        "response_modes_supported": _STRINGS, "grant_types_supported": _STRINGS,
        "token_endpoint_auth_methods_supported": _STRINGS, "revocation_endpoint_auth_methods_supported": _STRINGS,
        "code_challenge_methods_supported": _STRINGS, "client_id_metadata_document_supported": {"type": "boolean"},
        "authorization_response_iss_parameter_supported": {"type": "boolean"}, "service_documentation": _TEXT},
        ("issuer", "authorization_endpoint", "token_endpoint", "response_types_supported",
         "code_challenge_methods_supported")),
    "OAuthClientMetadata": _obj({
        "redirect_uris": {**_STRINGS, "minItems": 1, "description": "https, or http on a loopback address"},
        "client_name": _TEXT, "client_uri": _TEXT, "logo_uri": _TEXT, "scope": _TEXT,
        "grant_types": {"type": "array", "items": {"type": "string", "enum": ["authorization_code", "refresh_token"]}},
        "response_types": {"type": "array", "items": {"type": "string", "enum": ["code"]}},
        "token_endpoint_auth_method": {"type": "string", "enum": ["none"]}}, ("redirect_uris",)),
    "OAuthClient": _obj({
        "client_id": _TEXT, "client_id_issued_at": {"type": "integer"}, "client_name": _TEXT, "client_uri": _TEXT,
        "redirect_uris": _STRINGS, "grant_types": _STRINGS, "response_types": _STRINGS,
        "token_endpoint_auth_method": {"type": "string", "enum": ["none"]}},
        ("client_id", "client_id_issued_at", "redirect_uris", "grant_types", "response_types",
         "token_endpoint_auth_method")),
    "OAuthTokenForm": _obj({
        "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]}, "code": _PARAM,
        "redirect_uri": _PARAM, "client_id": _NEEDED, "code_verifier": _PARAM, "refresh_token": _PARAM,
        "scope": _PARAM, "resource": _PARAM}, ("grant_type", "client_id")),
    "OAuthRevokeForm": _obj({"token": _NEEDED, "token_type_hint": _PARAM, "client_id": _NEEDED}, ("token", "client_id")),
    "OAuthTokens": _obj({
        "access_token": _TEXT, "token_type": {"type": "string", "enum": ["Bearer"]}, "expires_in": {"type": "integer"},
        "refresh_token": _TEXT, "scope": _TEXT}, ("access_token", "token_type", "expires_in", "refresh_token", "scope")),
    "OAuthError": _obj({"error": _TEXT, "error_description": _TEXT}, ("error",)),
}

ANALYTICS = {
    "AnalyticsDashboard": _obj({
        "period": _PERIOD,
        "leads": _obj({"total": _COUNT, "by_status": {"type": "object", "additionalProperties": _COUNT},
                       "conversion_rate": _RATE, "recent": {"type": "array", "items": _ref("Lead")}},
                      ("total", "by_status", "conversion_rate", "recent")),
        "calls": _obj({"total": _COUNT, "completed": _COUNT, "total_duration_seconds": _COUNT,
                       "avg_duration_seconds": _AVG},
                      ("total", "completed", "total_duration_seconds", "avg_duration_seconds")),
        "agents": _obj({"total": _COUNT, "top_by_calls": {"type": "array", "items": _obj(
            {"agent_id": UUID, "name": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "count": _COUNT,
             "total_duration": _COUNT, "avg_duration": _AVG},
            ("agent_id", "name", "count", "total_duration", "avg_duration"))}}, ("total", "top_by_calls")),
    }, ("period", "leads", "calls", "agents")),
    "AnalyticsCalls": _obj({
        "period": _obj({**_PERIOD["properties"], "group_by": {"type": "string", "enum": ["day", "week"]}},
                       ("days", "since", "group_by")),
        "summary": _obj({"total_calls": _COUNT, "total_duration_seconds": _COUNT, "avg_duration_seconds": _AVG},
                        ("total_calls", "total_duration_seconds", "avg_duration_seconds")),
        "timeline": {"type": "array", "items": _obj({
            "date": _DATE, "total": _COUNT, "completed": _COUNT, "total_duration": _COUNT,
            "avg_duration_seconds": _AVG, "statuses": {"type": "object", "additionalProperties": _COUNT}},
            ("date", "total", "completed", "total_duration", "avg_duration_seconds", "statuses"))},
    }, ("period", "summary", "timeline")),
    "AnalyticsFunnel": _obj({
        "period": _PERIOD, "total_leads": _COUNT, "lost": _COUNT,
        "funnel": {"type": "array", "items": _obj({
            "stage": {"type": "string", "enum": list(leads.FUNNEL_STAGES)}, "count": _COUNT,
            "rate_from_top": _RATE, "dropoff_rate": _RATE}, ("stage", "count", "rate_from_top", "dropoff_rate"))},
    }, ("period", "total_leads", "lost", "funnel")),
    "AnalyticsAgents": _obj({"period": _PERIOD, "agents": {"type": "array", "items": _obj({
        "agent_id": UUID, "agent_name": {"type": "string"},
        "calls": _obj({"total": _COUNT, "completed": _COUNT, "avg_duration_seconds": _AVG,
                       "total_duration_seconds": _COUNT},
                      ("total", "completed", "avg_duration_seconds", "total_duration_seconds")),
        "leads": _LEAD_FIGURES}, ("agent_id", "agent_name", "calls", "leads"))}}, ("period", "agents")),
    "AnalyticsWeekly": _obj({
        "period": _obj({"this_week": _WEEK, "last_week": _WEEK}, ("this_week", "last_week")),
        "calls": _CHANGE, "leads": _CHANGE,
        "top_agents": {"type": "array", "items": _obj({
            "agent_id": UUID, "agent_name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "total_calls": _COUNT, "total_duration_seconds": _COUNT},
            ("agent_id", "agent_name", "total_calls", "total_duration_seconds"))},
    }, ("period", "calls", "leads", "top_agents")),
    "AnalyticsBusinesses": _obj({"period": _PERIOD, "businesses": {"type": "array", "items": _obj({
        "business_id": UUID, "business_name": {"type": "string"},
        "calls": _obj({"total": _COUNT, "completed": _COUNT, "avg_duration_seconds": _AVG},
                      ("total", "completed", "avg_duration_seconds")),
        "leads": _LEAD_FIGURES}, ("business_id", "business_name", "calls", "leads"))}}, ("period", "businesses")),
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": ERROR,
    "SignupRequest": SIGNUP_REQUEST,
    "SignupResponse": _SIGNUP_REPLY,
    "PaymentEvent": PAYMENT_EVENT,
    "PaymentEventReceived": _obj({"received": {"type": "boolean", "description": "true: the event is stored and "
                                               "will be applied (once, however often it comes)"}}, ("received",)),
    "ApiKey": _KEY,
    "ApiKeyCreated": _KEY_WITH_SECRET,
    "ApiKeyCreateRequest": KEY_CREATE,
    "ApiKeyUpdateRequest": KEY_UPDATE,
    "ApiKeyList": _obj({"keys": {"type": "array", "items": _ref("ApiKey")}}, ("keys",)),
    "Success": _obj({"success": {"type": "boolean"}}, ("success",)),
    "SignOutRequest": SIGN_OUT,
    "CheckoutOpenRequest": CHECKOUT_OPEN,
    "CheckoutLink": schema_of(accounts_pb2.CheckoutLink),
    "X402RenewalRequest": X402_RENEW,
    "X402Renewal": _X402_RENEWAL,
    "SignedOut": schema_of(accounts_pb2.SignOutReply),
    "Workspace": _WORKSPACE,
    "WorkspaceCreateRequest": WORKSPACE_CREATE,
    "WorkspaceUpdateRequest": WORKSPACE_UPDATE,
    "WorkspaceList": _obj({"workspaces": {"type": "array", "items": _ref("Workspace")}, **PAGE_FIELDS},
                          ("workspaces", *PAGE_FIELDS)),
    "UsageEntry": _USAGE,
    "UsageList": _obj({"usage": {"type": "array", "items": _ref("UsageEntry")}, **PAGE_FIELDS},
                      ("usage", *PAGE_FIELDS)),
    "BalanceEntry": _BALANCE,
    "Balance": _obj({"businesses": {"type": "array", "items": _ref("BalanceEntry")}}, ("businesses",)),
    "AgentCreateRequest": AGENT_CREATE,
    "AgentUpdateRequest": AGENT_UPDATE,
    "PersonaLoadRequest": PERSONA_LOAD,
    "SmsPromptUpdateRequest": SMS_PROMPT_UPDATE,
    "AgentRollbackRequest": ROLLBACK,
    "Agent": _AGENT,
    "AgentSummary": schema_of(agents_pb2.AgentSummary),
    "AgentList": _obj({"agents": {"type": "array", "items": _ref("AgentSummary")}, **PAGE_FIELDS},
                      ("agents", *PAGE_FIELDS)),
    "AgentCreated": schema_of(agents_pb2.AgentCreated),
    "AgentUpdated": schema_of(agents_pb2.AgentUpdated, omit=("rollback_of",)),
    "AgentRolledBack": schema_of(agents_pb2.AgentUpdated),
    "ToolSecretRotated": schema_of(agents_pb2.ToolSecretRotated),
    "PersonaLoaded": schema_of(agents_pb2.PersonaLoaded),
    "SmsPromptUpdated": schema_of(agents_pb2.UpdateSmsPromptReply),
    "AgentVersion": _AGENT_VERSION,
    "AgentVersionList": _obj({"agent_id": UUID, "versions": {"type": "array", "items": _ref("AgentVersion")},
                              **PAGE_FIELDS}, ("agent_id", "versions", *PAGE_FIELDS)),
    "AgentVersionDetail": _obj({"agent_id": UUID, "version": schema_of(agents_pb2.AgentVersion)},
                               ("agent_id", "version")),
    "PhoneNumberAssignRequest": NUMBER_ASSIGN,
    "PhoneNumberUpdateRequest": NUMBER_UPDATE,
    "PhoneNumber": _NUMBER,
    "PhoneNumberList": _obj({"business_id": {"anyOf": [UUID, {"type": "null"}]},
                             "phone_numbers": {"type": "array", "items": _ref("PhoneNumber")},
                             **PAGE_FIELDS}, ("business_id", "phone_numbers", *PAGE_FIELDS)),
    "AvailableNumberList": _obj({"numbers": {"type": "array", "items": schema_of(
        agents_pb2.AvailableNumber)}, "has_more": {"type": "boolean"},
        "purchase": schema_of(agents_pb2.NumberPurchase)}, ("numbers", "has_more")),
    "PhoneNumberReleased": schema_of(agents_pb2.ReleasePhoneNumberReply),
    "LegacyNumberList": _obj({"numbers": {"type": "array", "items": _LEGACY_NUMBER}, **PAGE_FIELDS},
                             ("numbers", *PAGE_FIELDS)),
    "LeadCreateRequest": LEAD_CREATE,
    "LeadUpdateRequest": LEAD_UPDATE,
    "Lead": schema_of(sdr_pb2.Lead),
    "LeadList": _obj({"leads": {"type": "array", "items": _ref("Lead")}, **PAGE_FIELDS},
                     ("leads", *PAGE_FIELDS)),
    "LeadAudit": schema_of(sdr_pb2.LeadAudit),
    "AvailabilityPutRequest": AVAILABILITY_PUT,
    "Availability": _AVAILABILITY,
    "SlotList": _SLOT_LIST,
    "BookingCreateRequest": BOOKING_CREATE,
    "BookingChangeRequest": BOOKING_CHANGE,
    "Booking": _BOOKING,
    "BookingList": _obj({"bookings": {"type": "array", "items": _ref("Booking")}, **PAGE_FIELDS},
                        ("bookings", *PAGE_FIELDS)),
    "CallCreateRequest": CALL_CREATE,
    "ProviderMessage": PROVIDER_MESSAGE,
    "Recording": schema_of(calls_pb2.Recording),
    "Transcript": schema_of(calls_pb2.Transcript),
    "TranscriptList": _obj({"transcripts": {"type": "array", "items": _ref("Transcript")}, **PAGE_FIELDS},
                           ("transcripts", *PAGE_FIELDS)),
    "ProviderMessageAnswer": {"type": "object", "description": "{}, or for an assistant-request the provider's "
                              "answer: {assistantId, assistantOverrides} or {error}; for tool-calls {results: "
                              "[{toolCallId, result}]}, a result for each tool call of the message; for a "
                              "transfer-destination-request {destination: {type: number, number, message, "
                              "transferPlan}} or {error}",
                              "properties": {"results": {"type": "array", "items": _obj(
                                  {"toolCallId": {"type": "string"}, "result": {"type": "string"}},
                                  ("toolCallId", "result"))}}},
    "Call": _CALL,
    "CallCreated": _obj({f: _CALL["properties"][f] for f in CREATED_FIELDS}, CREATED_FIELDS),
    "CallList": _obj({"calls": {"type": "array", "items": _obj({f: _CALL["properties"][f] for f in LIST_FIELDS},
                                                              LIST_FIELDS)}, **PAGE_FIELDS}, ("calls", *PAGE_FIELDS)),
    "WebhookSaveRequest": WEBHOOK_SAVE,
    "WebhookTargetRequest": WEBHOOK_TARGET,
    "WebhookTestRequest": WEBHOOK_TEST,
    "ReplayRequest": REPLAY,
    "Webhook": schema_of(webhooks_pb2.Subscription),
    "WebhookSaved": _obj({"business_id": UUID, "webhook": _ref("Webhook"),
                          "webhook_secret": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                          "events": {"type": "array", "items": {"type": "string"}}, "message": {"type": "string"}},
                         ("business_id", "webhook", "webhook_secret", "events", "message")),
    "WebhookList": _obj({"business_id": UUID, "webhooks": {"type": "array", "items": _ref("Webhook")},
                         "events": {"type": "array", "items": {"type": "string"}}}, ("business_id", "webhooks", "events")),
    "CallSecretMasked": schema_of(webhooks_pb2.CallSecret, omit=("webhook_secret",)),
    "CallSecretShown": schema_of(webhooks_pb2.CallSecret),
    "CallSecretRequest": CALL_SECRET,
    "WebhookDeleted": schema_of(webhooks_pb2.DeleteSubscriptionReply),
    "WebhookTestSent": schema_of(webhooks_pb2.SendTestReply),
    "WebhookSecretRotated": schema_of(webhooks_pb2.RotateSecretReply),
    "EventList": _obj({"events": {"type": "array", "items": schema_of(webhooks_pb2.StoredEvent)},
                       **PAGE_FIELDS}, ("events", *PAGE_FIELDS)),
    "DeliveryList": _obj({"deliveries": {"type": "array", "items": schema_of(webhooks_pb2.Delivery)},
                          **PAGE_FIELDS}, ("deliveries", *PAGE_FIELDS)),
    "Replayed": schema_of(webhooks_pb2.ReplayReply),
    "Capabilities": _obj({
        "account_id": UUID,
        "key": _obj({"id": UUID, "scopes": {"type": "array", "items": {"type": "string"}},
                     "business_id": {"anyOf": [UUID, {"type": "null"}]}}),
        "workspaces": {"type": "array", "items": _obj({"id": UUID, "name": {"type": "string"},
                                                        "lifecycle_state": {"type": "string"}})},
        "scopes": {"type": "array", "items": {"type": "string"}, "description": "every scope a key can hold"},
        "endpoints": {"type": "array", "items": _obj({"method": {"type": "string"}, "path": {"type": "string"},
                                                       "scope": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                                                       "allowed": {"type": "boolean"}})},
        "agent_tools": {"type": "array", "items": _obj({"type": {"type": "string"}, "description": {"type": "string"}},
                                                       ("type", "description")),
                        "description": "the tools an agent may have (its tools' types)"},
    }, ("account_id", "key", "workspaces", "scopes", "endpoints", "agent_tools")),
    "SmsSendRequest": SMS_SEND,
    "SmsSent": schema_of(messaging_pb2.SmsSendReply),
    "Conversation": _CONVERSATION,
    "ConversationList": _obj({"conversations": {"type": "array", "items": _ref("Conversation")}, **PAGE_FIELDS},
                             ("conversations", *PAGE_FIELDS)),
    "SmsMessageList": _obj({"messages": {"type": "array", "items": _MESSAGE}, **PAGE_FIELDS},
                           ("messages", *PAGE_FIELDS)),
    "ConsentRecordRequest": CONSENT_RECORD,
    "Consent": schema_of(messaging_pb2.Consent),
    "DncAddRequest": DNC_ADD,
    "DncEntry": _DNC_ENTRY,
    "DncCheck": schema_of(messaging_pb2.DncCheck),
    "DncList": _obj({"entries": {"type": "array", "items": _ref("DncEntry")}, **PAGE_FIELDS},
                    ("entries", *PAGE_FIELDS)),
    "ComplianceDecision": schema_of(common_pb2.ComplianceDecision),
    "CommunicationRunRequest": COMMUNICATION_RUN,
    "CommunicationRunChange": RUN_CHANGE,
    "CommunicationRunDraft": RUN_DRAFT,
    "CommunicationRunValidation": RUN_VALIDATION,
    "CommunicationRunPreview": _obj({
        "touches": {"type": "integer"}, "by_channel": _COUNTS, "by_outcome": _COUNTS,
        "first_planned_at": NULLABLE_TIME, "last_planned_at": NULLABLE_TIME,
        "planned": {"type": "array", "items": schema_of(sdr_pb2.PlannedTouch)}},
        ("touches", "by_channel", "by_outcome", "planned")),
    "CommunicationRun": schema_of(sdr_pb2.CommunicationRun),
    "CommunicationRunList": _obj({"runs": {"type": "array", "items": _ref("CommunicationRun")}, **PAGE_FIELDS},
                                 ("runs", *PAGE_FIELDS)),
    "CommunicationJob": _JOB,
    "CommunicationJobList": _obj({"jobs": {"type": "array", "items": _ref("CommunicationJob")}, **PAGE_FIELDS},
                                 ("jobs", *PAGE_FIELDS)),
    "CommunicationAttempt": schema_of(sdr_pb2.CommunicationAttempt),
    "CommunicationAttemptList": _obj({"attempts": {"type": "array", "items": _ref("CommunicationAttempt")},
                                      **PAGE_FIELDS}, ("attempts", *PAGE_FIELDS)),
    "ComplianceDecisionList": _obj({"decisions": {"type": "array", "items": _ref("ComplianceDecision")},
                                    **PAGE_FIELDS}, ("decisions", *PAGE_FIELDS)),
    "SdrConfigPutRequest": SDR_CONFIG_PUT,
    "SdrActionRequest": SDR_ACTION,
    "SdrRunRequest": SDR_RUN,
    "SdrReport": _SDR_REPORT,
    "SdrRunnerRequest": SDR_RUNNER,
    "SdrRunner": _obj({"window_start": TIME, "runs": {"type": "array", "items": _obj({
        "businessId": UUID, "status": {"type": "string", "enum": ["ran", "taken", "held"]},
        "briefing_id": {"type": ["string", "null"]},
        "summary": {"anyOf": [schema_of(sdr_pb2.PipelineRunSummary), {"type": "null"}]},
        "skipped": {"type": "integer"}}, ("businessId", "status", "briefing_id", "summary", "skipped"))}},
        ("window_start", "runs")),
    "SdrRun": _obj({
        "success": {"type": "boolean"}, "dryRun": {"type": "boolean"},
        "summary": schema_of(sdr_pb2.PipelineRunSummary),
        "results": {"type": "array", "items": _obj({"success": {"type": "boolean"}, "action": {"type": "string"},
                                                    "leadId": UUID, "detail": {"type": "string"}},
                                                   ("success", "action", "leadId", "detail"))},
        "skipped": {"type": "integer"},
        "errors": {"type": "array", "items": _obj({"leadId": UUID, "action": {"type": "string"},
                                                   "code": {"type": ["string", "null"]},
                                                   "message": {"type": "string"}},
                                                  ("leadId", "action", "code", "message"))}},
        ("success", "dryRun", "summary", "results", "skipped", "errors")),
    "SdrActionResult": _obj({"success": {"type": "boolean"}, "action": {"type": "string"}, "leadId": UUID,
                             "detail": {"type": "string"}, "replayed": {"type": "boolean"}},
                            ("success", "action", "leadId", "detail", "replayed")),
    "SdrActivity": _obj({"businessId": UUID, "activity": {
        "type": "array", "items": schema_of(sdr_pb2.PipelineActivity)}}, ("businessId", "activity")),
    "SdrConfig": _SDR_CONFIG,
    "SdrPipeline": _obj({
        "businessId": UUID, "enabled": {"type": "boolean"},
        "summary": schema_of(sdr_pb2.PipelineSummary),
        "leads": {"type": "array", "items": schema_of(sdr_pb2.PipelineLead)}},
        ("businessId", "enabled", "summary", "leads")),
    "EmailQueueRequest": EMAIL_QUEUE,
    "EmailApproveRequest": EMAIL_APPROVE,
    "Email": schema_of(messaging_pb2.Email),
    "EvalCreateRequest": EVAL_CREATE,
    "EvalUpdateRequest": EVAL_UPDATE,
    "EvalScenario": _EVAL,
    "EvalRunRequest": EVAL_RUN_REQUEST,
    "EvalRun": _EVAL_RUN,
    "EvalFanOut": _obj({"total": {"type": "integer"}, "completed": {"type": "integer"},
                        "passed": {"type": "integer"}, "failed": {"type": "integer"},
                        "results": {"type": "array", "items": _obj(
                            {k: _EVAL_RUN["properties"][k] for k in FAN_OUT_ENTRY}, FAN_OUT_ENTRY)}},
                       ("total", "completed", "passed", "failed", "results")),
    "EvalRunList": _obj({"runs": {"type": "array", "items": _ref("EvalRun")}}, ("runs",)),
    "EvalScenarioSummary": schema_of(evals_pb2.EvalScenario, omit=("messages",)),
    "EvalScenarioList": _obj({"evals": {"type": "array", "items": _ref("EvalScenarioSummary"),
                                        "description": "without their messages (read one with ?id=)"}, **PAGE_FIELDS},
                             ("evals", *PAGE_FIELDS)),
    "EmailList": _obj({"emails": {"type": "array", "items": _ref("Email")}, **PAGE_FIELDS}, ("emails", *PAGE_FIELDS)),
    "ExportRequest": EXPORT_CREATE,
    "Export": {**_EXPORT, "examples": [{
        "id": "2a7d0c4e-8b1f-4f3a-9c6d-1e5b7a9c3d21", "business_id": "0b9d6c3e-2f4a-4e8b-8c1d-5a7e9f0b2c34",
        "status": "completed", "kinds": [{"kind": "workspace", "records": 1, "done": True},
                                         {"kind": "calls", "records": 1840, "done": True}],
        "records": 1841, "bytes": 2203311, "created_at": "2026-11-29T19:00:00Z",
        "completed_at": "2026-11-29T19:00:41Z", "expires_at": "2026-12-06T19:00:41Z", "error": None,
        "download_url": "https://api.example.com/api/v1/exports/download?id=2a7d0c4e-8b1f-4f3a-9c6d-1e5b7a9c3d21"
                        "&expires=1795978841&signature=v1.3f1e...",
        "download_expires_at": "2026-11-29T20:00:41Z",
        "sha256": "9b1c4f0e7d2a5b8c3e6f1a4d7b0c2e5f8a1d4b7c0e3f6a9d2b5c8e1f4a7d0b3c"}]},
    "ExportList": _obj({"exports": {"type": "array", "items": _ref("Export")}, **PAGE_FIELDS},
                       ("exports", *PAGE_FIELDS)),
    "ErasureRequest": ERASURE_CREATE,
    "Erasure": {**schema_of(accounts_pb2.Erasure), "examples": [{
        "id": "6f1c2a8e-3b7d-4c1e-9a55-0d2e8f4b7c11", "business_id": "0b9d6c3e-2f4a-4e8b-8c1d-5a7e9f0b2c34",
        "status": "completed", "phone_masked": "+*******0123", "email_masked": "***@example.com", "suppress": True,
        "created_at": "2026-11-29T19:00:00Z", "completed_at": "2026-11-29T19:00:04Z",
        "report": [{"service": "sdr", "what": "sdr.lead", "action": "deleted", "count": 1},
                   {"service": "calls", "what": "calls.transcript", "action": "redacted", "count": 2},
                   {"service": "messaging", "what": "messaging.dnc", "action": "suppressed", "count": 1}],
        "steps_done": ["sdr", "calls", "messaging", "webhooks"], "attempts": 0, "error": None,
        "next_attempt_at": None}]},
    "ErasureList": _obj({"erasures": {"type": "array", "items": _ref("Erasure")}, **PAGE_FIELDS},
                        ("erasures", *PAGE_FIELDS)),
    "Health": _obj({
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "api": {"type": "string"},
        "queue": {"type": "string", "description": "event bus (NATS JetStream) status"},
        "services": {"type": "object", "additionalProperties": {"type": "string"}},
        "providers": {"type": "object", "additionalProperties": {"type": "string"}},
        "checked_at": TIME,
    }, ("status", "api", "queue", "services", "providers", "checked_at")),
    **ANALYTICS,
    **MCP,
    **OAUTH,
}


def resolved(name: str) -> dict[str, Any]:
    """A schema with its $refs inlined, for /api/v1/schemas?name= (standalone documents)."""
    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"$ref"}:
                return walk(SCHEMAS[node["$ref"].rsplit("/", 1)[1]])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": name, **walk(SCHEMAS[name])}
