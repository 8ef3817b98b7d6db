"""The sales pipeline's scheduled runner through POST /api/sdr/runner: the server secret alone opens it, one run per
business and two-hour window however many runners race, a runner that died is taken over without touching a lead
twice, and each run leaves a briefing (stored, e-mailed to the owner, dispatcher.briefing_created)."""
import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from deploy import sdr_runner_cron
from services.sdr.pipeline_runner import window_of
from tests.calling import provider_calls_to
from tests.compliance import callee
from tests.leads import ACTIVITY, new_lead, put_config
from tests.texting import opt_in
from tests.waiting import wait_until

RUNNER = "/api/sdr/runner"


def secret(stack) -> str:
    return stack.env()["SDR_RUNNER_SECRET"]


async def trigger(api, stack, business_id: str):
    return await api.request("POST", RUNNER, json={"businessId": business_id},
                             headers={"Authorization": f"Bearer {secret(stack)}"})


async def enabled_with_a_fresh_lead(api, key, business: str) -> tuple[dict, str]:
    await put_config(api, key, business, enabled=True, auto_call=True, business_hours_start=0, business_hours_end=23)
    phone = callee(open_now=True)
    await opt_in(api, key, phone)
    return await new_lead(api, key, business, name="Fresh Caller", phone=phone), phone


async def test_only_the_server_secret_opens_the_runner(api, stack, account):
    business = account["business_id"]
    for kwargs, expected in (({"key": account["key"]}, 403), ({}, 401),
                             ({"headers": {"Authorization": "Bearer not-the-secret"}}, 401)):
        status, error, _ = await api.request("POST", RUNNER, json={"businessId": business}, **kwargs)
        assert status == expected, (kwargs, error)
    status, error, _ = await account["dashboard"].request("POST", RUNNER, json={"businessId": business})
    assert status == 403 and "dashboard session" in error["error"]["message"], error
    status, done, _ = await trigger(api, stack, business)
    assert status == 200 and done["runs"] == [], done  # SDR is off for the business: nothing to run


async def test_a_window_runs_once_and_briefs_the_owner(api, stack, account, voice, calling_agent):
    key, business = account["key"], account["business_id"]
    lead, phone = await enabled_with_a_fresh_lead(api, key, business)
    nobody = await new_lead(api, key, business, name="No Contact")  # escalated to the owner
    replies = await asyncio.gather(*(trigger(api, stack, business) for _ in range(3)))
    runs = [r for status, reply, _ in replies for r in reply["runs"]]
    assert all(status == 200 for status, _, _ in replies), replies
    ran = [r for r in runs if r["status"] == "ran"]
    assert len(ran) == 1 and {r["status"] for r in runs} <= {"ran", "taken"}, runs
    assert ran[0]["summary"]["calls_queued"] == 1 and ran[0]["summary"]["escalated"] == 1, ran
    assert datetime.fromisoformat(replies[0][1]["window_start"]) == window_of(datetime.now(UTC))
    assert len(await provider_calls_to(voice, phone)) == 1
    status, again, _ = await trigger(api, stack, business)
    assert again["runs"] == []  # the window has run

    async def briefings() -> list[dict]:
        status, page, _ = await api.request("GET", "/api/v1/events", key=key,
                                            params={"type": "dispatcher.briefing_created"})
        return page["events"]
    [event] = await wait_until(briefings, "the dispatcher.briefing_created event")
    data = event["data"]
    assert data["briefing_id"] == ran[0]["briefing_id"] and data["calls_queued"] == 1 and data["email_id"]
    assert [(n["lead_id"], n["name"]) for n in data["needs_owner"]] == [(nobody["id"], "No Contact")]
    status, briefing, _ = await api.request("GET", "/api/v1/emails", key=key, params={"id": data["email_id"]})
    assert status == 200, briefing
    assert briefing["to"] == account["email"] and "No Contact" in briefing["body"]
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business,
                                                                          "leadId": lead["id"]})
    assert [(a["action"], a["origin"]) for a in log["activity"]] == [("call", "runner")]


async def test_a_runner_that_died_is_taken_over_without_touching_a_lead_twice(
        api, stack, account, voice, db, calling_agent):
    key, business = account["key"], account["business_id"]
    worked, worked_phone = await enabled_with_a_fresh_lead(api, key, business)
    left = await new_lead(api, key, business, name="Left", phone=callee(open_now=True))
    await opt_in(api, key, left["phone"])
    # A runner claimed this window, acted on the first lead, and died: its lease is over.
    window_id, now = uuid.uuid4(), datetime.now(UTC)
    await db.execute("INSERT INTO sdr.runner_windows (id, business_id, window_start, status, lease_token, "
                     "lease_until, started_at) VALUES ($1, $2, $3, 'running', 'dead', $4, $5)", window_id,
                     uuid.UUID(business), window_of(now), now - timedelta(seconds=1), now - timedelta(minutes=11))
    await db.execute("INSERT INTO sdr.pipeline_activity (id, business_id, lead_id, action, status, detail, origin, "
                     "window_id, created_at, updated_at) VALUES ($1, $2, $3, 'skip', 'done', 'worked before the "
                     "crash', 'runner', $4, $5, $5)", uuid.uuid4(), uuid.UUID(business), uuid.UUID(worked["id"]),
                     window_id, now)
    status, done, _ = await trigger(api, stack, business)
    assert status == 200 and [r["status"] for r in done["runs"]] == ["ran"], done
    assert await provider_calls_to(voice, worked_phone) == []  # already worked in this window
    assert len(await provider_calls_to(voice, left["phone"])) == 1
    assert await db.fetchval("SELECT attempts FROM sdr.runner_windows WHERE id = $1", window_id) == 2


async def test_the_cronjob_runs_the_window_with_the_server_secret(api, stack, account, monkeypatch, capsys):
    """deploy.sdr_runner_cron, as the CronJob runs it, against the gateway: the server secret runs the business's
    window; a wrong secret is the gateway's 401 and a failed Job."""
    await put_config(api, account["key"], account["business_id"], enabled=True, auto_call=True,
                     business_hours_start=0, business_hours_end=23)
    await new_lead(api, account["key"], account["business_id"], name="No Contact")  # escalated: no touch placed
    server_secret = secret(stack)  # read before the environment's SDR_RUNNER_SECRET changes (the stack reads it)
    monkeypatch.setenv("GATEWAY_URL", stack.base_url)
    monkeypatch.setenv("SDR_RUNNER_BUSINESS_ID", account["business_id"])
    monkeypatch.setenv("SDR_RUNNER_SECRET", "not-the-secret")
    assert await asyncio.to_thread(sdr_runner_cron.main) == 1
    assert "401" in capsys.readouterr().err
    monkeypatch.setenv("SDR_RUNNER_SECRET", server_secret)
    assert await asyncio.to_thread(sdr_runner_cron.main) == 0
    assert capsys.readouterr().out.strip().endswith("1 run(s) ran 1")
    assert await asyncio.to_thread(sdr_runner_cron.main) == 0  # the window has run: nothing more
    assert capsys.readouterr().out.strip().endswith("0 run(s)")
