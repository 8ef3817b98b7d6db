"""core.masking and core.logs: what a log line may hold, and its JSON shape."""
from __future__ import annotations

import io
import json
import logging

import pytest
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from core import logs, masking, tenant


@pytest.mark.parametrize(("text", "masked"), [
    ("calling +14155550123 now", "calling +*******0123 now"),
    ("to=+44 20 7946 0958.", "to=+** ** **** 0958."),
    ("from +1 (415) 555-0123", "from +* (***) ***-0123"),
    ("To=%2B14155550123&Body=hi", "To=%2B*******0123&Body=hi"),
    ("call (415) 555-0123 or 415-555-0124 or 415.555.0125", "call (***) ***-0123 or ***-***-0124 or ***.***.0125"),
    ("key svc_live_AbC-123_xyz used", "key svc_live_*** used"),
    ("secret whsec_q1W2e3R4t5Y6", "secret whsec_***"),
    ("tool secret tsec_q1W2-e3R4t5Y6", "tool secret tsec_***"),
    ("stripe sk_test_51Habc and rk_live_9zz", "stripe sk_test_*** and rk_live_***"),
    ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
    ("sent Bearer abc.def-ghi", "sent Bearer ***"),
    ("caller eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl done", "caller *** done"),
    ("/dashboard/login?token=Zx8_k-3PqL&next=/", "/dashboard/login?token=***&next=/"),
    ('{"session_token": "Zx8_k-3PqL", "password": "hunter2"}', '{"session_token": "***", "password": "***"}'),
    ("mailed dana.reyes+quotes@example.com at once", "mailed ***@example.com at once"),
    ("550 <Dana@Mail.Example.co.uk>: recipient rejected", "550 <***@Mail.Example.co.uk>: recipient rejected"),
    ("GET /api/v1/leads?email=dana%40example.com&limit=5", "GET /api/v1/leads?email=***%40example.com&limit=5"),
    ('{"to": "owner-1a2b@example.com"}', '{"to": "***@example.com"}'),
    ("nats://sb:hunter2@nats.example.com:4222", "nats://sb:***@nats.example.com:4222"),
])
def test_masks_phone_numbers_email_addresses_and_secrets(text, masked):
    assert masking.mask(text) == masked


@pytest.mark.parametrize("text", [
    "job 3f2b6c1e-9a7d-4c2b-8e1f-0a9b8c7d6e5f at 2026-11-27T17:35:56+00:00 on port 50051",
    "listening on http://127.0.0.1:8080 after 1732728956 s; 14155550123 is a bare number",
    "consumer webhooks-dispatcher: a batch of 250 failed",
])
def test_leaves_ids_times_and_ports_alone(text):
    assert masking.mask(text) == text


def _capture(level: str = "INFO", log_format: str = "json") -> tuple[logging.Logger, io.StringIO]:
    """A logger writing through the handler core.logs configures (its filters and formatter) into a buffer."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.addFilter(logs.Masking())
    handler.addFilter(logs.ContextFields("accounts"))
    handler.setFormatter(logs.formatter(log_format))
    logger = logging.getLogger(f"test.logs.{log_format}")
    logger.handlers[:] = [handler]
    logger.propagate, logger.level = False, logging.getLevelName(level)
    return logger, out


def test_a_json_line_has_the_fields_and_nothing_unmasked():
    logger, out = _capture()
    span = SpanContext(trace_id=0x0AF7651916CD43DD8448EB211C80319C, span_id=0x00F067AA0BA902B7, is_remote=True,
                       trace_flags=TraceFlags(1))
    with trace.use_span(NonRecordingSpan(span)), tenant.acting_as(tenant.acting_for(
            "0b5ad0c4-2f43-4b52-9f6e-3c3b1bb7a5d1", "test")):
        logger.warning("texted %s with key %s", "+14155550123", "svc_live_secretpart",
                       extra={"to": "+14155550123", "headers": {"Authorization": "Bearer tok-en"}, "attempt": 2,
                              "reply_to": "Dana.Reyes@example.com"})
    line = json.loads(out.getvalue())
    assert line["level"] == "WARNING" and line["logger"] == "test.logs.json" and line["service"] == "accounts"
    assert line["message"] == "texted +*******0123 with key svc_live_***"
    assert line["timestamp"].startswith("20") and line["timestamp"].endswith("+00:00")
    assert line["trace_id"] == "0af7651916cd43dd8448eb211c80319c" and line["span_id"] == "00f067aa0ba902b7"
    assert line["business_id"] == "0b5ad0c4-2f43-4b52-9f6e-3c3b1bb7a5d1"
    assert line["to"] == "+*******0123" and line["headers"] == {"Authorization": "Bearer ***"} and line["attempt"] == 2
    assert line["reply_to"] == "***@example.com"


def test_without_a_span_or_tenant_the_line_says_neither_and_a_traceback_is_masked():
    logger, out = _capture()
    try:
        raise ValueError("no route to +14155550123 with whsec_abcdef")
    except ValueError:
        logger.exception("delivery failed")
    line = json.loads(out.getvalue())
    assert "trace_id" not in line and "business_id" not in line
    assert "Traceback" in line["exc_info"] and "+*******0123" in line["exc_info"] and "whsec_***" in line["exc_info"]
    assert "14155550123" not in out.getvalue() and "abcdef" not in out.getvalue()


def test_text_format_is_one_plain_masked_line():
    logger, out = _capture(log_format="text")
    logger.info("call to %s", "+14155550123")
    assert out.getvalue().rstrip().endswith("INFO test.logs.text: call to +*******0123")


def test_log_format_is_checked(monkeypatch):
    monkeypatch.setenv("LOG_FORMAT", "xml")
    with pytest.raises(SystemExit, match="LOG_FORMAT"):
        logs.log_format()
    monkeypatch.delenv("LOG_FORMAT")
    assert logs.log_format() == "json"
