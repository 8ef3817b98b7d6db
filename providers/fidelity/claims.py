"""What our side holds about each provider's API, beside where the provider's documents say it: the request
properties a simulator accepts, the limits and values the services check before a request leaves, the fields an
adapter sends. Each claim names our constant itself, so a change on either side shows up in the next comparison.

A claim is one of two kinds, compared with the document of its provider (`voice`: Vapi's OpenAPI, `sms`: Twilio's
2010 API, `payments`: the `stripe` package's types):
- `Properties`: a set of property names that should equal the schema's (`exact`) or be within it (a simulator
  that refuses properties it does not act on would be stricter than the provider without being wrong, so
  `exact=False`); `used=True` (the fields an adapter sends or reads) also finds those the provider marks
  deprecated;
- `Keyword`: one keyword of one property (a `maxLength`, an `enum`) that should equal ours, or for values, hold
  ours (`within=True`: the provider's reasons we map are among those it sends)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.compliance import recording_rules
from providers.messaging import client as sms_client
from providers.messaging import webhooks as sms_webhooks
from providers.messaging.simulator import numbers as sms_simulator_numbers
from providers.messaging.simulator.messages import Messages, public
from providers.payments import client as payments_client
from providers.payments.simulator import api as payments_simulator
from providers.voice.port import (
    PROGRESS,
    AssistantSpec,
    OutboundCall,
    TransferAnswer,
    TransferDestination,
    TransferTool,
)
from providers.voice.vapi import assistants, vocabulary
from providers.voice.vapi import calls as vapi_calls
from providers.voice.vapi import evals as vapi_evals
from providers.voice.vapi.simulator import tool_calls as simulator_tool_calls
from providers.voice.vapi.simulator import validation as voice_simulator
from providers.voice.vapi.simulator.conversation import openai_formatted

VOICE, SMS, PAYMENTS = "voice", "sms", "payments"
STRIPE_SESSION = "checkout._session_create_params:SessionCreateParams"
STRIPE_SUBSCRIPTION_UPDATE = "_subscription_update_params:SubscriptionUpdateParams"
STRIPE_SUBSCRIPTION_CREATE = "_subscription_create_params:SubscriptionCreateParams"
STRIPE_CUSTOMER_CREATE = "_customer_create_params:CustomerCreateParams"
# What our adapter sends to open a checkout, with a trial (its subscription_data then has every field we send).
CHECKOUT = payments_client.checkout_params(business_id="b", email="e", price_id="p", trial_days=14, success_url="s",
                                           cancel_url="c")
# What our adapter sends to set a subscription's quantity (a workspace added or torn down).
QUANTITY = payments_client.quantity_params("si_1", 2)
# What our adapter sends to create an assistant (any provider_config group the owner sets goes along as given).
ASSISTANT = assistants.create_body(AssistantSpec(
    name="Front desk", prompt="You answer the phone.", first_message=None, model={"provider": "openai", "model": "gpt-4o"},
    voice={"provider": "vapi", "voiceId": "Elliot"}, settings={}, collect={"type": "object"}, agent_id="agent",
    business_id="business"))
# What our adapter sends to place a call (with the recording disclosure of a verbal consent plan: every field it may
# send).
VERBAL = recording_rules.Setting(consent=recording_rules.VERBAL)
CONSENT = vapi_calls.compliance_plan(VERBAL, outbound=True)
CALL = vapi_calls.call_body(OutboundCall(
    call_id="c", assistant_id="a", number_id="p", to="+14155550100", name="Dana", prompt="p", first_message="Hi",
    model={"provider": "openai", "model": "gpt-4o"}, context="c", max_duration=600, variables={}, disclosure=VERBAL),
    {"url": "https://x"})
# What the voice simulator sends when the stand-in assistant calls a function tool: the tool-calls message (the
# sender adds `call` and `timestamp` to every server message) and the artifact's entries of the call and its result.
SIM_TOOL = {"type": "function", "function": {"name": "lookup_order"}, "server": {"url": "https://x"}}
SIM_CALL = simulator_tool_calls.tool_call("lookup_order", {"order": "A-17"})
SIM_TOOL_CALLS = simulator_tool_calls.tool_calls_message(SIM_TOOL, SIM_CALL, [])
SIM_CALLS_ENTRY = simulator_tool_calls.calls_entry([SIM_CALL], {"time": 0, "secondsFromStart": 0})
SIM_RESULT_ENTRY = simulator_tool_calls.result_entry(SIM_CALL, "ok", {"time": 0, "secondsFromStart": 0})
STAY_ON_LINE_PLAN, VERBAL_PLAN = "RecordingConsentPlanStayOnLine", "RecordingConsentPlanVerbal"
# What our adapter sends for a transfer: the transferCall tool of a warm destination, and the answer to a
# transfer-destination-request (a warm one, with every field it may send).
TRANSFER_TOOL = assistants.tool_body(TransferTool((TransferDestination("Sales", "+14155550100", True, "One moment."),)),
                                     None)
TRANSFER_ANSWER = vapi_calls.transfer_answer(TransferAnswer("+14155550100", True, "Please hold.", "A caller."))
TRANSFER_RESPONSE = "ServerMessageResponseTransferDestinationRequest"
TWILIO_SEND = "POST /2010-04-01/Accounts/{AccountSid}/Messages.json"
TWILIO_MESSAGE = "api.v2010.account.message"
TWILIO_REDACT = "POST /2010-04-01/Accounts/{AccountSid}/Messages/{Sid}.json"
TWILIO_MEDIA = "api.v2010.account.message.media"
TWILIO_SEARCH = "GET /2010-04-01/Accounts/{AccountSid}/AvailablePhoneNumbers/{CountryCode}/Local.json"
TWILIO_BUY = "POST /2010-04-01/Accounts/{AccountSid}/IncomingPhoneNumbers.json"
TWILIO_OFFERED = "api.v2010.account.available_phone_number_country.available_phone_number_local"
TWILIO_OWNED = "api.v2010.account.incoming_phone_number"
# The simulator's numbers as it shows them: one for sale, and one bought with every setting a purchase may give.
SIM_OFFERED = sms_simulator_numbers.available_resource("+14155550100")
# The simulator's Media resource: one attached to a received message.
_SIM_MESSAGES = Messages("AC" + "0" * 32)
_SIM_MMS = _SIM_MESSAGES.create(to="+15005550006", from_="+15005550006", body="", direction="inbound",
                                status="received")
_SIM_MESSAGES.attach_media(_SIM_MMS["sid"], ["image/jpeg"])
SIM_MEDIA = _SIM_MMS["_media"][0]
SIM_OWNED = sms_simulator_numbers.Numbers("AC" + "0" * 32).buy(
    {p: "" for p in sms_simulator_numbers.PURCHASE_PARAMETERS if p not in sms_simulator_numbers.CHOOSING}
    | {"PhoneNumber": "+14155550100"})


@dataclass(frozen=True)
class Properties:
    provider: str
    ours: str  # what holds them, for the report
    names: frozenset[str]
    schema: str
    path: str = ""
    exact: bool = True
    used: bool = False  # sent or read by our code: none should be deprecated


@dataclass(frozen=True)
class Keyword:
    provider: str
    ours: str
    value: Any
    schema: str
    path: str
    keyword: str
    within: bool = False


Claim = Properties | Keyword


def _limit(provider: str, ours: str, value: int, schema: str, path: str) -> Keyword:
    return Keyword(provider, ours, value, schema, path, "maxLength")


CLAIMS: tuple[Claim, ...] = (
    # Vapi: the simulator validates with a whitelist, as Vapi does ("property X should not exist").
    Properties(VOICE, "voice simulator ASSISTANT_PROPERTIES", voice_simulator.ASSISTANT_PROPERTIES,
               "CreateAssistantDTO"),
    Properties(VOICE, "voice simulator ASSISTANT_PROPERTIES (updates)", voice_simulator.ASSISTANT_PROPERTIES,
               "UpdateAssistantDTO"),
    Properties(VOICE, "voice simulator CALL_PROPERTIES", voice_simulator.CALL_PROPERTIES, "CreateCallDTO"),
    # "Delete Call" (a person's erasure): the body the simulator reads, and the one our adapter sends.
    Properties(VOICE, "voice simulator DELETE_CALL_PROPERTIES", voice_simulator.DELETE_CALL_PROPERTIES,
               "DELETE /call/{id}"),
    Properties(VOICE, "vapi calls DELETE_CALL_BODY", frozenset(vapi_calls.DELETE_CALL_BODY), "DELETE /call/{id}",
               exact=False, used=True),
    Properties(VOICE, "voice simulator PHONE_NUMBER_PROPERTIES[byo-phone-number]",
               frozenset(voice_simulator.PHONE_NUMBER_PROPERTIES["byo-phone-number"]), "CreateByoPhoneNumberDTO"),
    Properties(VOICE, "voice simulator PHONE_NUMBER_PROPERTIES[twilio]",
               frozenset(voice_simulator.PHONE_NUMBER_PROPERTIES["twilio"]), "CreateTwilioPhoneNumberDTO"),
    Properties(VOICE, "voice simulator PHONE_NUMBER_PROPERTIES[vapi]",
               frozenset(voice_simulator.PHONE_NUMBER_PROPERTIES["vapi"]), "CreateVapiPhoneNumberDTO"),
    _limit(VOICE, "voice simulator NAME_MAX", voice_simulator.NAME_MAX, "CreateAssistantDTO", "name"),
    _limit(VOICE, "vapi calls CUSTOMER_NAME_MAX (the callee's name cut to it in customer.name)",
           vapi_calls.CUSTOMER_NAME_MAX, "CreateCallDTO", "customer.name"),
    # What our adapters send.
    Properties(VOICE, "vapi assistants create_body", frozenset(ASSISTANT), "CreateAssistantDTO", exact=False, used=True),
    Properties(VOICE, "vapi calls call_body", frozenset(CALL), "CreateCallDTO", exact=False, used=True),
    Properties(VOICE, "vapi calls call_body: assistantOverrides", frozenset(CALL["assistantOverrides"]),
               "CreateCallDTO", "assistantOverrides", exact=False, used=True),
    Properties(VOICE, "vapi calls call_body: customer", frozenset(CALL["customer"]), "CreateCallDTO", "customer",
               exact=False, used=True),
    Properties(VOICE, "vapi calls compliance_plan", frozenset(CONSENT), "CreateCallDTO", "assistantOverrides.compliancePlan",
               exact=False, used=True),
    Properties(VOICE, "vapi calls compliance_plan: recordingConsentPlan", frozenset(CONSENT["recordingConsentPlan"]),
               VERBAL_PLAN, exact=False, used=True),
    # The recording consent plan: the simulator's shapes of it, and the values and limits our agents accept.
    Properties(VOICE, "voice simulator COMPLIANCE_PLAN_PROPERTIES", voice_simulator.COMPLIANCE_PLAN_PROPERTIES,
               "CompliancePlan"),
    Properties(VOICE, "voice simulator RECORDING_CONSENT_PROPERTIES[stay-on-line]",
               voice_simulator.RECORDING_CONSENT_PROPERTIES["stay-on-line"], STAY_ON_LINE_PLAN),
    Properties(VOICE, "voice simulator RECORDING_CONSENT_PROPERTIES[verbal]",
               voice_simulator.RECORDING_CONSENT_PROPERTIES["verbal"], VERBAL_PLAN),
    Keyword(VOICE, "recording_rules CONSENT_TYPES (an agent's recording_disclosure.consent)",
            frozenset(recording_rules.CONSENT_TYPES), "CompliancePlan", "recordingConsentPlan.type", "enum"),
    Keyword(VOICE, "voice simulator RECORDING_CONSENT_PROPERTIES (by type)",
            frozenset(voice_simulator.RECORDING_CONSENT_PROPERTIES), "CompliancePlan", "recordingConsentPlan.type",
            "enum"),
    Keyword(VOICE, "voice simulator FIRST_MESSAGE_MODES", frozenset(voice_simulator.FIRST_MESSAGE_MODES),
            STAY_ON_LINE_PLAN, "firstMessageMode", "enum"),
    _limit(VOICE, "voice vocabulary RECORDING_CONSENT_MESSAGE_MAX (an agent's recording_disclosure.message)",
           vocabulary.RECORDING_CONSENT_MESSAGE_MAX, "CompliancePlan", "recordingConsentPlan.message"),
    Keyword(VOICE, "voice vocabulary RECORDING_CONSENT_WAIT_SECONDS (low)", vocabulary.RECORDING_CONSENT_WAIT_SECONDS[0],
            STAY_ON_LINE_PLAN, "waitSeconds", "minimum"),
    Keyword(VOICE, "voice vocabulary RECORDING_CONSENT_WAIT_SECONDS (high)",
            vocabulary.RECORDING_CONSENT_WAIT_SECONDS[1], STAY_ON_LINE_PLAN, "waitSeconds", "maximum"),
    # An assistant's tools (model.tools): the simulator's shapes of the three tool types we send.
    Properties(VOICE, "voice simulator TOOL_PROPERTIES[function]", voice_simulator.TOOL_PROPERTIES["function"],
               "CreateFunctionToolDTO"),
    Properties(VOICE, "voice simulator TOOL_PROPERTIES[transferCall]", voice_simulator.TOOL_PROPERTIES["transferCall"],
               "CreateTransferCallToolDTO"),
    Properties(VOICE, "voice simulator TOOL_PROPERTIES[endCall]", voice_simulator.TOOL_PROPERTIES["endCall"],
               "CreateEndCallToolDTO"),
    Keyword(VOICE, "voice simulator TOOL_TYPES", frozenset(voice_simulator.TOOL_TYPES), "CreateAssistantDTO",
            "model.tools.type", "enum"),
    Properties(VOICE, "voice simulator FUNCTION_PROPERTIES", voice_simulator.FUNCTION_PROPERTIES, "OpenAIFunction"),
    Properties(VOICE, "voice simulator FUNCTION_PARAMETERS_PROPERTIES", voice_simulator.FUNCTION_PARAMETERS_PROPERTIES,
               "OpenAIFunctionParameters"),
    Properties(VOICE, "voice simulator SERVER_PROPERTIES", voice_simulator.SERVER_PROPERTIES, "Server"),
    Properties(VOICE, "voice simulator DESTINATION_NUMBER_PROPERTIES", voice_simulator.DESTINATION_NUMBER_PROPERTIES,
               "TransferDestinationNumber"),
    Properties(VOICE, "voice simulator TRANSFER_PLAN_PROPERTIES", voice_simulator.TRANSFER_PLAN_PROPERTIES,
               "TransferPlan"),
    Keyword(VOICE, "voice simulator TRANSFER_MODES", frozenset(voice_simulator.TRANSFER_MODES), "TransferPlan", "mode",
            "enum"),
    Keyword(VOICE, "vapi assistants WARM_TRANSFER and BLIND_TRANSFER (a transfer_call destination's mode)",
            frozenset({assistants.WARM_TRANSFER, assistants.BLIND_TRANSFER}), "TransferPlan", "mode", "enum",
            within=True),
    Properties(VOICE, "voice simulator TRANSFER_FALLBACK_PROPERTIES", voice_simulator.TRANSFER_FALLBACK_PROPERTIES,
               "TransferFallbackPlan"),
    *(Properties(VOICE, f"voice simulator TOOL_MESSAGE_PROPERTIES[{kind}]",
                 voice_simulator.TOOL_MESSAGE_PROPERTIES[kind], schema) for kind, schema in (
        ("request-start", "ToolMessageStart"), ("request-complete", "ToolMessageComplete"),
        ("request-failed", "ToolMessageFailed"), ("request-response-delayed", "ToolMessageDelayed"))),
    Keyword(VOICE, "voice simulator TOOL_MESSAGE_ROLES", frozenset(voice_simulator.TOOL_MESSAGE_ROLES),
            "ToolMessageFailed", "role", "enum"),
    _limit(VOICE, "voice simulator TOOL_MESSAGE_CONTENT_MAX", voice_simulator.TOOL_MESSAGE_CONTENT_MAX,
           "ToolMessageFailed", "content"),
    Properties(VOICE, "vapi assistants tool_body (transferCall)", frozenset(TRANSFER_TOOL), "CreateTransferCallToolDTO",
               exact=False, used=True),
    Properties(VOICE, "vapi assistants tool_body (transferCall): messages", frozenset(TRANSFER_TOOL["messages"][0]),
               "ToolMessageFailed", exact=False, used=True),
    Properties(VOICE, "vapi assistants tool_body (transferCall): a destination",
               frozenset(TRANSFER_TOOL["destinations"][0]), "TransferDestinationNumber", exact=False, used=True),
    Properties(VOICE, "vapi calls transfer_answer", frozenset(TRANSFER_ANSWER), TRANSFER_RESPONSE, exact=False,
               used=True),
    Properties(VOICE, "vapi calls transfer_answer: refusal", frozenset(vapi_calls.transfer_answer(TransferAnswer(
        refusal="No."))), TRANSFER_RESPONSE, exact=False, used=True),
    Properties(VOICE, "vapi calls transfer_answer: destination", frozenset(TRANSFER_ANSWER["destination"]),
               "TransferDestinationNumber", exact=False, used=True),
    Properties(VOICE, "vapi assistants transfer_plan (a warm one, with its fallback)",
               frozenset(TRANSFER_ANSWER["destination"]["transferPlan"]), "TransferPlan", exact=False, used=True),
    Properties(VOICE, "vapi assistants transfer_plan: fallbackPlan",
               frozenset(TRANSFER_ANSWER["destination"]["transferPlan"]["fallbackPlan"]), "TransferFallbackPlan",
               exact=False, used=True),
    Keyword(VOICE, "voice vocabulary JSON_SCHEMA_TYPES", frozenset(vocabulary.JSON_SCHEMA_TYPES), "JsonSchema", "type",
            "enum"),
    Keyword(VOICE, "voice vocabulary JSON_SCHEMA_FORMATS (a custom tool's parameters)",
            frozenset(vocabulary.JSON_SCHEMA_FORMATS), "JsonSchema", "format", "enum"),
    Properties(VOICE, "voice vocabulary JSON_SCHEMA_PROPERTIES", vocabulary.JSON_SCHEMA_PROPERTIES, "JsonSchema"),
    # The providers our services and the simulator accept in an assistant's settings and an eval's judge.
    Keyword(VOICE, "voice vocabulary VOICE_REQUIRED (voice providers)", frozenset(vocabulary.VOICE_REQUIRED),
            "CreateAssistantDTO", "voice.provider", "enum"),
    Keyword(VOICE, "voice vocabulary MODEL_REQUIRED (model providers)", frozenset(vocabulary.MODEL_REQUIRED),
            "CreateAssistantDTO", "model.provider", "enum"),
    Keyword(VOICE, "voice vocabulary VOICEMAIL_DETECTION_PROVIDERS", frozenset(vocabulary.VOICEMAIL_DETECTION_PROVIDERS),
            "CreateAssistantDTO", "voicemailDetection.provider", "enum"),
    Keyword(VOICE, "voice vocabulary JUDGE_MODEL_PROVIDERS", frozenset(vocabulary.JUDGE_MODEL_PROVIDERS),
            "AssistantMessageJudgePlanAI", "model.provider", "enum"),
    # What the voice simulator sends of a tool call (its scripted caller, `dialogue`).
    Properties(VOICE, "voice simulator tool_calls_message", frozenset(SIM_TOOL_CALLS) | {"call", "timestamp"},
               "ServerMessageToolCalls", exact=False, used=True),
    Properties(VOICE, "voice simulator tool_calls_message: artifact", frozenset(SIM_TOOL_CALLS["artifact"]),
               "ServerMessageToolCalls", "artifact", exact=False, used=True),
    Properties(VOICE, "voice simulator tool_calls_message: toolWithToolCallList (a function tool)",
               frozenset(SIM_TOOL_CALLS["toolWithToolCallList"][0]), "FunctionToolWithToolCall", exact=False),
    Properties(VOICE, "voice simulator tool_call", frozenset(SIM_CALL), "ToolCall", exact=False, used=True),
    Properties(VOICE, "voice simulator tool_call: function", frozenset(SIM_CALL["function"]), "ToolCallFunction",
               exact=False, used=True),
    Properties(VOICE, "voice simulator calls_entry (artifact.messages)", frozenset(SIM_CALLS_ENTRY), "ToolCallMessage",
               exact=False, used=True),
    Properties(VOICE, "voice simulator result_entry (artifact.messages)", frozenset(SIM_RESULT_ENTRY),
               "ToolCallResultMessage", exact=False, used=True),
    Properties(VOICE, "voice simulator openai_formatted (messagesOpenAIFormatted)",
               frozenset(k for m in openai_formatted([SIM_CALLS_ENTRY, SIM_RESULT_ENTRY]) for k in m),
               "OpenAIMessage", exact=False),
    # What the calls service reads of the provider's server messages.
    Properties(VOICE, "calls: the end-of-call report's fields read (vapi calls.report)",
               frozenset({"type", "call", "endedReason", "startedAt", "endedAt", "cost", "analysis", "artifact",
                          "compliance"}),
               "ServerMessageEndOfCallReport", exact=False, used=True),
    Properties(VOICE, "calls: the recording consent's fields read (vapi calls.recording_consent)",
               frozenset({"type", "grantedAt"}), "ServerMessageEndOfCallReport", "compliance.recordingConsent",
               exact=False, used=True),
    Properties(VOICE, "calls: the artifact's fields read", frozenset({"transcript", "recording", "recordingUrl"}),
               "ServerMessageEndOfCallReport", "artifact", exact=False, used=True),
    Properties(VOICE, "calls: the recording's fields read (vapi calls.recording_url)", frozenset({"mono", "stereoUrl"}),
               "ServerMessageEndOfCallReport", "artifact.recording", exact=False, used=True),
    Properties(VOICE, "calls: the mono recording's field read", frozenset({"combinedUrl"}),
               "ServerMessageEndOfCallReport", "artifact.recording.mono", exact=False, used=True),
    Properties(VOICE, "calls: the analysis's fields read", frozenset({"summary", "structuredData"}),
               "ServerMessageEndOfCallReport", "analysis", exact=False, used=True),
    Properties(VOICE, "calls: the transfer-destination-request's fields read (vapi calls.read_message)",
               frozenset({"type", "call", "timestamp", "phoneNumber"}), "ServerMessageTransferDestinationRequest",
               exact=False, used=True),
    Keyword(VOICE, "vapi calls ENDED_REASONS", frozenset(vapi_calls.ENDED_REASONS), "ServerMessageEndOfCallReport", "endedReason",
            "enum", within=True),
    Keyword(VOICE, "voice port PROGRESS (the statuses a status update moves a call to)", frozenset(PROGRESS) - {"queued"},
            "ServerMessageStatusUpdate", "status", "enum", within=True),
    _limit(VOICE, "vapi evals DESCRIPTION_MAX (the mirror's description cut to it)",
           vapi_evals.DESCRIPTION_MAX, "CreateEvalDTO", "description"),
    _limit(VOICE, "vapi evals NAME_MAX (the mirror's name cut to it)", vapi_evals.NAME_MAX,
           "CreateEvalDTO", "name"),
    _limit(VOICE, "vapi evals TURN_CONTENT_MAX (an assistant turn)", vapi_evals.TURN_CONTENT_MAX, "ChatEvalAssistantMessageMock",
           "content"),
    _limit(VOICE, "vapi evals TURN_CONTENT_MAX (a user turn)", vapi_evals.TURN_CONTENT_MAX, "ChatEvalUserMessageMock", "content"),
    # Twilio: what we send and read, and the Message resource the simulator shows.
    Properties(SMS, "messaging client SEND_PARAMETERS", frozenset(sms_client.SEND_PARAMETERS), TWILIO_SEND,
               exact=False),
    Properties(SMS, "sms simulator's Message resource (Messages.resource)",
               frozenset(public(Messages("AC" + "0" * 32).resource(to="+15005550006", from_="+15005550006", body="",
                                                                   direction="outbound-api", status="queued"))),
               TWILIO_MESSAGE),
    # A person's erasure: the redaction we send (an empty Body) and the Media resource the simulator shows.
    Properties(SMS, "messaging client REDACT_PARAMETERS", frozenset(sms_client.REDACT_PARAMETERS), TWILIO_REDACT,
               exact=False, used=True),
    Properties(SMS, "sms simulator's Media resource (Messages.attach_media)", frozenset(SIM_MEDIA), TWILIO_MEDIA),
    Keyword(SMS, "messaging webhooks STATUSES (the provider's statuses a text moves to)",
            frozenset(sms_webhooks.STATUSES), TWILIO_MESSAGE, "status", "enum", within=True),
    # Twilio's numbers: what we ask and read of them, and their resources as the simulator shows them.
    Properties(SMS, "messaging client SEARCH_PARAMETERS", frozenset(sms_client.SEARCH_PARAMETERS), TWILIO_SEARCH,
               exact=False),
    Properties(SMS, "messaging client BUY_PARAMETERS", frozenset(sms_client.BUY_PARAMETERS), TWILIO_BUY, exact=False),
    Properties(SMS, "messaging numbers.offered: the fields read",
               frozenset({"phone_number", "iso_country", "locality", "region", "capabilities"}), TWILIO_OFFERED,
               exact=False, used=True),
    Properties(SMS, "messaging numbers.owned: the fields read", frozenset({"sid", "phone_number", "capabilities"}),
               TWILIO_OWNED, exact=False, used=True),
    Properties(SMS, "messaging numbers.capabilities_of: the capabilities read", frozenset({"voice", "sms", "mms"}),
               TWILIO_OWNED, "capabilities", exact=False, used=True),
    Properties(SMS, "sms simulator SEARCH_FILTERS (the search's query parameters it takes)",
               frozenset(sms_simulator_numbers.SEARCH_FILTERS), TWILIO_SEARCH, exact=False),
    Properties(SMS, "sms simulator PURCHASE_PARAMETERS", frozenset(sms_simulator_numbers.PURCHASE_PARAMETERS),
               TWILIO_BUY),
    Properties(SMS, "sms simulator's number for sale (numbers.available_resource)", frozenset(SIM_OFFERED),
               TWILIO_OFFERED),
    Properties(SMS, "sms simulator's number for sale: capabilities", frozenset(SIM_OFFERED["capabilities"]),
               TWILIO_OFFERED, "capabilities"),
    Properties(SMS, "sms simulator's IncomingPhoneNumber resource (Numbers.buy)", frozenset(SIM_OWNED), TWILIO_OWNED),
    Properties(SMS, "sms simulator's IncomingPhoneNumber resource: capabilities", frozenset(SIM_OWNED["capabilities"]),
               TWILIO_OWNED, "capabilities"),
    # Stripe: the simulator refuses unknown parameters, as Stripe does (parameter_unknown).
    Properties(PAYMENTS, "payments simulator SESSION_PARAMS", frozenset(payments_simulator.SESSION_PARAMS),
               STRIPE_SESSION),
    Properties(PAYMENTS, "payments simulator SUBSCRIPTION_DATA_PARAMS",
               frozenset(payments_simulator.SUBSCRIPTION_DATA_PARAMS), STRIPE_SESSION, "subscription_data"),
    Properties(PAYMENTS, "payments simulator LINE_ITEM_PARAMS", frozenset(payments_simulator.LINE_ITEM_PARAMS),
               STRIPE_SESSION, "line_items"),
    Keyword(PAYMENTS, "payments simulator UI_MODES", frozenset(payments_simulator.UI_MODES), STRIPE_SESSION, "ui_mode",
            "enum"),
    Properties(PAYMENTS, "payments client checkout_params", frozenset(CHECKOUT) | {"customer"}, STRIPE_SESSION,
               exact=False),
    Properties(PAYMENTS, "payments client checkout_params: subscription_data", frozenset(CHECKOUT["subscription_data"]),
               STRIPE_SESSION, "subscription_data", exact=False),
    Properties(PAYMENTS, "payments client checkout_params: line_items", frozenset(CHECKOUT["line_items"][0]),
               STRIPE_SESSION, "line_items", exact=False),
    Keyword(PAYMENTS, "payments client checkout_params: mode", frozenset({CHECKOUT["mode"]}), STRIPE_SESSION, "mode",
            "enum", within=True),
    Keyword(PAYMENTS, "payments client checkout_params: payment_method_collection",
            frozenset({CHECKOUT["payment_method_collection"]}), STRIPE_SESSION, "payment_method_collection", "enum",
            within=True),
    Properties(PAYMENTS, "payments simulator SUBSCRIPTION_UPDATE_PARAMS",
               frozenset(payments_simulator.SUBSCRIPTION_UPDATE_PARAMS), STRIPE_SUBSCRIPTION_UPDATE),
    Properties(PAYMENTS, "payments simulator SUBSCRIPTION_CREATE_PARAMS",
               frozenset(payments_simulator.SUBSCRIPTION_CREATE_PARAMS), STRIPE_SUBSCRIPTION_CREATE),
    Properties(PAYMENTS, "payments simulator CUSTOMER_PARAMS", frozenset(payments_simulator.CUSTOMER_PARAMS),
               STRIPE_CUSTOMER_CREATE),
    Keyword(PAYMENTS, "payments simulator PRORATION_BEHAVIORS", frozenset(payments_simulator.PRORATION_BEHAVIORS),
            STRIPE_SUBSCRIPTION_UPDATE, "proration_behavior", "enum"),
    Properties(PAYMENTS, "payments client quantity_params", frozenset(QUANTITY), STRIPE_SUBSCRIPTION_UPDATE,
               exact=False, used=True),
    Properties(PAYMENTS, "payments client quantity_params: items", frozenset(QUANTITY["items"][0]),
               STRIPE_SUBSCRIPTION_UPDATE, "items", exact=False, used=True),
    Keyword(PAYMENTS, "payments client quantity_params: proration_behavior",
            frozenset({QUANTITY["proration_behavior"]}), STRIPE_SUBSCRIPTION_UPDATE, "proration_behavior", "enum",
            within=True),
)
