"""Request checks as the provider makes them. Unknown top-level properties are refused (the provider
validates with a whitelist: "property X should not exist"), then the fields the simulator relies on are
checked. Every check returns a list of messages (empty: valid).

The property lists are the provider's request DTOs (CreateAssistantDTO, Create*PhoneNumberDTO,
CreateCallDTO in its OpenAPI document); its update DTOs accept the same properties (the vapi-number update
cannot change the number). No property of UpdateAssistantDTO is nullable, so an assistant update refuses null
(what the provider does with one is not documented). The eval API's checks are in `eval_validation`; the
differences from the provider that remain are listed in providers/voice/vapi/FIDELITY.md."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeGuard

from core.contact import is_e164
from providers.voice.vapi.vocabulary import (
    FUNCTION_NAME_PATTERN,
    JSON_SCHEMA_FORMATS,
    JSON_SCHEMA_PROPERTIES,
    JSON_SCHEMA_TYPES,
    MODEL_REQUIRED,
    RECORDING_CONSENT_MESSAGE_MAX,
    RECORDING_CONSENT_WAIT_SECONDS,
    VOICE_REQUIRED,
    VOICEMAIL_DETECTION_OFF,
    VOICEMAIL_DETECTION_PROVIDERS,
)

ASSISTANT_PROPERTIES = frozenset({
    "analysisPlan", "artifactPlan", "backgroundSound", "backgroundSpeechDenoisingPlan", "clientMessages",
    "compliancePlan", "credentialIds", "credentials", "endCallMessage", "endCallPhrases", "firstMessage",
    "firstMessageInterruptionsEnabled", "firstMessageMode", "hooks", "keypadInputPlan", "maxDurationSeconds",
    "metadata", "model", "modelOutputInMessagesEnabled", "monitorPlan", "name", "observabilityPlan", "server",
    "serverMessages", "startSpeakingPlan", "stopSpeakingPlan", "transcriber", "transportConfigurations", "voice",
    "voicemailDetection", "voicemailMessage",
})
_PHONE_COMMON = frozenset({"provider", "name", "assistantId", "workflowId", "squadId", "server",
                           "fallbackDestination", "hooks"})
PHONE_NUMBER_PROPERTIES = {
    "byo-phone-number": _PHONE_COMMON | {"number", "credentialId", "numberE164CheckEnabled"},
    "twilio": _PHONE_COMMON | {"number", "twilioAccountSid", "twilioAuthToken", "twilioApiKey", "twilioApiSecret",
                               "smsEnabled"},
    "vapi": _PHONE_COMMON | {"numberDesiredAreaCode", "sipUri", "authentication"},
}
PHONE_NUMBER_UPDATE_PROPERTIES = {**PHONE_NUMBER_PROPERTIES,
                                  "vapi": PHONE_NUMBER_PROPERTIES["vapi"] - {"numberDesiredAreaCode"}}
CALL_PROPERTIES = frozenset({
    "assistant", "assistantId", "assistantOverrides", "assistantVersion", "customer", "customerId", "customers",
    "name", "phoneNumber", "phoneNumberId", "schedulePlan", "squad", "squadId", "squadOverrides", "transport",
    "workflow", "workflowId", "workflowOverrides",
})
# DeleteCallDTO, the body of DELETE /call/{id}: `ids` asks a bulk deletion, which the simulator refuses
# (FIDELITY-calls.md, Deleting a call).
DELETE_CALL_PROPERTIES = frozenset({"ids"})
CREDENTIAL_PROPERTIES = frozenset({"authenticationPlan", "name", "provider"})
# CompliancePlan, and its recordingConsentPlan's two shapes by `type` (RecordingConsentPlanStayOnLine,
# RecordingConsentPlanVerbal).
COMPLIANCE_PLAN_PROPERTIES = frozenset({"hipaaEnabled", "pciEnabled", "securityFilterPlan", "recordingConsentPlan"})
_CONSENT_COMMON = frozenset({"type", "message", "voice", "firstMessageMode"})
RECORDING_CONSENT_PROPERTIES = {
    "stay-on-line": _CONSENT_COMMON | {"waitSeconds"},
    "verbal": _CONSENT_COMMON | {"declineTool", "declineToolId"},
}
# model.tools: every tool type the provider documents (the `type` of each Create*ToolDTO of a model's tools), and
# the shapes of the three we send, checked whole (CreateFunctionToolDTO, CreateTransferCallToolDTO,
# CreateEndCallToolDTO, with OpenAIFunction, OpenAIFunctionParameters, Server, TransferDestinationNumber and
# TransferPlan); a tool of another type is taken as given (FIDELITY.md).
TOOL_TYPES = ("apiRequest", "bash", "code", "computer", "dtmf", "endCall", "function",
              "gohighlevel.calendar.availability.check", "gohighlevel.calendar.event.create",
              "gohighlevel.contact.create", "gohighlevel.contact.get", "google.calendar.availability.check",
              "google.calendar.event.create", "google.sheets.row.append", "handoff", "mcp", "query",
              "slack.message.send", "sms", "textEditor", "transferCall", "sipRequest", "voicemail")
_TOOL_COMMON = frozenset({"type", "messages", "rejectionPlan"})
TOOL_PROPERTIES = {
    "function": _TOOL_COMMON | {"async", "server", "variableExtractionPlan", "parameters", "function"},
    "transferCall": _TOOL_COMMON | {"destinations"},
    "endCall": _TOOL_COMMON,
}
FUNCTION_PROPERTIES = frozenset({"name", "strict", "description", "parameters"})
FUNCTION_PARAMETERS_PROPERTIES = frozenset({"type", "properties", "required"})
SERVER_PROPERTIES = frozenset({"timeoutSeconds", "credentialId", "staticIpAddressesEnabled", "encryptedPaths", "url",
                               "headers", "backoffPlan"})
DESTINATION_NUMBER_PROPERTIES = frozenset({"message", "type", "numberE164CheckEnabled", "number", "extension",
                                           "callerId", "transferPlan", "description"})
TRANSFER_PLAN_PROPERTIES = frozenset({"mode", "message", "timeout", "sipVerb", "dialTimeout", "holdAudioUrl",
                                      "transferCompleteAudioUrl", "contextEngineeringPlan", "twiml", "summaryPlan",
                                      "sipHeadersInReferToEnabled", "fallbackPlan"})
TRANSFER_MODES = ("blind-transfer", "blind-transfer-add-summary-to-sip-header", "warm-transfer-say-message",
                  "warm-transfer-say-summary", "warm-transfer-twiml",
                  "warm-transfer-wait-for-operator-to-speak-first-and-then-say-message",
                  "warm-transfer-wait-for-operator-to-speak-first-and-then-say-summary", "warm-transfer-experimental")
TRANSFER_FALLBACK_PROPERTIES = frozenset({"message", "endCallEnabled"})
# A tool's `messages` (ToolMessageStart, ToolMessageComplete, ToolMessageFailed, ToolMessageDelayed), by type.
_TOOL_MESSAGE_COMMON = frozenset({"contents", "type", "content", "conditions"})
TOOL_MESSAGE_PROPERTIES = {
    "request-start": _TOOL_MESSAGE_COMMON | {"blocking"},
    "request-complete": _TOOL_MESSAGE_COMMON | {"role", "endCallAfterSpokenEnabled"},
    "request-failed": _TOOL_MESSAGE_COMMON | {"role", "endCallAfterSpokenEnabled"},
    "request-response-delayed": _TOOL_MESSAGE_COMMON | {"timingMilliseconds"},
}
TOOL_MESSAGE_ROLES = ("assistant", "system")
TOOL_MESSAGE_CONTENT_MAX = 1000
FIRST_MESSAGE_MODES = ("assistant-speaks-first", "assistant-waits-for-user")
AUTH_PLAN_TYPES = ("hmac", "bearer")

NAME_MAX = 40
CUSTOMER_NAME_MAX = 40


def unknown(body: dict[str, Any], allowed: frozenset[str], prefix: str = "") -> list[str]:
    return [f"property {prefix}{k} should not exist" for k in sorted(set(body) - allowed)]


def is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _name(body: dict[str, Any], field: str, low: int, high: int, errors: list[str], label: str = "") -> None:
    value, label = body.get(field), label or field
    if not isinstance(value, str):
        errors.append(f"{label} must be a string")
    elif len(value) > high:
        errors.append(f"{label} must be shorter than or equal to {high} characters")
    elif len(value) < low:
        errors.append(f"{label} must be longer than or equal to {low} characters")


def _present(body: dict[str, Any], field: str, updating: bool) -> bool:
    """Whether to check a field: given, and on an update not null (null resets it)."""
    return field in body and not (updating and body[field] is None)


def _one_of(value: object, allowed: Sequence[str], label: str) -> list[str]:
    return [] if value in allowed else [f"{label} must be one of the following values: {', '.join(allowed)}"]


# -- assistants ---------------------------------------------------------------------------

def assistant(body: dict[str, Any], *, updating: bool = False) -> list[str]:
    errors = unknown(body, ASSISTANT_PROPERTIES)
    if updating:
        errors += [f"{k} must not be null" for k in sorted(body) if body[k] is None]
        body = {k: v for k, v in body.items() if v is not None}
    if "name" in body:
        _name(body, "name", 0, NAME_MAX, errors)
    if "firstMessage" in body and not isinstance(body["firstMessage"], str):
        errors.append("firstMessage must be a string")
    if "model" in body:
        errors += _model(body["model"])
    if "voice" in body:
        errors += _voice(body["voice"])
    if "maxDurationSeconds" in body:
        duration = body["maxDurationSeconds"]
        if not is_number(duration):
            errors.append("maxDurationSeconds must be a number")
        elif duration < 10:
            errors.append("maxDurationSeconds must not be less than 10")
        elif duration > 43200:
            errors.append("maxDurationSeconds must not be greater than 43200")
    if "metadata" in body and not isinstance(body["metadata"], dict):
        errors.append("metadata must be an object")
    if "voicemailDetection" in body:
        errors += _voicemail_detection(body["voicemailDetection"])
    if "analysisPlan" in body:
        errors += _analysis_plan(body["analysisPlan"])
    if "compliancePlan" in body:
        errors += compliance_plan(body["compliancePlan"])
    return errors


def compliance_plan(plan: object, at: str = "compliancePlan") -> list[str]:
    """CompliancePlan: its flags, and a recording consent plan of one of the two types."""
    if not isinstance(plan, dict):
        return [f"{at} must be an object"]
    errors = unknown(plan, COMPLIANCE_PLAN_PROPERTIES, f"{at}.")
    errors += [f"{at}.{k} must be a boolean" for k in ("hipaaEnabled", "pciEnabled")
               if k in plan and not isinstance(plan[k], bool)]
    if "recordingConsentPlan" in plan:
        errors += _recording_consent(plan["recordingConsentPlan"], f"{at}.recordingConsentPlan")
    return errors


def _recording_consent(plan: object, at: str) -> list[str]:
    if not isinstance(plan, dict) or plan.get("type") not in RECORDING_CONSENT_PROPERTIES:
        return [f"{at}.type must be one of the following values: {', '.join(RECORDING_CONSENT_PROPERTIES)}"]
    errors = unknown(plan, RECORDING_CONSENT_PROPERTIES[plan["type"]], f"{at}.")
    message = plan.get("message")
    if not isinstance(message, str):
        errors.append(f"{at}.message must be a string")
    elif len(message) > RECORDING_CONSENT_MESSAGE_MAX:
        errors.append(f"{at}.message must be shorter than or equal to {RECORDING_CONSENT_MESSAGE_MAX} characters")
    if "firstMessageMode" in plan:
        errors += _one_of(plan["firstMessageMode"], FIRST_MESSAGE_MODES, f"{at}.firstMessageMode")
    if "voice" in plan:
        errors += [f"{at}.{e}" for e in _voice(plan["voice"])]
    low, high = RECORDING_CONSENT_WAIT_SECONDS
    if "waitSeconds" in plan and not (is_number(plan["waitSeconds"]) and low <= plan["waitSeconds"] <= high):
        errors.append(f"{at}.waitSeconds must be a number from {low} to {high}")
    if "declineTool" in plan and not isinstance(plan["declineTool"], dict):
        errors.append(f"{at}.declineTool must be an object")
    if "declineToolId" in plan and not isinstance(plan["declineToolId"], str):
        errors.append(f"{at}.declineToolId must be a string")
    return errors


def _required(body: dict[str, Any], fields: tuple[str, ...], at: str) -> list[str]:
    return [f"{at}.{k} should not be empty" for k in fields if body.get(k) in (None, "")]


def _voice(voice: object) -> list[str]:
    """One of the voice DTOs (ElevenLabsVoice, ...): a known provider and what that provider requires."""
    if not isinstance(voice, dict):
        return ["voice must be an object"]
    errors = _one_of(voice.get("provider"), tuple(VOICE_REQUIRED), "voice.provider")
    if not errors:
        errors += _required(voice, VOICE_REQUIRED[voice["provider"]], "voice")
    if "voiceId" in voice and not isinstance(voice["voiceId"], str):
        errors.append("voice.voiceId must be a string")
    return errors


def _voicemail_detection(value: object) -> list[str]:
    """`"off"`, or a detection plan of one of the providers."""
    if value == VOICEMAIL_DETECTION_OFF:
        return []
    if not isinstance(value, dict):
        return [f'voicemailDetection must be "{VOICEMAIL_DETECTION_OFF}" or a voicemail detection plan']
    return _one_of(value.get("provider"), VOICEMAIL_DETECTION_PROVIDERS, "voicemailDetection.provider")


def _analysis_plan(plan: object) -> list[str]:
    if not isinstance(plan, dict):
        return ["analysisPlan must be an object"]
    structured = plan.get("structuredDataPlan")
    if isinstance(structured, dict) and "schema" in structured:
        return json_schema(structured["schema"], "analysisPlan.structuredDataPlan.schema")
    return []


def json_schema(schema: object, at: str) -> list[str]:
    """The provider's JsonSchema: a type, its own properties only, `items` and `properties` recursively."""
    if not isinstance(schema, dict):
        return [f"{at} must be an object"]
    errors = [f"{at}.property {k} should not exist" for k in sorted(set(schema) - JSON_SCHEMA_PROPERTIES)]
    errors += _one_of(schema.get("type"), JSON_SCHEMA_TYPES, f"{at}.type")
    if "format" in schema:
        errors += _one_of(schema["format"], JSON_SCHEMA_FORMATS, f"{at}.format")
    for key in ("enum", "required"):
        if key in schema and not (isinstance(schema[key], list) and all(isinstance(v, str) for v in schema[key])):
            errors.append(f"{at}.{key} must be an array of strings")
    for key in ("description", "pattern", "title"):
        if key in schema and not isinstance(schema[key], str):
            errors.append(f"{at}.{key} must be a string")
    if "items" in schema:
        errors += json_schema(schema["items"], f"{at}.items")
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            return [*errors, f"{at}.properties must be an object"]
        for name, sub in properties.items():
            errors += json_schema(sub, f"{at}.properties.{name}")
    return errors


def _model(model: object) -> list[str]:
    if not isinstance(model, dict):
        return ["model must be an object"]
    errors = _one_of(model.get("provider"), tuple(MODEL_REQUIRED), "model.provider")
    if not errors:
        errors += _required(model, MODEL_REQUIRED[model["provider"]], "model")
    errors += [f"model.{k} must be a string" for k in ("model", "url") if k in model and not isinstance(model[k], str)]
    temperature = model.get("temperature")
    if temperature is not None:
        if not is_number(temperature):
            errors.append("model.temperature must be a number")
        elif temperature < 0:
            errors.append("model.temperature must not be less than 0")
        elif temperature > 2:
            errors.append("model.temperature must not be greater than 2")
    messages = model.get("messages")
    if messages is not None and (not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content", ""), str)
            for m in messages)):
        errors.append("model.messages must be an array of {role, content} objects")
    if "tools" in model:
        errors += _tools(model["tools"])
    return errors


def _tools(tools: object) -> list[str]:
    if not isinstance(tools, list):
        return ["model.tools must be an array"]
    errors: list[str] = []
    for i, tool in enumerate(tools):
        at = f"model.tools.{i}"
        if not isinstance(tool, dict):
            errors.append(f"{at} must be an object")
            continue
        kind = tool.get("type")
        if kind not in TOOL_PROPERTIES:
            errors += _one_of(kind, TOOL_TYPES, f"{at}.type")
            continue
        errors += unknown(tool, TOOL_PROPERTIES[kind], f"{at}.")
        if "messages" in tool:
            errors += _tool_messages(tool["messages"], f"{at}.messages")
        if kind == "function":
            errors += _function_tool(tool, at)
        elif kind == "transferCall":
            errors += _transfer_destinations(tool.get("destinations", []), f"{at}.destinations")
    return errors


def _tool_messages(messages: object, at: str) -> list[str]:
    """What a tool has said as it runs, completes or fails (its `messages`): each of a documented type, with that
    type's properties, a `role` of assistant or system, and `content` of at most 1000 characters."""
    if not isinstance(messages, list):
        return [f"{at} must be an array"]
    errors: list[str] = []
    for i, message in enumerate(messages):
        where = f"{at}.{i}"
        if not isinstance(message, dict) or message.get("type") not in TOOL_MESSAGE_PROPERTIES:
            errors += _one_of(None, tuple(TOOL_MESSAGE_PROPERTIES), f"{where}.type")
            continue
        errors += unknown(message, TOOL_MESSAGE_PROPERTIES[message["type"]], f"{where}.")
        if "role" in message:
            errors += _one_of(message["role"], TOOL_MESSAGE_ROLES, f"{where}.role")
        if "content" in message:
            _name(message, "content", 0, TOOL_MESSAGE_CONTENT_MAX, errors, f"{where}.content")
    return errors


def _function_tool(tool: dict[str, Any], at: str) -> list[str]:
    """A function tool: OpenAIFunction (name required, its pattern; parameters an object schema) and the Server its
    tool-calls messages go to."""
    errors: list[str] = []
    function = tool.get("function")
    if "function" in tool:
        if not isinstance(function, dict):
            return [f"{at}.function must be an object"]
        errors += unknown(function, FUNCTION_PROPERTIES, f"{at}.function.")
        name = function.get("name")
        if not isinstance(name, str) or not re.fullmatch(FUNCTION_NAME_PATTERN, name):
            errors.append(f"{at}.function.name must match {FUNCTION_NAME_PATTERN} regular expression")
        if "description" in function and not isinstance(function["description"], str):
            errors.append(f"{at}.function.description must be a string")
        if "parameters" in function:
            errors += _function_parameters(function["parameters"], f"{at}.function.parameters")
    if "server" in tool:
        server = tool["server"]
        if not isinstance(server, dict):
            return [*errors, f"{at}.server must be an object"]
        errors += unknown(server, SERVER_PROPERTIES, f"{at}.server.")
        if "url" in server and not isinstance(server["url"], str):
            errors.append(f"{at}.server.url must be a string")
    return errors


def _function_parameters(parameters: object, at: str) -> list[str]:
    """OpenAIFunctionParameters: type object, properties (each a JsonSchema) and required."""
    if not isinstance(parameters, dict):
        return [f"{at} must be an object"]
    errors = unknown(parameters, FUNCTION_PARAMETERS_PROPERTIES, f"{at}.")
    errors += _one_of(parameters.get("type"), ("object",), f"{at}.type")
    properties = parameters.get("properties")
    if not isinstance(properties, dict):
        errors.append(f"{at}.properties must be an object")
    else:
        for name, sub in properties.items():
            errors += json_schema(sub, f"{at}.properties.{name}")
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        errors.append(f"{at}.required must be an array of strings")
    return errors


def _transfer_destinations(destinations: object, at: str) -> list[str]:
    """A transferCall tool's destinations; the simulator plays number destinations (TransferDestinationNumber)."""
    if not isinstance(destinations, list):
        return [f"{at} must be an array"]
    errors: list[str] = []
    for i, destination in enumerate(destinations):
        where = f"{at}.{i}"
        if not isinstance(destination, dict):
            errors.append(f"{where} must be an object")
            continue
        errors += _one_of(destination.get("type"), ("number",), f"{where}.type")
        errors += unknown(destination, DESTINATION_NUMBER_PROPERTIES, f"{where}.")
        _number(destination, "number", errors, f"{where}.number")
        for key in ("message", "description"):
            if key in destination and not isinstance(destination[key], str):
                errors.append(f"{where}.{key} must be a string")
        if "transferPlan" in destination:
            plan = destination["transferPlan"]
            if not isinstance(plan, dict):
                errors.append(f"{where}.transferPlan must be an object")
                continue
            errors += unknown(plan, TRANSFER_PLAN_PROPERTIES, f"{where}.transferPlan.")
            errors += _one_of(plan.get("mode"), TRANSFER_MODES, f"{where}.transferPlan.mode")
            if "message" in plan and not isinstance(plan["message"], str):
                errors.append(f"{where}.transferPlan.message must be a string")
            if "fallbackPlan" in plan:
                errors += fallback_plan(plan["fallbackPlan"], f"{where}.transferPlan.fallbackPlan")
    return errors


def fallback_plan(fallback: object, at: str) -> list[str]:
    """A transfer plan's TransferFallbackPlan: `message` (required) said to the caller when the transfer fails, and
    whether the call then ends (`endCallEnabled`, a boolean)."""
    if not isinstance(fallback, dict):
        return [f"{at} must be an object"]
    errors = unknown(fallback, TRANSFER_FALLBACK_PROPERTIES, f"{at}.")
    if not isinstance(fallback.get("message"), str):
        errors.append(f"{at}.message must be a string")
    if "endCallEnabled" in fallback and not isinstance(fallback["endCallEnabled"], bool):
        errors.append(f"{at}.endCallEnabled must be a boolean")
    return errors


# -- phone numbers ---------------------------------------------------------------------------

def _number(body: dict[str, Any], field: str, errors: list[str], label: str = "") -> None:
    """E.164 unless the body turns the check off (`numberE164CheckEnabled: false`)."""
    value, label = body.get(field), label or field
    if body.get("numberE164CheckEnabled") is False:
        if not isinstance(value, str) or not 3 <= len(value) <= 40:
            errors.append(f"{label} must be a string of 3 to 40 characters")
    elif not is_e164(value):
        errors.append(f"{label} must be a valid phone number in the E.164 format")


def phone_number(body: dict[str, Any]) -> list[str]:
    provider = body.get("provider")
    if provider not in PHONE_NUMBER_PROPERTIES:
        return [f"provider must be one of the following values: {', '.join(PHONE_NUMBER_PROPERTIES)}"]
    errors = unknown(body, PHONE_NUMBER_PROPERTIES[provider])
    if provider in ("byo-phone-number", "twilio"):
        _number(body, "number", errors)
    if provider == "byo-phone-number" and not (isinstance(body.get("credentialId"), str) and body["credentialId"]):
        errors.append("credentialId should not be empty")
    if provider == "twilio" and not (isinstance(body.get("twilioAccountSid"), str) and body["twilioAccountSid"]):
        errors.append("twilioAccountSid should not be empty")
    if provider == "vapi" and "numberDesiredAreaCode" in body:
        code = body["numberDesiredAreaCode"]
        if not (isinstance(code, str) and len(code) == 3 and code.isdigit()):
            errors.append("numberDesiredAreaCode must be 3 digits")
    errors += _phone_common(body, updating=False)
    return errors


def phone_number_update(body: dict[str, Any], provider: str) -> list[str]:
    errors = unknown(body, PHONE_NUMBER_UPDATE_PROPERTIES.get(provider, _PHONE_COMMON))
    if "provider" in body and body["provider"] != provider:
        errors.append(f"provider must be {provider}")
    if "number" in body and provider != "vapi":
        _number(body, "number", errors)
    for field in ("credentialId", "twilioAccountSid"):
        if field in body and not (isinstance(body[field], str) and body[field]):
            errors.append(f"{field} should not be empty")
    errors += _phone_common(body, updating=True)
    return errors


def _phone_common(body: dict[str, Any], *, updating: bool) -> list[str]:
    errors: list[str] = []
    if _present(body, "name", updating):
        _name(body, "name", 0, NAME_MAX, errors)
    if _present(body, "assistantId", updating) and not isinstance(body["assistantId"], str):
        errors.append("assistantId must be a string")
    if _present(body, "hooks", updating):
        errors += _number_hooks(body["hooks"])
    return errors


NUMBER_HOOK_EVENTS = ("call.ringing", "call.ending")
TRANSFER_MODES = ("blind-transfer", "blind-transfer-add-summary-to-sip-header", "warm-transfer-say-message",
                  "warm-transfer-say-summary", "warm-transfer-twiml",
                  "warm-transfer-wait-for-operator-to-speak-first-and-then-say-message",
                  "warm-transfer-wait-for-operator-to-speak-first-and-then-say-summary", "warm-transfer-experimental")
TIMEOUT_BOUNDS = (1, 600)  # seconds: a transfer plan's timeout and dialTimeout


def _number_hooks(hooks: object) -> list[str]:
    """A phone number's hooks (PhoneNumberHookCallRinging, PhoneNumberHookCallEnding): `on`, then `do`, whose
    actions are transfer (to a number destination here) or say."""
    if not isinstance(hooks, list):
        return ["hooks must be an array"]
    errors: list[str] = []
    for i, hook in enumerate(hooks):
        at = f"hooks.{i}"
        if not isinstance(hook, dict) or hook.get("on") not in NUMBER_HOOK_EVENTS:
            errors.append(f"{at}.on must be one of the following values: {', '.join(NUMBER_HOOK_EVENTS)}")
            continue
        actions = hook.get("do")
        actions = actions if hook["on"] == "call.ringing" else [actions]
        if not isinstance(actions, list) or not actions:
            errors.append(f"{at}.do must be a non-empty array")
            continue
        for j, action in enumerate(actions):
            errors += _hook_action(action, f"{at}.do.{j}" if hook["on"] == "call.ringing" else f"{at}.do")
    return errors


def _hook_action(action: object, at: str) -> list[str]:
    if not isinstance(action, dict) or action.get("type") not in ("transfer", "say"):
        return [f"{at}.type must be one of the following values: transfer, say"]
    if action["type"] == "say":
        return [] if isinstance(action.get("exact"), str) else [f"{at}.exact must be a string"]
    destination = action.get("destination")
    if not isinstance(destination, dict) or destination.get("type") != "number":
        return [f"{at}.destination must be a number destination ({{type: 'number', number}})"]
    errors: list[str] = []
    _number(destination, "number", errors, f"{at}.destination.number")
    plan = destination.get("transferPlan")
    if plan is None:
        return errors
    if not isinstance(plan, dict) or plan.get("mode") not in TRANSFER_MODES:
        return [*errors, f"{at}.destination.transferPlan.mode must be one of the following values: "
                         f"{', '.join(TRANSFER_MODES)}"]
    low, high = TIMEOUT_BOUNDS
    for field in ("timeout", "dialTimeout"):
        if field in plan and not (is_number(plan[field]) and low <= plan[field] <= high):
            errors.append(f"{at}.destination.transferPlan.{field} must be a number from {low} to {high}")
    if "sipVerb" in plan and plan["sipVerb"] not in ("refer", "bye", "dial"):
        errors.append(f"{at}.destination.transferPlan.sipVerb must be one of the following values: refer, bye, dial")
    if plan.get("fallbackPlan") is not None:
        errors += fallback_plan(plan["fallbackPlan"], f"{at}.destination.transferPlan.fallbackPlan")
    return errors


# -- calls --------------------------------------------------------------------------------------

def call(body: dict[str, Any]) -> list[str]:
    errors = unknown(body, CALL_PROPERTIES)
    if not isinstance(body.get("assistantId"), str) and not isinstance(body.get("assistant"), dict):
        errors.append("assistantId or assistant must be given")
    if not isinstance(body.get("phoneNumberId"), str):
        errors.append("phoneNumberId must be a string")
    customer = body.get("customer")
    if not isinstance(customer, dict):
        errors.append("customer must be an object")
    else:
        _number(customer, "number", errors, "customer.number")
        if "name" in customer:
            _name(customer, "name", 0, CUSTOMER_NAME_MAX, errors, "customer.name")
    overrides = body.get("assistantOverrides")
    if isinstance(overrides, dict) and "compliancePlan" in overrides:
        errors += compliance_plan(overrides["compliancePlan"], "assistantOverrides.compliancePlan")
    return errors


# -- credentials -----------------------------------------------------------------------------------

def delete_call(body: dict[str, Any]) -> list[str]:
    """DELETE /call/{id}'s body: the call of the path alone (an empty DeleteCallDTO)."""
    errors = unknown(body, DELETE_CALL_PROPERTIES)
    if "ids" in body:
        errors.append("ids (a bulk deletion, asynchronous at Vapi) is not simulated: delete one call at a time")
    return errors


def credential(body: dict[str, Any]) -> list[str]:
    """A webhook credential: how the provider authenticates its server messages (an HMAC or a bearer token)."""
    errors = unknown(body, CREDENTIAL_PROPERTIES)
    if body.get("provider") != "webhook":
        errors.append("provider must be one of the following values: webhook")
    plan = body.get("authenticationPlan")
    if not isinstance(plan, dict) or plan.get("type") not in AUTH_PLAN_TYPES:
        errors.append(f"authenticationPlan.type must be one of the following values: {', '.join(AUTH_PLAN_TYPES)}")
    elif plan["type"] == "hmac" and not (isinstance(plan.get("secretKey"), str) and plan["secretKey"]):
        errors.append("authenticationPlan.secretKey must be a non-empty string")
    elif plan["type"] == "bearer" and not (isinstance(plan.get("token"), str) and plan["token"]):
        errors.append("authenticationPlan.token must be a non-empty string")
    if "name" in body:
        _name(body, "name", 1, 40, errors, "name")
    return errors
