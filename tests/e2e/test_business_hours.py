"""The business's own calling hours (its saved SDR config's business_hours_start/end) bind every touch the platform
checks: a call of the API with compliance enforce, a communication run's preview and its executed calls and texts.
A business that saved no config is held to the law alone."""
from datetime import UTC, datetime

import pytest

from core.compliance import decision as compliance
from core.compliance import zones
from core.compliance.rules import CALL
from tests.calling import provider_calls_to
from tests.compliance import ZONED, decisions, enforced, suffixes
from tests.runs import RUNS, create, events, jobs_of, run_of, touch
from tests.texting import opt_in


def callee_before_hours() -> tuple[str, tuple[int, int], datetime]:
    """A fresh callee open to calls now, the business hours that open an hour later in their zone, and that
    instant: a touch now must wait for it."""
    now = datetime.now(UTC)
    suffix = f"{next(suffixes):04d}"
    for pattern in ZONED:
        phone = pattern.format(suffix)
        [zone] = zones.number_zones(phone)
        local = now.astimezone(zones.zone(zone))
        if compliance.open_to(CALL, phone, now) and local.hour <= 17:
            opens = local.replace(hour=local.hour + 1, minute=0, second=0, microsecond=0)
            return phone, (local.hour + 1, local.hour + 3), opens.astimezone(UTC)
    pytest.fail("no zone fits the hour")


async def save_hours(api, account, business_hours: tuple[int, int]) -> None:
    start, end = business_hours
    status, config, _ = await api.request("PUT", "/api/sdr/config", key=account["key"], json={
        "businessId": account["business_id"], "business_hours_start": start, "business_hours_end": end})
    assert status == 200 and config["saved"], config


async def test_an_enforced_call_outside_the_business_hours_waits_for_them(
        api, account, voice, calling_agent):
    key = account["key"]
    phone, business_hours, opens = callee_before_hours()
    await opt_in(api, key, phone)
    status, call, _ = await enforced(api, key, calling_agent, phone)  # no config saved: the law alone
    assert status == 201, call

    phone, business_hours, opens = callee_before_hours()
    await opt_in(api, key, phone)
    await save_hours(api, account, business_hours)
    status, body, _ = await enforced(api, key, calling_agent, phone)
    assert status == 400 and body["error"]["code"] == "tcpa_violation", body
    assert await provider_calls_to(voice, phone) == []
    [deferred] = await decisions(api, key, phone=phone)
    assert (deferred["outcome"], deferred["rule"], deferred["actor"]) == ("defer", "business_hours", "enforced_call")
    assert datetime.fromisoformat(deferred["not_before"]) == opens


async def test_a_runs_preview_its_creation_and_its_execution_keep_to_the_business_hours(
        api, account, calling_agent):
    key = account["key"]
    phone, business_hours, opens = callee_before_hours()
    await opt_in(api, key, phone)
    body = run_of(account, calling_agent, touch("call", phone),
                  touch("text", phone, channel="sms", context={"body": "Your quote is ready"}))
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200 and {p["outcome"] for p in plan["planned"]} == {"allow"}, plan
    # Created allowed (no hours saved), due in a few seconds: the hours saved meanwhile defer it when it runs.
    later = run_of(account, calling_agent, touch("call", phone, seconds=6),
                   touch("text", phone, channel="sms", seconds=6, context={"body": "Your quote is ready"}))
    status, run, _ = await create(api, key, later)
    assert status == 201 and run["jobs"]["pending"] == 2, run

    await save_hours(api, account, business_hours)
    await events(api, key, "communication.touch_deferred", run["id"], expected=2)
    jobs = await jobs_of(api, key, run["id"])
    assert {(j["channel"], j["status"], j["rule"]) for j in jobs} == {
        ("call", "deferred", "business_hours"), ("sms", "deferred", "business_hours")}, jobs
    assert {datetime.fromisoformat(j["planned_at"]) for j in jobs} == {opens}
    logged = await decisions(api, key, phone=phone)
    assert {(d["channel"], d["actor"], d["rule"]) for d in logged} == {
        ("call", "run", "business_hours"), ("sms", "run", "business_hours")}, logged

    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200, plan
    for planned in plan["planned"]:
        assert (planned["outcome"], planned["rule"]) == ("defer", "business_hours"), planned
        assert datetime.fromisoformat(planned["planned_at"]) == opens
    # Created with the hours saved: its jobs are deferred to their opening from the start, as the preview says.
    status, run, _ = await create(api, key, body)
    assert status == 201 and run["jobs"]["deferred"] == 2, run
    jobs = await jobs_of(api, key, run["id"])
    assert {(j["status"], j["rule"], datetime.fromisoformat(j["planned_at"])) for j in jobs} == {
        ("deferred", "business_hours", opens)}, jobs
