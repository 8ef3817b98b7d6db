"""Outbound compliance for the tests: fresh callees whose calling window is open (or closed) right now, calls
placed with compliance enforced, and the decision log."""
import itertools
from datetime import UTC, datetime

import pytest

from core.compliance import decision as compliance
from core.compliance.rules import CALL, hours
from services.sdr.pipeline_domain import Config
from tests.calling import place

# Callees in one zone each, in places without a state row stricter than the federal window for calls (New York,
# Colorado, London, Berlin, Johannesburg, Tokyo, Sydney): at any hour some are open and some are closed.
ZONED = ("+1212555{}", "+1303555{}", "+44207946{}", "+4930123{}", "+2721123{}", "+8131234{}", "+6129374{}")
suffixes = itertools.count(7000)  # a fresh callee's last four digits
# The business hours of a business with no SDR config saved, in the callee's time.
DEFAULT_HOURS = hours(Config.business_hours_start, Config.business_hours_end)


def callee(open_now: bool = True) -> str:
    """A fresh callee whose calling window is (or is not) open right now; an open one also within the default
    business hours of a business with no SDR config saved (9-17 in the callee's time), so the pipeline may touch
    them too."""
    now = datetime.now(UTC)
    suffix = f"{next(suffixes):04d}"
    for pattern in ZONED:
        candidate = pattern.format(suffix)
        if open_now and compliance.open_to(CALL, candidate, now, DEFAULT_HOURS):
            return candidate
        if not open_now and not compliance.open_to(CALL, candidate, now):
            return candidate
    pytest.fail("no zone fits the hour")


def answering_callee() -> str:
    return callee(open_now=True)


async def enforced(api, key, agent, to, **extra):
    """A call of `agent` to `to` placed with compliance enforce."""
    return await place(api, key, agent_id=agent["id"], to=to, compliance="enforce", **extra)


async def decisions(api, key, **params) -> list[dict]:
    """The compliance decision log, filtered by `params`."""
    status, page, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params=params)
    assert status == 200, page
    return page["decisions"]
