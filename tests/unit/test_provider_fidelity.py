"""The provider fidelity check (providers/fidelity): the comparison itself on a small document, and the documented
deviations pinned against Stripe's types, which the pinned `stripe` package always brings. Vapi's and Twilio's
documents are compared when PROVIDER_SPECS names a folder holding them (README: Provider fidelity)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from contracts import calls as calls_contract
from contracts import evals as evals_contract
from providers.fidelity import __main__ as fidelity
from providers.fidelity.claims import CLAIMS, PAYMENTS, Keyword, Properties
from providers.fidelity.compare import compare
from providers.fidelity.deviations import DEVIATIONS
from providers.fidelity.sources import OpenApi, StripeTypes
from providers.messaging import webhooks as sms_webhooks
from providers.voice import port as voice_port
from providers.voice.vapi import evals as vapi_evals
from services.messaging import domain as messaging_domain

DOCUMENT = {
    "paths": {"/Messages.json": {"post": {"requestBody": {"content": {"application/x-www-form-urlencoded": {
        "schema": {"type": "object", "properties": {"To": {"type": "string"}, "Body": {"type": "string"}}}}}}}},
              "/Numbers/{Country}.json": {"get": {"parameters": [
                  {"name": "Country", "in": "path", "schema": {"type": "string"}},
                  {"name": "AreaCode", "in": "query", "schema": {"type": "integer"}},
                  {"name": "PageSize", "in": "query", "schema": {"type": "integer"}}]}}},
    "components": {"schemas": {
        "Customer": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
        "Base": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 40}}},
        "Call": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "properties": {
            "customer": {"oneOf": [{"$ref": "#/components/schemas/Customer"}, {"type": "null"}]},
            "customers": {"type": "array", "items": {"$ref": "#/components/schemas/Customer"}},
            "mode": {"type": "string", "enum": ["on", "off"]},
            "plan": {"type": "object", "deprecated": True}}}]},
        "Assistant": {"type": "object", "properties": {"voice": {"oneOf": [
            {"type": "object", "properties": {"provider": {"type": "string", "enum": ["azure"]},
                                              "voiceId": {"type": "string", "maxLength": 10}}},
            {"type": "object", "properties": {"provider": {"type": "string", "enum": ["11labs"]},
                                              "voiceId": {"type": "string", "maxLength": 20}}}]}}},
    }},
}


def keys(claims, source) -> list[str]:
    return [d.key for d in compare(tuple(claims), {"voice": source})]


def test_properties_differ_both_ways_unless_only_within_is_claimed():
    doc = OpenApi(DOCUMENT)
    assert keys([Properties("voice", "ours", frozenset({"name", "customer", "extra"}), "Call")], doc) == [
        "Call: accepts 'extra', which the provider does not define",
        "Call: refuses 'customers', which the provider accepts",
        "Call: refuses 'mode', which the provider accepts",
        "Call: refuses 'plan', which the provider accepts",
    ]
    assert keys([Properties("voice", "ours", frozenset({"name"}), "Call", exact=False)], doc) == []
    assert keys([Properties("voice", "ours", frozenset({"To", "Body"}), "POST /Messages.json")], doc) == []


def test_a_reads_query_parameters_are_its_properties():
    doc = OpenApi(DOCUMENT)
    assert keys([Properties("voice", "ours", frozenset({"AreaCode", "Country", "Near"}), "GET /Numbers/{Country}.json")],
                doc) == ["GET /Numbers/{Country}.json: accepts 'Country', which the provider does not define",
                         "GET /Numbers/{Country}.json: accepts 'Near', which the provider does not define",
                         "GET /Numbers/{Country}.json: refuses 'PageSize', which the provider accepts"]


def test_a_field_we_send_or_read_must_not_be_deprecated():
    doc = OpenApi(DOCUMENT)
    sent = frozenset({"name", "plan"})
    assert keys([Properties("voice", "ours", sent, "Call", exact=False)], doc) == []
    assert keys([Properties("voice", "ours", sent, "Call", exact=False, used=True)], doc) == [
        "Call: uses 'plan', which the provider marks deprecated"]


def test_keywords_are_read_through_references_nullable_unions_and_arrays():
    doc = OpenApi(DOCUMENT)
    assert keys([Keyword("voice", "ours", 40, "Call", "customer.name", "maxLength"),
                 Keyword("voice", "ours", 40, "Call", "customers.name", "maxLength"),
                 Keyword("voice", "ours", ("off", "on"), "Call", "mode", "enum")], doc) == []
    assert keys([Keyword("voice", "ours", 200, "Call", "customer.name", "maxLength")], doc) == [
        "Call.customer.name maxLength: ours 200, the provider's 40"]
    assert keys([Keyword("voice", "ours", frozenset({"on"}), "Call", "mode", "enum", within=True)], doc) == []
    assert keys([Keyword("voice", "ours", frozenset({"on", "auto"}), "Call", "mode", "enum", within=True)], doc) == [
        "Call.mode enum: ours holds 'auto', which the provider's does not"]
    assert keys([Keyword("voice", "ours", 1, "Call", "nowhere", "maxLength"),
                 Properties("voice", "ours", frozenset(), "Missing")], doc) == [
        "Call.nowhere: not in the provider's document", "Missing: not in the provider's document"]


def test_a_path_through_a_union_reaches_every_option():
    doc = OpenApi(DOCUMENT)
    assert doc.keyword("Assistant", "voice.provider", "enum") == ["11labs", "azure"]
    assert doc.properties("Assistant", "voice") == {"provider", "voiceId"}
    assert doc.keyword("Assistant", "voice.voiceId", "maxLength") is None  # the options disagree: no one limit


def test_stripe_types_give_parameters_without_request_options_and_literal_values():
    stripe = StripeTypes()
    session = "checkout._session_create_params:SessionCreateParams"
    params = stripe.properties(session)
    assert {"mode", "line_items", "success_url"} <= params and "idempotency_key" not in params
    assert "trial_period_days" in stripe.properties(session, "subscription_data")
    assert {"price", "quantity"} <= stripe.properties(session, "line_items")
    assert set(stripe.keyword(session, "mode", "enum")) == {"payment", "setup", "subscription"}


def test_the_documented_stripe_deviations_are_exactly_the_differences():
    found = {d.key for d in compare(CLAIMS, {PAYMENTS: StripeTypes()})}
    assert found == set(DEVIATIONS.get(PAYMENTS, {}))


def test_the_check_fails_on_an_undocumented_or_stale_difference(monkeypatch):
    stripe = {PAYMENTS: StripeTypes()}
    claim = Properties(PAYMENTS, "a test claim", frozenset({"mode", "not_a_stripe_parameter"}),
                       "checkout._session_create_params:SessionCreateParams", exact=False)
    lines, failing = fidelity.report(stripe, compare((claim,), stripe))
    assert failing == 1 + len(DEVIATIONS.get(PAYMENTS, {})) and "UNDOCUMENTED" in lines[0]
    monkeypatch.setitem(DEVIATIONS, PAYMENTS, {"gone: a difference that no longer occurs": "why"})
    lines, failing = fidelity.report(stripe, [])
    assert failing == 1 and lines == ["  [STALE] payments: gone: a difference that no longer occurs: documented as "
                                      "deliberate but no longer differs; remove it"]


@pytest.mark.skipif(not os.environ.get("PROVIDER_SPECS"), reason="PROVIDER_SPECS names no folder of documents")
def test_no_undocumented_difference_with_the_published_documents():
    found, _ = fidelity.sources(Path(os.environ["PROVIDER_SPECS"]))
    lines, failing = fidelity.report(found, compare(CLAIMS, found))
    assert failing == 0, "\n".join(lines)


def test_the_limits_and_values_our_api_shares_with_a_provider_are_the_ones_the_fidelity_tool_compares():
    """The fidelity tool reads the provider packages only (it sits below the services); what our API shares with a
    provider is held to the provider package's value here."""
    assert evals_contract.CONTENT_MAX == vapi_evals.TURN_CONTENT_MAX
    assert set(messaging_domain.STATUSES) - {messaging_domain.PENDING, messaging_domain.UNKNOWN} == set(
        sms_webhooks.STATUSES)
    assert calls_contract.PROGRESS == voice_port.PROGRESS
