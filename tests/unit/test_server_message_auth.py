"""The provider's server messages are accepted only with the webhook credential we registered: its HMAC plan
or its bearer plan, as the provider applies them (the simulator's signer), recent, and nothing else."""
import json

import pytest

from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.simulator.playback import sign

NOW = 1_790_000_000.0
SECRET = "s3cret-for-tests"


def body_at(seconds: float) -> bytes:
    return json.dumps({"message": {"type": "status-update", "status": "ringing", "timestamp": int(seconds * 1000),
                                   "call": {"id": "c"}}}).encode()


@pytest.mark.parametrize("kind", ["hmac", "bearer"])
def test_a_message_authenticated_the_providers_way_is_accepted(kind):
    auth = WebhookAuth(kind, SECRET)
    body = body_at(NOW)
    assert auth.refusal(body, sign(auth.plan(), body, NOW), NOW) is None


@pytest.mark.parametrize("milliseconds", [False, True])
def test_an_hmac_timestamp_in_seconds_or_milliseconds_is_accepted_when_recent(milliseconds):
    """The provider does not document x-timestamp's unit: 10 digits are seconds, 13 milliseconds."""
    auth = WebhookAuth("hmac", SECRET)
    body = body_at(NOW)
    headers = sign(auth.plan(), body, NOW, milliseconds)
    assert len(headers["x-timestamp"]) == (13 if milliseconds else 10)
    assert auth.refusal(body, headers, NOW) is None
    assert auth.refusal(body, headers, NOW + 299) is None
    assert "away from now" in auth.refusal(body, headers, NOW + 301)
    assert "away from now" in auth.refusal(body, headers, NOW - 301)


@pytest.mark.parametrize("stamp", ["+1790000000", " 1790000000", "1_790_000_000", "1790000000.5", "-1"])
def test_an_hmac_timestamp_that_is_not_digits_is_refused(stamp):
    auth = WebhookAuth("hmac", SECRET)
    body = body_at(NOW)
    assert "seconds or milliseconds" in auth.refusal(body, {**sign(auth.plan(), body, NOW), "x-timestamp": stamp},
                                                     NOW)


@pytest.mark.parametrize("kind", ["hmac", "bearer"])
def test_another_secret_an_old_message_or_the_other_plan_is_refused(kind):
    auth = WebhookAuth(kind, SECRET)
    other_kind = "bearer" if kind == "hmac" else "hmac"
    body = body_at(NOW)
    assert auth.refusal(body, sign(WebhookAuth(kind, "another").plan(), body, NOW), NOW)
    assert auth.refusal(body, sign(WebhookAuth(other_kind, SECRET).plan(), body, NOW), NOW)
    assert auth.refusal(body, {}, NOW)
    old = body_at(NOW - 600)
    assert "away from now" in auth.refusal(old, sign(auth.plan(), old, NOW - 600), NOW)


def test_a_bearer_message_is_dated_by_its_own_timestamp():
    auth = WebhookAuth("bearer", SECRET)
    undated = json.dumps({"message": {"type": "status-update", "call": {"id": "c"}}}).encode()
    assert "message.timestamp" in auth.refusal(undated, sign(auth.plan(), undated, NOW), NOW)
    assert "bearer token" in auth.refusal(body_at(NOW), {"Authorization": "Basic abc"}, NOW)


def test_the_plans_are_the_providers_and_an_unknown_one_does_not_start():
    assert WebhookAuth("bearer", SECRET).plan() == {"type": "bearer", "token": SECRET, "headerName": "Authorization",
                                                    "bearerPrefixEnabled": True}
    assert WebhookAuth("hmac", SECRET).plan()["payloadFormat"] == "{timestamp}.{body}"
    assert WebhookAuth("hmac", SECRET).credential_name() != WebhookAuth("bearer", SECRET).credential_name()
    with pytest.raises(ValueError, match="VOICE_WEBHOOK_AUTH"):
        WebhookAuth("basic", SECRET)


@pytest.mark.parametrize("value", ["caf\u00e9", "\udce9\udca9", "\u0661\u0662\u0663"])  # UTF-8, raw bytes, Arabic digits
def test_header_values_that_are_not_ascii_are_refused_not_raised(value):
    body = body_at(NOW)
    signed = sign(WebhookAuth("hmac", SECRET).plan(), body, NOW)
    hmac_auth = WebhookAuth("hmac", SECRET)
    assert "must be ASCII" in hmac_auth.refusal(body, {**signed, "x-signature": value}, NOW)
    assert "must be ASCII" in hmac_auth.refusal(body, {**signed, "x-timestamp": value}, NOW)
    assert "not ours" in WebhookAuth("bearer", SECRET).refusal(body, {"Authorization": f"Bearer {value}"}, NOW)
