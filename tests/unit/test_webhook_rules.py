"""Webhook rules: addresses, URLs, the retry schedule, signatures and sealed secrets."""
import random
from datetime import timedelta

import pytest
from stripe import WebhookSignature

from contracts import webhooks
from core import signing
from core.bus import PermanentError
from core.errors import ServiceError
from core.outbound import address_refusal
from core.sealing import SecretBox
from core.settings import derive_sealing_key
from services.webhooks import domain
from services.webhooks.delivery import Sender
from services.webhooks.dispatcher import envelope


@pytest.mark.parametrize("address, loopback_ok, refused", [
    ("93.184.216.34", False, None), ("2606:2800:220:1::1", False, None),
    ("127.0.0.1", True, None), ("127.0.0.1", False, "loopback"), ("::1", False, "loopback"),
    ("10.1.2.3", True, "private"), ("172.16.0.1", True, "private"), ("192.168.0.1", True, "private"),
    ("169.254.169.254", True, "metadata"), ("fd00:ec2::254", True, "metadata"), ("169.254.10.1", True, "link-local"),
    ("::ffff:10.0.0.1", True, "private"), ("100.64.0.1", True, "private"), ("0.0.0.0", True, "private"),
])
def test_which_addresses_may_receive_webhooks(address, loopback_ok, refused):
    why = address_refusal(address, loopback_ok)
    assert (why is None) if refused is None else (refused in why)


def test_urls():
    assert domain.check_url("https://hooks.example.com/x") == ("hooks.example.com", 443)
    assert domain.check_url("http://example.com:8080/x") == ("example.com", 8080)
    for bad in ("ftp://example.com", "https://", "https://u:p@example.com/", "https://example.com:99999/",
                "http://[7]/x", "http://bücher.example/x"):  # a bracketed non-IP host once raised ValueError
        with pytest.raises(ServiceError):
            domain.check_url(bad)


def test_retry_schedule_spans_about_a_day_then_stops():
    rng = random.Random(1)
    delays = [domain.next_delay(n, rng=rng) for n in range(1, domain.MAX_ATTEMPTS)]
    assert all(d is not None for d in delays) and domain.next_delay(domain.MAX_ATTEMPTS) is None
    total = sum(delays, timedelta())
    assert timedelta(hours=18) < total < timedelta(hours=30)
    assert delays[0] < timedelta(seconds=13) and total > webhooks.DISABLE_AFTER


def test_signature_header_verifies_with_every_secret_in_force():
    body = b'{"event_id":"e","event":"lead.created"}'
    header = signing.signature_header(["whsec_new", "whsec_old"], 1_800_000_000, body)
    assert header.startswith("t=1800000000,v1=") and header.count("v1=") == 2
    for secret in ("whsec_new", "whsec_old"):
        assert WebhookSignature.verify_header(body, header, secret)


# Sealed by the webhooks service when it derived its key from SWITCHBOARD_SECRET_KEY="server-secret" itself.
SEALED_BEFORE = ("gAAAAABrBoFUd-KQu0xkCF5i65ypEAD4OaP40d0yX6SycEts1q5bbbPofNyYKNzqIsmxjD6uh4PIf0oHqoinHZwEBtArzPLAI"
                 "RpzOUMQG2u5or7AGZ5QSbE=")


def test_secrets_are_sealed_and_checked():
    box = SecretBox(derive_sealing_key("server-secret"))
    sealed = box.seal("whsec_abc")
    assert "whsec_abc" not in sealed and box.open(sealed) == "whsec_abc"
    assert box.open(SEALED_BEFORE) == "whsec_sealed_before"  # the derived WEBHOOK_SECRETS_KEY opens older seals
    with pytest.raises(RuntimeError):
        SecretBox(derive_sealing_key("another-secret")).open(sealed)
    assert domain.mask("whsec_0123456789") == "whsec_...6789"
    assert domain.check_events(["lead.created", "lead.created"]) == ["lead.created"]


async def test_the_sender_refuses_private_addresses_without_connecting():
    sender = Sender(allow_loopback=False)
    try:
        for url in ("http://10.0.0.5/hooks", "http://127.0.0.1:9/hooks", "http://localhost:9/hooks"):
            outcome = await sender.post(url, b"{}", {})
            assert outcome.status_code is None and outcome.error.startswith("refused"), (url, outcome)
    finally:
        await sender.close()


def test_a_bus_message_becomes_the_event_to_fan_out_or_is_refused_for_good():
    event_id, business_id = "8E1F0C9A-1B2C-4D5E-8F90-ABCDEF012345", "0A1B2C3D-4E5F-4A6B-8C7D-9E0F1A2B3C4D"
    message = {"event_id": event_id, "type": "lead.created", "occurred_at": "2026-11-23T10:00:00Z",
               "business_id": business_id, "data": {"id": "x"}}
    event = envelope(message)
    assert (event.event_id, event.business_id) == (event_id.lower(), business_id.lower())  # as PostgreSQL writes them
    assert envelope({**message, "business_id": None}).business_id is None
    for broken in ({**message, "business_id": "acme"}, {**message, "event_id": "1"}, {"type": "lead.created"}):
        with pytest.raises(PermanentError):
            envelope(broken)
