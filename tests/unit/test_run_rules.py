"""The rules of communication runs (services.sdr.runs_domain) on fixed instants: touches planned in the callee's
own night in New York and Honolulu, across both US daylight-saving changes, the frequency cap counting the run's
own calls, the retry policy and the moves of a run."""
from datetime import UTC, datetime, timedelta

import pytest

from contracts import runs
from core.compliance import decision as compliance
from core.compliance.rules import hours
from core.errors import ServiceError
from services.sdr import runs_domain as rules

AGENT = "6f1c2b84-3f0e-4d55-9b7a-0a4c1d2e3f40"
NEW_YORK, HONOLULU = "+12125550142", "+18085550142"  # area codes 212 (NY, federal hours) and 808 (HI)
CONSENTING = compliance.Standing(consent="opted_in")


def utc(*parts) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def stamp(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def run_of(now: datetime, *touches: dict, **extra):
    run, problems = rules.check_run({"external_ref": "crm-1", "agent_id": AGENT, "touches": list(touches), **extra},
                                    now)
    assert problems == [] and run is not None
    return run


def call(touch_id: str, phone: str, at: datetime, **target) -> dict:
    return {"touch_id": touch_id, "channel": "call", "target": {"phone": phone, **target}, "scheduled_at": stamp(at)}


def planned(now: datetime, *touches: dict, business_hours=None) -> dict[str, rules.Planned]:
    run = run_of(now, *touches)
    plan = rules.plan(run, now, {t.phone: CONSENTING for t in run.touches}, {}, {}, {AGENT: "+12125550100"},
                      compliance.Policy(), business_hours)
    return {p.touch.touch_id: p for p in plan}


@pytest.mark.parametrize("phone,scheduled,opens", [
    # 23:30 on a Tuesday in New York (EST, UTC-5): the next legal moment is 08:00 there on Wednesday.
    (NEW_YORK, utc(2027, 1, 13, 4, 30), utc(2027, 1, 13, 13, 0)),
    # 23:30 on a Tuesday in Honolulu (HST, UTC-10 all year): 08:00 there on Wednesday.
    (HONOLULU, utc(2027, 1, 13, 9, 30), utc(2027, 1, 13, 18, 0)),
    # 05:00 in Honolulu: the same morning's 08:00, though it is already 10:00 in New York.
    (HONOLULU, utc(2027, 1, 13, 15, 0), utc(2027, 1, 13, 18, 0)),
])
def test_a_night_touch_is_moved_to_the_callees_own_morning(phone, scheduled, opens):
    plan = planned(scheduled - timedelta(days=1), call("night", phone, scheduled))["night"]
    assert plan.decision.outcome == compliance.DEFER and plan.decision.rule == "federal_hours"
    assert plan.planned_at == opens


def test_a_touch_stated_in_honolulu_time_is_judged_there_whatever_its_number():
    # A New York number whose owner lives in Honolulu: 14:00 in New York is 09:00 in Honolulu, inside both windows;
    # 02:00 in New York (21:00 in Honolulu) is outside the New York window the area code still implies.
    day, night = utc(2027, 1, 13, 19, 0), utc(2027, 1, 14, 7, 0)
    plans = planned(day - timedelta(hours=1), call("day", NEW_YORK, day, timezone="Pacific/Honolulu"),
                    call("night", NEW_YORK, night, timezone="Pacific/Honolulu"))
    assert plans["day"].decision.allowed and plans["day"].planned_at == day
    assert plans["night"].decision.outcome == compliance.DEFER and plans["night"].planned_at > night


def test_a_touch_scheduled_across_the_spring_change_keeps_new_yorks_wall_clock():
    # Saturday 2027-03-13 21:30 EST (02:30Z on the 14th) is night. Clocks go forward at 02:00 on Sunday the 14th:
    # 08:00 that morning is EDT, 12:00Z (not 13:00Z, as it would be on standard time).
    now = utc(2027, 3, 10, 12, 0)
    plans = planned(now, call("saturday-night", NEW_YORK, utc(2027, 3, 14, 2, 30)),
                    call("monday", NEW_YORK, utc(2027, 3, 15, 12, 30)))
    assert plans["saturday-night"].planned_at == utc(2027, 3, 14, 12, 0)
    # 12:30Z on Monday is 08:30 EDT: allowed as requested (it would be 07:30, before the window, on EST).
    assert plans["monday"].decision.allowed and plans["monday"].planned_at == utc(2027, 3, 15, 12, 30)


def test_a_touch_scheduled_across_the_autumn_change_keeps_new_yorks_wall_clock():
    # Clocks go back at 02:00 EDT on Sunday 2027-11-07: 12:30Z that morning is 07:30 EST, before the window,
    # which opens at 08:00 EST = 13:00Z. A week earlier 12:30Z was 08:30 EDT, inside it.
    now = utc(2027, 10, 25, 12, 0)
    plans = planned(now, call("after", NEW_YORK, utc(2027, 11, 7, 12, 30)),
                    call("before", NEW_YORK, utc(2027, 10, 31, 12, 30)))
    assert plans["after"].decision.outcome == compliance.DEFER and plans["after"].planned_at == utc(2027, 11, 7, 13)
    assert plans["before"].decision.allowed and plans["before"].planned_at == utc(2027, 10, 31, 12, 30)


def test_the_business_hours_move_a_touch_the_law_allows_to_their_opening_in_the_callees_zone():
    # 09:30 in New York on a Wednesday and in Honolulu's 09:30 (19:30Z): legal, but the business calls 11:00-16:00.
    ny, hi = utc(2027, 1, 13, 14, 30), utc(2027, 1, 13, 19, 30)
    plans = planned(ny - timedelta(hours=1), call("ny", NEW_YORK, ny), call("hi", HONOLULU, hi),
                    business_hours=hours(11, 16))
    assert [plans[t].decision.rule for t in ("ny", "hi")] == ["business_hours"] * 2
    assert (plans["ny"].planned_at, plans["hi"].planned_at) == (utc(2027, 1, 13, 16), utc(2027, 1, 13, 21))
    # Hours looser than the law change nothing: 07:30 in New York still waits for the federal 08:00.
    early = planned(ny, call("early", NEW_YORK, utc(2027, 1, 14, 12, 30)), business_hours=hours(6, 22))["early"]
    assert (early.decision.rule, early.planned_at) == ("federal_hours", utc(2027, 1, 14, 13))


def test_the_runs_own_calls_count_towards_the_frequency_cap():
    now = utc(2027, 1, 13, 15, 0)  # 10:00 in New York
    plans = planned(now, *(call(f"c{i}", NEW_YORK, now + timedelta(minutes=i)) for i in range(4)))
    assert [plans[f"c{i}"].decision.outcome for i in range(3)] == [compliance.ALLOW] * 3
    assert plans["c3"].decision.rule == "frequency" and plans["c3"].planned_at >= now + timedelta(hours=24)


def test_check_run_reports_every_problem_and_a_naive_time_is_refused_not_guessed():
    now = utc(2027, 1, 13, 15, 0)
    run, problems = rules.check_run({"external_ref": "", "touches": [
        call("a", "not a phone", now), {**call("b", NEW_YORK, now), "scheduled_at": "2027-01-13T10:00:00"},
        call("a", NEW_YORK, now + runs.HORIZON + timedelta(minutes=1)),
    ], "retry": {"max_retries": 11, "retry_on": ["completed"]}}, now)
    assert run is None
    assert {(p.index, p.field) for p in problems} == {
        (None, "external_ref"), (None, "retry.max_retries"), (None, "retry.retry_on"), (0, "target.phone"),
        (1, "scheduled_at"), (2, "scheduled_at"), (2, "touch_id")}


def test_the_retry_policy_retries_unanswered_calls_then_gives_up():
    policy = runs.RetryPolicy(max_retries=2, backoff_seconds=(60, 600))
    ended = utc(2027, 1, 13, 15, 0)
    first = rules.attempt_end("no-answer", 1, policy, False, ended)
    assert (first.job_status, first.retry_eligible, first.retry_at) == (runs.RETRYING, True, ended + timedelta(seconds=60))
    assert rules.attempt_end("busy", 2, policy, False, ended).retry_at == ended + timedelta(seconds=600)
    assert rules.attempt_end("no-answer", 3, policy, False, ended).job_status == runs.FAILED
    assert rules.attempt_end("voicemail", 1, policy, False, ended).job_status == runs.SUCCEEDED
    assert rules.attempt_end("no-answer", 1, policy, True, ended).job_status == runs.FAILED  # its run was canceled
    assert runs.RetryPolicy.of(policy.to_json()) == policy


OTHER, FOREIGN = "8f14e45f-ceea-467e-9a0a-1f2b3c4d5e6f", "0b9d6c0e-5a7f-4f43-a2c1-7e3d5b9c1a20"
NUMBERED = {AGENT: "+12125550100", OTHER: "+12125550101"}  # the business's agents, both with numbers


def agents_of(*touch_agents: str | None, run_agent: str | None = None,
              numbers: dict[str, str | None] = NUMBERED) -> tuple[str | None, dict[tuple[int | None, str], str]]:
    """The run's agent and its agent problems by (index, field), for touches naming `touch_agents` (None: none)."""
    now = utc(2027, 1, 13, 15, 0)
    touches = [{**call(f"t{i}", NEW_YORK, now), "context": {"agent_id": a} if a else {}}
               for i, a in enumerate(touch_agents)]
    run, problems = rules.check_run({"external_ref": "crm-1", "agent_id": run_agent, "touches": touches}, now)
    assert run is not None, problems
    agent, problems = rules.agent_problems(run, numbers)
    return agent, {(p.index, p.field): p.message for p in problems}


def test_a_run_naming_no_agent_is_the_agent_every_touch_names():
    assert agents_of(OTHER, OTHER) == (OTHER, {})
    assert agents_of(None, None, numbers={OTHER: "+12125550101", AGENT: None}) == (OTHER, {})  # the one with a number
    assert agents_of(OTHER, None, run_agent=AGENT) == (AGENT, {})


def test_a_run_naming_no_agent_is_refused_when_its_touches_name_several_or_one_names_none():
    _, problems = agents_of(AGENT, OTHER)
    assert list(problems) == [(None, "agent_id")]
    assert "2 agents in context.agent_id; give agent_id" in problems[(None, "agent_id")]
    _, problems = agents_of(AGENT, None)  # the touch naming none: which of the two agents with numbers?
    assert "name the one that places the touches" in problems[(None, "agent_id")]


def test_another_business_agent_is_refused_as_a_touches_agent_or_the_runs():
    assert list(agents_of(FOREIGN, FOREIGN)[1]) == [(0, "context.agent_id"), (1, "context.agent_id")]
    assert "no agent" in agents_of(FOREIGN, FOREIGN)[1][(0, "context.agent_id")]
    assert list(agents_of(FOREIGN, run_agent=AGENT)[1]) == [(0, "context.agent_id")]
    assert list(agents_of(AGENT, run_agent=FOREIGN)[1]) == [(None, "agent_id")]


@pytest.mark.parametrize("status,action,started,after", [
    ("scheduled", "pause", False, "paused"), ("running", "pause", True, "paused"),
    ("paused", "resume", False, "scheduled"), ("paused", "resume", True, "running"),
    ("paused", "cancel", True, "canceled"),
])
def test_the_moves_of_a_run(status, action, started, after):
    assert rules.run_after(status, action, started) == after


@pytest.mark.parametrize("status,action", [("completed", "cancel"), ("canceled", "resume"), ("scheduled", "resume"),
                                           ("paused", "pause")])
def test_an_illegal_move_is_a_conflict_naming_the_state(status, action):
    with pytest.raises(ServiceError) as refused:
        rules.run_after(status, action, True)
    assert refused.value.code == "conflict" and status in refused.value.message


def test_each_phone_of_a_run_is_judged_once_and_every_touch_to_it_gets_the_verdict():
    """A run reaches one person in several touches; libphonenumber takes about half a millisecond over an invalid +1
    number, so a run of 10,000 touches to one was seconds (issue 50's fuzzing run: past its 10 s limit)."""
    rules._e164_verdict.cache_clear()
    now = utc(2027, 1, 13, 15, 0)
    touches = [call(f"t{i}", ("+12125550142", "+12125550000x")[i % 2], now) for i in range(50)]
    run, problems = rules.check_run({"external_ref": "crm-1", "touches": touches}, now)
    assert run is None and {(p.index, p.field) for p in problems} == {(i, "target.phone") for i in range(1, 50, 2)}
    info = rules._e164_verdict.cache_info()
    assert (info.misses, info.hits) == (2, 48)
