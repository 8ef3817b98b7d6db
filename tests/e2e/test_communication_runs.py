"""Communication runs end to end through the gateway, the scheduler worker and the simulators: validation with every
problem at once (a report, not a refusal), the preview's plan, idempotent creation, jobs created with the preview's
decision (a night touch planned for the callee's morning), execution on time through the compliance decision with
events carrying external_ref and touch_id, retries on no-answer, pause/resume/cancel, a STOP between creation and
execution, and another account's key."""
import uuid
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.compliance import decision as compliance
from core.compliance.rules import CALL
from tests.api import new_account
from tests.calling import agent_with_number, provider_calls_to
from tests.compliance import ZONED, answering_callee, callee, suffixes
from tests.runs import RUNS, create, events, jobs_of, run_of, settled, touch
from tests.texting import opt_in


def unanswered_callee() -> str:
    """A callee open now whose number the voice simulator never answers (last four digits 0001)."""
    now = datetime.now(UTC)
    for pattern in ZONED:
        candidate = pattern.format("0001")
        if compliance.open_to(CALL, candidate, now):
            return candidate
    pytest.fail("no zone fits the hour")


async def test_validate_reports_every_problem_with_its_touch(api, account, calling_agent):
    key = account["key"]
    good = touch("ok-1", answering_callee())
    body = run_of(account, calling_agent, good,
                  touch("bad-phone", "555-0100"),
                  {**touch("bad-zone", "+12125550100"), "target": {"phone": "+12125550100", "timezone": "Mars/Base"}},
                  touch("bad-channel", "+12125550101", channel="fax"),
                  {**touch("bad-time", "+12125550102"), "scheduled_at": "tomorrow at nine"},
                  {**touch("naive-time", "+12125550103"), "scheduled_at": "2026-12-01T09:00:00"},
                  touch("far", "+12125550104", seconds=200 * 86400),
                  touch("ok-1", "+12125550105"),
                  touch("text", "+12125550106", channel="sms"))
    status, report, _ = await api.request("POST", f"{RUNS}/validate", key=key, json=body)
    assert status == 200, report
    assert report["valid"] is False and report["touches"] == 9
    where = {(p["index"], p["touch_id"], p["field"]) for p in report["problems"]}
    assert where == {(1, "bad-phone", "target.phone"), (2, "bad-zone", "target.timezone"),
                     (3, "bad-channel", "channel"), (4, "bad-time", "scheduled_at"),
                     (5, "naive-time", "scheduled_at"), (6, "far", "scheduled_at"), (7, "ok-1", "touch_id"),
                     (8, "text", "context.body")}, report
    assert any("Mars/Base" in p["message"] for p in report["problems"])
    # Validate reports, it does not refuse: a field a run does not have and a touch that is no object are problems
    # of a 200, as its published body (any object with a touches array) says.
    status, report, _ = await api.request("POST", f"{RUNS}/validate", key=key, json={
        **run_of(account, calling_agent, good, "not a touch"), "priority": "high"})
    assert status == 200 and report["valid"] is False, report
    assert {(p["index"], p["field"]) for p in report["problems"]} == {(None, "priority"), (1, "touch")}, report
    status, error, _ = await api.request("POST", f"{RUNS}/validate", key=key, json={"external_ref": "x"})
    assert status == 400 and error["error"]["code"] == "bad_request" and "touches" in error["error"]["message"]
    status, report, _ = await api.request("POST", f"{RUNS}/validate", key=key,
                                          json=run_of(account, calling_agent, good))
    assert (status, report) == (200, {"valid": True, "touches": 1, "problems": []})
    # The same problems refuse a preview and a creation, naming the first and pointing at validate.
    status, error, _ = await create(api, key, body)
    assert status == 400 and error["error"]["code"] == "invalid_request", error
    assert "bad-phone" in error["error"]["message"] and "/validate" in error["error"]["message"]


async def test_an_agent_without_a_number_and_an_unknown_one_are_problems(api, account, calling_agent):
    key = account["key"]
    status, bare, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "No number", "system_prompt": "Hi."})
    assert status == 201, bare
    body = run_of(account, bare, touch("a", answering_callee()),
                  touch("b", answering_callee(), context={"agent_id": str(uuid.uuid4())}))
    status, report, _ = await api.request("POST", f"{RUNS}/validate", key=key, json=body)
    assert status == 200 and not report["valid"]
    fields = {(p["touch_id"], p["field"]): p["message"] for p in report["problems"]}
    assert "has no phone number" in fields[(None, "agent_id")]
    assert "no agent" in fields[("b", "context.agent_id")]


async def test_a_run_naming_no_agent_is_the_one_its_touches_name_or_refused_naming_agent_id(
        api, account, calling_agent):
    """Without agent_id, a run whose touches all name one agent (context.agent_id) is that agent's; touches naming
    two are refused with a 400 saying to give agent_id (it was a 500: the run was stored with no agent), and another
    business's agent is still no agent of this one."""
    key = account["key"]

    def naming(*agents: dict) -> dict:
        return run_of(account, None, *(touch(f"t{i}", answering_callee(), seconds=3600,
                                             context={"agent_id": agent["id"]}) for i, agent in enumerate(agents)))

    status, run, _ = await create(api, key, naming(calling_agent, calling_agent))
    assert status == 201 and run["agent_id"] == calling_agent["id"], run
    assert {job["agent_id"] for job in await jobs_of(api, key, run["id"])} == {calling_agent["id"]}
    second = await agent_with_number(api, account)
    try:
        status, error, _ = await create(api, key, naming(calling_agent, second))
        assert status == 400 and error["error"]["code"] == "invalid_request", error
        assert "agent_id: required: the touches name 2 agents" in error["error"]["message"], error
    finally:
        await api.request("DELETE", "/api/v1/phone-numbers", key=key, params={"phone_number": second["phone_number"]})
    other = await new_account(api)
    try:
        status, stranger, _ = await api.request("POST", "/api/v1/agents", key=other["key"], json={
            "business_id": other["business_id"], "name": "Theirs", "system_prompt": "Hi."})
        assert status == 201, stranger
        status, error, _ = await create(api, key, naming(stranger))
        assert status == 400 and error["error"]["code"] == "invalid_request", error
        assert f"context.agent_id: no agent {stranger['id']} in the business" in error["error"]["message"], error
    finally:
        await other["dashboard"].close()


async def test_preview_moves_a_night_touch_to_its_window_and_refuses_a_dnc_number(
        api, account, calling_agent):
    key = account["key"]
    day, night, listed = answering_callee(), callee(open_now=False), answering_callee()
    for phone in (day, night):
        await opt_in(api, key, phone)
    status, entry, _ = await api.request("POST", "/api/v1/dnc", key=key, json={
        "business_id": account["business_id"], "phone": listed, "reason": "asked"})
    assert status in (200, 201), entry
    body = run_of(account, calling_agent, touch("day", day), touch("night", night), touch("listed", listed),
                  touch("text", day, channel="sms", seconds=60, context={"body": "See you soon"}))
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200, plan
    by_id = {p["touch_id"]: p for p in plan["planned"]}
    assert by_id["day"]["outcome"] == "allow" and by_id["day"]["planned_at"]
    assert by_id["night"]["outcome"] == "defer" and by_id["night"]["rule"] in ("federal_hours", "state_hours")
    assert by_id["night"]["planned_at"] > by_id["night"]["requested_at"]
    assert by_id["listed"]["outcome"] == "refuse" and by_id["listed"]["code"] == "number_on_dnc"
    assert by_id["listed"].get("planned_at") is None
    assert plan["by_channel"] == {"call": 3, "sms": 1} and plan["touches"] == 4
    assert plan["by_outcome"]["refuse"] == 1 and plan["first_planned_at"] <= plan["last_planned_at"]
    status, runs, _ = await api.request("GET", RUNS, key=key)
    assert status == 200 and runs["runs"] == []  # nothing was stored


async def test_create_is_idempotent_and_refuses_a_reused_key_or_reference(api, account, calling_agent):
    key = account["key"]
    body = run_of(account, calling_agent, touch("later", answering_callee(), seconds=3600))
    status, error, _ = await api.request("POST", RUNS, key=key, json=body)
    assert status == 400 and error["error"]["code"] == "bad_request" and "Idempotency-Key" in error["error"]["message"]
    idem = str(uuid.uuid4())
    status, run, _ = await create(api, key, body, idem)
    assert status == 201 and run["status"] == "scheduled" and run["replayed"] is False, run
    assert run["touches"] == 1 and run["jobs"]["pending"] == 1 and run["external_ref"] == body["external_ref"]
    status, again, _ = await create(api, key, body, idem)
    assert status == 201 and again["id"] == run["id"] and again["replayed"] is True
    status, error, _ = await create(api, key, {**body, "touches": [touch("other", answering_callee())]}, idem)
    assert status == 409 and error["error"]["code"] == "conflict" and "another run body" in error["error"]["message"]
    status, error, _ = await create(api, key, body)
    assert status == 409 and "external_ref" in error["error"]["message"]
    status, page, _ = await api.request("GET", RUNS, key=key, params={"external_ref": body["external_ref"]})
    assert status == 200 and [r["id"] for r in page["runs"]] == [run["id"]]
    [job] = await jobs_of(api, key, run["id"])
    assert job["touch_id"] == "later" and job["status"] == "pending" and job["external_ref"] == body["external_ref"]


async def test_touches_execute_on_time_and_report_back_with_their_references(
        api, account, voice, calling_agent):
    key = account["key"]
    phone, texted = answering_callee(), answering_callee()
    for p in (phone, texted):
        await opt_in(api, key, p)
    body = run_of(account, calling_agent, touch("call-1", phone, seconds=1),
                  touch("sms-1", texted, channel="sms", seconds=1, context={"body": "Your quote is ready."}))
    status, run, _ = await create(api, key, body)
    assert status == 201, run
    done = await settled(api, key, run["id"])
    assert done["status"] == "completed" and done["jobs"]["succeeded"] == 2, done
    assert done["started_at"] >= done["created_at"]
    jobs = {j["touch_id"]: j for j in await jobs_of(api, key, run["id"])}
    assert jobs["call-1"]["status"] == "succeeded" and jobs["call-1"]["attempts"] == 1 and jobs["call-1"]["call_id"]
    assert jobs["sms-1"]["status"] == "succeeded" and jobs["sms-1"]["message_id"]
    assert len(await provider_calls_to(voice, phone)) == 1
    completed = await events(api, key, "communication.touch_completed", run["id"], 2)
    assert {(e["data"]["touch_id"], e["data"]["external_ref"]) for e in completed} == {
        ("call-1", body["external_ref"]), ("sms-1", body["external_ref"])}
    [ended] = await events(api, key, "communication.run_ended", run["id"])
    assert ended["data"]["status"] == "completed" and ended["data"]["succeeded"] == 2
    status, page, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": "call.completed"})
    [call_event] = [e for e in page["events"] if e["data"]["call_id"] == jobs["call-1"]["call_id"]]
    assert (call_event["data"]["external_ref"], call_event["data"]["touch_id"]) == (body["external_ref"], "call-1")
    status, page, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params={"phone": phone})
    assert [(d["actor"], d["reference"]) for d in page["decisions"]] == [("run", jobs["call-1"]["id"])]


async def test_a_call_nobody_answers_is_retried_by_the_policy_then_fails(
        api, account, voice, calling_agent):
    key, phone = account["key"], unanswered_callee()
    await opt_in(api, key, phone)
    body = run_of(account, calling_agent, touch("ring", phone), retry={"max_retries": 1, "backoff_seconds": [1]})
    status, run, _ = await create(api, key, body)
    assert status == 201, run
    done = await settled(api, key, run["id"])
    assert done["jobs"]["failed"] == 1, done
    [job] = await jobs_of(api, key, run["id"])
    assert job["attempts"] == 2 and job["code"] == "no-answer" and "no retry left" in job["reason"]
    status, page, _ = await api.request("GET", "/api/v1/communication-attempts", key=key,
                                        params={"sequence_id": run["id"]})
    assert status == 200, page
    attempts = sorted(page["attempts"], key=lambda a: a["attempt"])
    assert [(a["attempt"], a["status"], a["retry_eligible"]) for a in attempts] == [
        (1, "no-answer", True), (2, "no-answer", False)]
    assert attempts[0]["next_attempt_at"] and attempts[0]["touch_id"] == "ring"
    assert len(await provider_calls_to(voice, phone)) == 2
    [failed] = await events(api, key, "communication.touch_failed", run["id"])
    assert failed["data"]["attempts"] == 2 and failed["data"]["touch_id"] == "ring"


async def test_pause_resume_and_cancel(api, account, calling_agent):
    key = account["key"]
    status, run, _ = await create(api, key, run_of(account, calling_agent, touch("a", answering_callee(), seconds=3600),
                                                   touch("b", answering_callee(), seconds=7200)))
    assert status == 201
    moves = [("resume", 409, "scheduled"), ("pause", 200, "paused"), ("pause", 409, "paused"),
             ("resume", 200, "scheduled"), ("cancel", 200, "canceled"), ("resume", 409, "canceled")]
    for action, code, state in moves:
        status, reply, _ = await api.request("PATCH", RUNS, key=key, json={"id": run["id"], "action": action})
        assert status == code, (action, reply)
        if code == 200:
            assert reply["status"] == state
            if action == "pause":
                assert reply["jobs"]["paused"] == 2
        else:
            assert reply["error"]["code"] == "conflict" and state in reply["error"]["message"]
    assert {j["status"] for j in await jobs_of(api, key, run["id"])} == {"canceled"}
    [ended] = await events(api, key, "communication.run_ended", run["id"])
    assert ended["data"]["status"] == "canceled" and ended["data"]["canceled"] == 2


async def test_a_stop_between_creation_and_execution_refuses_the_touch(
        api, account, sms, calling_agent):
    key, phone = account["key"], answering_callee()
    await opt_in(api, key, phone)
    status, run, _ = await create(api, key, run_of(account, calling_agent, touch(
        "text", phone, channel="sms", seconds=2, context={"body": "Still interested?"})))
    assert status == 201
    await sms.text_in(phone, calling_agent["phone_number"], "STOP")
    done = await settled(api, key, run["id"])
    [job] = await jobs_of(api, key, run["id"])
    assert done["jobs"]["refused"] == 1 and job["status"] == "refused" and job["code"] == "number_opted_out", job
    [failed] = await events(api, key, "communication.touch_failed", run["id"])
    assert failed["data"]["status"] == "refused" and failed["data"]["code"] == "number_opted_out"


async def test_another_accounts_key_reaches_no_run(api, account, other_key, calling_agent):
    key = account["key"]
    body = run_of(account, calling_agent, touch("x", answering_callee(), seconds=3600))
    status, run, _ = await create(api, key, body)
    assert status == 201
    for method, path, kwargs in (
            ("POST", f"{RUNS}/validate", {"json": body}), ("POST", f"{RUNS}/preview", {"json": body}),
            ("POST", RUNS, {"json": body, "headers": {"Idempotency-Key": "k"}})):
        status, error, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 403 and error["error"]["code"] == "forbidden", (path, error)
    status, error, _ = await api.request("GET", RUNS, key=other_key, params={"id": run["id"]})
    assert status == 404
    status, error, _ = await api.request("PATCH", RUNS, key=other_key, json={"id": run["id"], "action": "cancel"})
    assert status == 404
    for path, params in (("/api/v1/communication-jobs", {"communication_run_id": run["id"]}),
                         ("/api/v1/communication-attempts", {"sequence_id": run["id"]}), (RUNS, {})):
        status, page, _ = await api.request("GET", path, key=other_key, params=params)
        assert status == 200 and run["id"] not in str(page), (path, page)
    status, still, _ = await api.request("GET", RUNS, key=key, params={"id": run["id"]})
    assert still["status"] == "scheduled"


def next_local(zone: str, hour: int, minute: int = 0) -> datetime:
    """The next instant at hour:minute on the wall clock of `zone`, at least an hour from now."""
    local = (datetime.now(UTC) + timedelta(hours=1)).astimezone(ZoneInfo(zone))
    at = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at < local:
        at = (local + timedelta(days=1)).replace(hour=hour, minute=minute, second=0, microsecond=0)
    return at.astimezone(UTC)


@pytest.mark.parametrize("phone,zone", [("+12125558{:03d}", "America/New_York"),
                                        ("+18085558{:03d}", "Pacific/Honolulu")])
async def test_a_touch_at_the_callees_night_is_planned_for_their_morning(
        api, account, calling_agent, phone, zone):
    key, to = account["key"], phone.format(next(suffixes) % 1000)
    await opt_in(api, key, to)
    night = next_local(zone, 23, 30)
    morning = (night.astimezone(ZoneInfo(zone)) + timedelta(days=1)).replace(hour=8, minute=0)
    body = run_of(account, calling_agent, {**touch("night", to), "scheduled_at": night.isoformat()})
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200, plan
    [night_touch] = plan["planned"]
    assert night_touch["outcome"] == "defer" and night_touch["rule"] == "federal_hours", night_touch
    assert datetime.fromisoformat(night_touch["planned_at"]) == morning


async def test_a_created_run_lists_a_night_touch_planned_for_the_callees_morning(api, account, calling_agent):
    """Issue 50: a touch at 03:00 in New York was listed planned at 03:00 though the preview moved it to 08:00; the
    job now says when it will really go out, and why, from its creation (the scheduler decides again then)."""
    key = account["key"]
    phone, other = (f"+12125558{next(suffixes) % 1000:03d}" for _ in range(2))
    for p in (phone, other):
        await opt_in(api, key, p)
    night, noon = next_local("America/New_York", 3), next_local("America/New_York", 12)
    morning = night.astimezone(ZoneInfo("America/New_York")).replace(hour=8).astimezone(UTC)
    body = run_of(account, calling_agent, {**touch("night", phone), "scheduled_at": night.isoformat()},
                  {**touch("noon", other), "scheduled_at": noon.isoformat()})
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200, plan
    status, run, _ = await create(api, key, body)
    assert status == 201 and run["status"] == "scheduled", run
    assert {s: n for s, n in run["jobs"].items() if n} == {"deferred": 1, "pending": 1}, run
    jobs = {j["touch_id"]: j for j in await jobs_of(api, key, run["id"])}
    deferred = jobs["night"]
    assert (deferred["status"], deferred["rule"], deferred["code"]) == ("deferred", "federal_hours", "tcpa_violation")
    assert datetime.fromisoformat(deferred["scheduled_at"]) == night
    assert datetime.fromisoformat(deferred["planned_at"]) == morning == datetime.fromisoformat(
        next(p for p in plan["planned"] if p["touch_id"] == "night")["planned_at"])
    assert "03:00 in America/New_York" in deferred["reason"], deferred
    assert (jobs["noon"]["status"], jobs["noon"]["rule"], datetime.fromisoformat(jobs["noon"]["planned_at"])) == (
        "pending", None, noon), jobs["noon"]
    status, page, _ = await api.request("GET", "/api/v1/communication-jobs", key=account["read_key"],
                                        params={"communication_run_id": run["id"], "status": "deferred"})
    assert status == 200 and [j["touch_id"] for j in page["jobs"]] == ["night"], page
