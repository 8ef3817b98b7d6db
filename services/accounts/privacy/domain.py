"""Erasure of a person: the rules, with no I/O.

A request names a person of one business by a phone number and/or an email address (`subject_of` normalizes them:
E.164, or the national format of the business's country; email lower-cased). The job runs the steps in STEPS order,
one per service holding personal data (core.registry.PERSONAL_DATA_SERVICES: sdr finds the leads, calls their calls,
messaging their texts and the suppression, webhooks the event history naming any of them), each given the ids the
steps before it found (`step_request`), each safe to repeat; a step's report is stored as soon as it answers, so a
job taken over after a crash resumes at `next_step`. A step that fails is retried after `retry_delay` (doubling
from the base, capped at MAX_RETRY_DELAY) until `gives_up`; then the job is failed.

The subject is kept only while the job is not over: once completed or failed only `masked` forms stay (the
suppression is the messaging service's hash of the number), and the public answer never shows the full subject.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core import registry
from core.contact import normalize_email, number_facts, parsed_e164
from core.errors import ServiceError
from core.masking import mask

QUEUED, RUNNING, COMPLETED, FAILED = "queued", "running", "completed", "failed"
STATUSES = (QUEUED, RUNNING, COMPLETED, FAILED)
ACTIVE = (QUEUED, RUNNING)
# The steps, in order: each service's ErasePerson (common.proto ErasureRequest/ErasureReport).
STEPS: tuple[str, ...] = registry.PERSONAL_DATA_SERVICES
# The ids a step's report names and the later steps' requests carry (ErasureReport and ErasureRequest fields).
FOUND_IDS = ("lead_ids", "call_ids", "message_ids")
DEFAULT_COUNTRY = "US"  # a business that forwards its calls nowhere (as provisioning's default country)
MAX_RETRY_DELAY = timedelta(hours=1)
EMAIL_MAX = 254
PHONE_MAX = 40


def _invalid(message: str) -> ServiceError:
    return ServiceError("validation_error", message)


def region_of(forward_to: str | None) -> str:
    """The country a national number of the business is read in: that of the phone its calls are forwarded to,
    else DEFAULT_COUNTRY."""
    if forward_to:
        country = number_facts(forward_to).country
        if country:
            return country
    return DEFAULT_COUNTRY


def normalize_phone(value: str, region: str) -> str:
    """A phone number in E.164, from E.164 (spaces and punctuation allowed) or the national format of `region`;
    validation_error saying what to send otherwise."""
    text = value.strip()
    how = f"send it in E.164 (e.g. +14155550123) or in the national format of the business's country ({region})"
    if not text or len(text) > PHONE_MAX:
        raise _invalid(f"phone must be a phone number: {how}")
    e164 = parsed_e164(text, region)
    if e164 is None:
        raise _invalid(f"phone {mask(text)} is not a valid phone number: {how}")
    return e164


@dataclass(frozen=True)
class Subject:
    """The person: phones in E.164 and emails in lower case (one of each at most today; lists as the services take
    them)."""

    phones: tuple[str, ...]
    emails: tuple[str, ...]

    @property
    def key(self) -> str:
        """One text per subject: an erasure of it at a time per business (schema.erasures.subject_key)."""
        return f"{','.join(self.phones)}|{','.join(self.emails)}"

    def masked(self) -> tuple[str | None, str | None]:
        """The phone and email as answered and kept once the job is over (core.masking: the phone's last 4 digits,
        the email's domain)."""
        return (mask(self.phones[0]) if self.phones else None, mask(self.emails[0]) if self.emails else None)


def subject_of(phone: str | None, email: str | None, region: str) -> Subject:
    """The subject of a request: at least one of phone and email, each valid (validation_error naming the field)."""
    if not (phone or "").strip() and not (email or "").strip():
        raise _invalid("give phone (E.164 or national format) or email, or both: the person to erase")
    phones = (normalize_phone(phone, region),) if phone and phone.strip() else ()
    emails: tuple[str, ...] = ()
    if email and email.strip():
        if len(email) > EMAIL_MAX:
            raise _invalid(f"email must be at most {EMAIL_MAX} characters")
        emails = (normalize_email(email, "email", _invalid),)
    return Subject(phones, emails)


def request_hash(business_id: str, subject: Subject, suppress: bool) -> str:
    """The request's fingerprint, for its Idempotency-Key: the same person and suppress, however written."""
    body = json.dumps([business_id, subject.phones, subject.emails, suppress], separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def next_step(reports: dict[str, Any]) -> str | None:
    """The first step whose report is not stored yet (None: every step is done)."""
    return next((step for step in STEPS if step not in reports), None)


def steps_done(reports: dict[str, Any]) -> list[str]:
    return [step for step in STEPS if step in reports]


@dataclass(frozen=True)
class StepRequest:
    """What a step is asked (common.proto ErasureRequest, built by the port)."""

    business_id: str
    erasure_id: str
    phones: tuple[str, ...]
    emails: tuple[str, ...]
    lead_ids: tuple[str, ...]
    call_ids: tuple[str, ...]
    message_ids: tuple[str, ...]
    suppress: bool


@dataclass(frozen=True)
class StepReport:
    """What a step answered (common.proto ErasureReport): its lines {what, action, count}, the ids it found, and
    whether a whole business's deletion has more to do (ask again)."""

    items: tuple[dict[str, Any], ...]
    lead_ids: tuple[str, ...] = ()
    call_ids: tuple[str, ...] = ()
    message_ids: tuple[str, ...] = ()
    more: bool = False


def step_request(erasure_id: str, business_id: str, phones: list[str], emails: list[str], suppress: bool,
                 found: dict[str, list[str]]) -> StepRequest:
    """The request of the next step: the subject and every id the steps before found."""
    ids = {name: tuple(found.get(name, ())) for name in FOUND_IDS}
    return StepRequest(business_id, erasure_id, tuple(phones), tuple(emails), ids["lead_ids"], ids["call_ids"],
                       ids["message_ids"], suppress)


def with_step(reports: dict[str, Any], found: dict[str, list[str]], step: str,
              report: StepReport) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The job's reports and found ids once `step` answered `report` (ids merged, in order, without repeats)."""
    merged = {name: list(dict.fromkeys([*found.get(name, ()), *getattr(report, name)])) for name in FOUND_IDS}
    lines = [{"what": i["what"], "action": i["action"], "count": int(i["count"])} for i in report.items]
    return {**reports, step: lines}, merged


def report_lines(reports: dict[str, Any]) -> list[dict[str, Any]]:
    """The public report: {service, what, action, count} per line, in step order (an unknown person: zero counts,
    as the services report them)."""
    return [{"service": step, **line} for step in STEPS for line in reports.get(step, ())]


def retry_delay(attempts: int, base_seconds: float) -> timedelta:
    """The wait before retry number `attempts` (1 for the first): doubling from `base_seconds`, capped at an hour."""
    return min(timedelta(seconds=base_seconds * 2 ** min(max(0, attempts - 1), 30)), MAX_RETRY_DELAY)


def failure(exc: Exception) -> str:
    """What a failed step or page is recorded as: a service's answer by its code and message, anything else by its
    type and text."""
    return f"{exc.code}: {exc.message}" if isinstance(exc, ServiceError) else f"{type(exc).__name__}: {exc}"


def gives_up(attempts: int, max_attempts: int) -> bool:
    """Whether a job whose step failed `attempts` times in all is failed rather than retried."""
    return attempts >= max_attempts
