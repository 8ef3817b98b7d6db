"""Logging setup: one line per record to stderr (the launcher sends it to a file), as JSON by default.

LOG_FORMAT=json (the default, everywhere): one JSON object per line with `timestamp` (UTC, ISO 8601), `level`,
`logger`, `message`, `service` (the process's kind), and when known `trace_id` and `span_id` (the current
OpenTelemetry span context's, when valid) and `business_id` (the business the current caller acts for,
core.tenant), plus any `extra=` fields and `exc_info` for a traceback. LOG_FORMAT=text: the same as plain lines
(`timestamp level logger: message`), for a developer reading them.

Every record passes `Masking` first: phone numbers keep only their last 4 digits, and API keys, bearer tokens,
webhook secrets, Stripe keys, signed tokens (JWTs) and any `token=`/`secret=`/`password=` value are replaced, in the
message, its arguments, extra fields and tracebacks alike (core.masking).
"""
from __future__ import annotations

import logging
import os
import sys
from types import TracebackType

from opentelemetry import trace
from pythonjsonlogger.json import JsonFormatter

from core import masking, tenant

FORMATS = ("json", "text")
# A LogRecord's own attributes: anything else on a record came as `extra=` (or from ContextFields).
_RECORD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class ContextFields(logging.Filter):
    """Adds `service`, and `trace_id`/`span_id`/`business_id` when known, to every record."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def filter(self, record: logging.LogRecord) -> bool:
        record.service = self.service
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            record.trace_id = format(span.trace_id, "032x")
            record.span_id = format(span.span_id, "016x")
        who = tenant.current()
        business = who.bound_business_id or (who.business_ids[0] if len(who.business_ids) == 1 else "")
        if business:
            record.business_id = business
        return True


class Masking(logging.Filter):
    """Masks secrets and phone numbers in a record before any handler formats it (core.masking)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, dict):
            record.msg = masking.mask_value(record.msg)
        else:
            record.msg, record.args = masking.mask(record.getMessage()), None
        for name, value in vars(record).items():
            if name not in _RECORD_ATTRIBUTES and not isinstance(value, int | float | bool):
                setattr(record, name, masking.mask_value(value))
        if record.exc_info:  # the traceback as text, masked (both formatters print exc_text when exc_info is unset)
            record.exc_text = masking.mask(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        if record.stack_info:
            record.stack_info = masking.mask(record.stack_info)
        return True


def formatter(log_format: str) -> logging.Formatter:
    if log_format == "text":
        return logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    return JsonFormatter(["levelname", "name", "message"], rename_fields={"levelname": "level", "name": "logger"},
                         timestamp=True, json_ensure_ascii=False)


def log_format() -> str:
    value = os.environ.get("LOG_FORMAT", "json").strip().lower()
    if value not in FORMATS:
        raise SystemExit(f"LOG_FORMAT must be one of {', '.join(FORMATS)} (got {value!r})")
    return value


def configure(level: str = "INFO", service: str = "switchboard") -> None:
    """Log records of `level` and above from every logger, masked, to stderr in LOG_FORMAT."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(Masking())
    handler.addFilter(ContextFields(service))
    handler.setFormatter(formatter(log_format()))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    # warnings and a crash's traceback as records too, so every line of the file is in one format, masked
    logging.captureWarnings(True)
    sys.excepthook = _log_uncaught
    logging.getLogger("nats").setLevel(logging.WARNING)
    logging.getLogger("sqlalchemy").setLevel(logging.WARNING)
    # the x402 package's HTTP client and signer log a line per request and per signature
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("x402").setLevel(logging.WARNING)
    logging.getLogger("stripe").setLevel(logging.WARNING)


def _log_uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    logging.getLogger("uncaught").critical("the process ends on an uncaught exception", exc_info=(kind, exc, tb))


def configure_simulator_logs(service: str) -> None:
    """A local simulator's logging: LOG_LEVEL, without aiohttp's line per request."""
    configure(os.environ.get("LOG_LEVEL", "INFO"), service)
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
