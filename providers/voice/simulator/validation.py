"""Request checks as the provider makes them: unknown properties are refused (a whitelist),
then the fields the simulator relies on are checked. Each returns a list of messages."""
from __future__ import annotations

import phonenumbers

# Top-level properties the provider accepts on an assistant (its CreateAssistantDTO).
ASSISTANT_PROPERTIES = frozenset({
    "analysisPlan", "artifactPlan", "backgroundSound", "backgroundSpeechDenoisingPlan", "clientMessages",
    "compliancePlan", "credentialIds", "credentials", "endCallMessage", "endCallPhrases", "firstMessage",
    "firstMessageInterruptionsEnabled", "firstMessageMode", "hooks", "keypadInputPlan", "maxDurationSeconds",
    "metadata", "model", "modelOutputInMessagesEnabled", "monitorPlan", "name", "observabilityPlan", "server",
    "serverMessages", "startSpeakingPlan", "stopSpeakingPlan", "transcriber", "transportConfigurations", "voice",
    "voicemailDetection", "voicemailMessage",
})
PHONE_NUMBER_PROPERTIES = frozenset({
    "provider", "number", "credentialId", "numberE164CheckEnabled", "name", "assistantId", "workflowId", "squadId",
    "server", "fallbackDestination", "hooks", "twilioAccountSid", "twilioAuthToken", "twilioApiKey",
    "twilioApiSecret", "smsEnabled", "numberDesiredAreaCode", "sipUri", "authentication",
})
CALL_PROPERTIES = frozenset({
    "assistant", "assistantId", "assistantOverrides", "assistantVersion", "customer", "customerId", "customers",
    "name", "phoneNumber", "phoneNumberId", "schedulePlan", "squad", "squadId", "squadOverrides", "transport",
    "workflow", "workflowId", "workflowOverrides",
})
EVAL_PROPERTIES = frozenset({"description", "messages", "name", "type"})
EVAL_RUN_PROPERTIES = frozenset({"eval", "evalId", "target", "type"})


def unknown(body: dict, allowed: frozenset) -> list[str]:
    return [f"property {k} should not exist" for k in sorted(set(body) - allowed)]


def is_e164(value) -> bool:
    if not isinstance(value, str) or not value.startswith("+"):
        return False
    try:
        return phonenumbers.is_valid_number(phonenumbers.parse(value, None))
    except phonenumbers.NumberParseException:
        return False


def assistant(body: dict) -> list[str]:
    errors = unknown(body, ASSISTANT_PROPERTIES)
    if "name" in body and (not isinstance(body["name"], str) or len(body["name"]) > 40):
        errors.append("name must be shorter than or equal to 40 characters")
    if "firstMessage" in body and not isinstance(body["firstMessage"], str):
        errors.append("firstMessage must be a string")
    model = body.get("model")
    if model is not None:
        if not isinstance(model, dict) or not isinstance(model.get("provider"), str) \
                or not isinstance(model.get("model"), str):
            errors.append("model must have a string provider and model")
        else:
            temperature = model.get("temperature")
            if temperature is not None and (not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2):
                errors.append("model.temperature must not be greater than 2")
            messages = model.get("messages", [])
            if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m for m in messages):
                errors.append("model.messages must be an array of {role, content}")
    voice = body.get("voice")
    if voice is not None and (not isinstance(voice, dict) or not isinstance(voice.get("provider"), str)):
        errors.append("voice.provider must be a string")
    duration = body.get("maxDurationSeconds")
    if duration is not None and (not isinstance(duration, (int, float)) or not 10 <= duration <= 43200):
        errors.append("maxDurationSeconds must be between 10 and 43200")
    if "metadata" in body and not isinstance(body["metadata"], dict):
        errors.append("metadata must be an object")
    return errors


def phone_number(body: dict, *, creating: bool) -> list[str]:
    errors = unknown(body, PHONE_NUMBER_PROPERTIES)
    provider = body.get("provider")
    if creating:
        if provider not in ("byo-phone-number", "twilio", "vapi"):
            errors.append("provider must be one of byo-phone-number, twilio, vapi")
        if provider in ("byo-phone-number", "twilio") and not is_e164(body.get("number")):
            errors.append("number must be a valid E.164 phone number")
        if provider == "byo-phone-number" and not body.get("credentialId"):
            errors.append("credentialId should not be empty")
        if provider == "twilio" and not body.get("twilioAccountSid"):
            errors.append("twilioAccountSid should not be empty")
    if "name" in body and body["name"] is not None and (not isinstance(body["name"], str) or len(body["name"]) > 40):
        errors.append("name must be shorter than or equal to 40 characters")
    return errors


def call(body: dict) -> list[str]:
    errors = unknown(body, CALL_PROPERTIES)
    if not body.get("assistantId") and not isinstance(body.get("assistant"), dict):
        errors.append("assistantId or assistant is required")
    if not body.get("phoneNumberId"):
        errors.append("phoneNumberId is required")
    if not is_e164((body.get("customer") or {}).get("number")):
        errors.append("customer.number must be a valid E.164 phone number")
    return errors


def eval_(body: dict, *, creating: bool) -> list[str]:
    errors = unknown(body, EVAL_PROPERTIES)
    if creating or "messages" in body:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            errors.append("messages must be a non-empty array")
    if (creating or "type" in body) and body.get("type") != "chat.mockConversation":
        errors.append("type must be one of the following values: chat.mockConversation")
    if "name" in body and (not isinstance(body["name"], str) or not 1 <= len(body["name"]) <= 80):
        errors.append("name must be between 1 and 80 characters")
    return errors


def eval_run(body: dict) -> list[str]:
    errors = unknown(body, EVAL_RUN_PROPERTIES)
    if body.get("type") != "eval":
        errors.append("type must be one of the following values: eval")
    target = body.get("target")
    if not isinstance(target, dict) or target.get("type") != "assistant":
        errors.append("target.type must be one of the following values: assistant")
    if not body.get("evalId") and not isinstance(body.get("eval"), dict):
        errors.append("evalId or eval is required")
    return errors
