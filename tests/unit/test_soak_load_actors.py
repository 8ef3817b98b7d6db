"""The soak's actors (bench/soak/actors) where they decide without the stack: the communication run's body is a
valid run (the service's own check) spread over the rest of the load, an answer not expected is noted (a held
workspace's refusal as expected), and an actor that raises is stopped and noted without ending the load."""
import random
import time
import uuid
from datetime import UTC, datetime, timedelta

from bench.soak.actors.answers import expected, guarded
from bench.soak.actors.communication_run import FIRST_TOUCH_SECONDS, LAST_TOUCH_SHARE, _body
from bench.soak.client import at_daily_limit, transient
from bench.soak.history import FaultWindow, History, Tenant
from bench.soak.load import LoadContext
from bench.soak.profile import SoakProfile
from services.sdr.runs_domain import check_run

LEFT_SECONDS = 600.0


def context() -> LoadContext:
    return LoadContext(client=None, stack=None, history=History(), profile=SoakProfile(seed=3),
                       partner=None, rng=random.Random(3), ends_at=time.monotonic() + LEFT_SECONDS)


def tenant() -> Tenant:
    return Tenant(str(uuid.uuid4()), str(uuid.uuid4()), "svc_live_x", str(uuid.uuid4()), "+12065550100")


def test_the_runs_body_is_a_valid_run_of_calls_and_texts_spread_over_the_rest_of_the_load():
    owner, before = tenant(), datetime.now(UTC)
    phones = [f"+1212555{5000 + n}" for n in range(200)]
    body = _body(context(), owner, phones)
    run, problems = check_run(body, datetime.now(UTC))
    assert problems == [] and run is not None and len(run.touches) == 200
    assert run.business_id == owner.business_id and run.agent_id == owner.agent_id
    assert {t.phone for t in run.touches} == set(phones)
    times = [t.scheduled_at for t in run.touches]
    assert times == sorted(times)
    assert before + timedelta(seconds=FIRST_TOUCH_SECONDS) <= times[0]
    assert times[-1] <= datetime.now(UTC) + timedelta(seconds=LEFT_SECONDS * LAST_TOUCH_SHARE)
    assert times[-1] - times[0] > timedelta(seconds=LEFT_SECONDS / 2)  # spread, not bunched
    channels = [t.channel for t in run.touches]
    assert 30 < channels.count("sms") < 100 and channels.count("call") > 100


def test_an_answer_not_expected_is_noted_and_a_held_workspaces_refusal_is_noted_as_expected():
    ctx = context()
    assert expected(ctx, "lead", 201, {"id": "x"}) and ctx.history.notes == []
    assert not expected(ctx, "eval run", 500, {"error": {"code": "internal_error"}}, (200,))
    paused = {"error": {"code": "forbidden", "message": "running evals is not allowed while the workspace is paused: "
                                                        "resume it"}}
    assert not expected(ctx, "eval run", 403, paused, (200,))
    assert not expected(ctx, "eval run", 403, {"error": {"code": "forbidden", "message": "missing scope"}}, (200,))
    assert [("500" in n, "expected while it is" in n) for n in ctx.history.notes] == [
        (True, False), (False, True), (False, False)]


async def test_an_actor_that_raises_is_stopped_and_noted_not_the_load():
    async def broken(ctx):
        raise KeyError("webhook")

    ctx = context()
    await guarded(broken)(ctx)
    [note] = ctx.history.notes
    assert note == "actor broken stopped: KeyError('webhook')"


def test_a_plans_daily_limit_is_final_and_a_rate_limit_or_a_lost_answer_is_tried_again():
    daily = {"error": {"code": "rate_limited", "message": "calls_per_day reached", "limit": "calls_per_day"}}
    per_minute = {"error": {"code": "rate_limited", "message": "more than 600 requests per minute for this key"}}
    assert at_daily_limit(429, daily) and not transient(429, daily)
    assert not at_daily_limit(429, per_minute) and transient(429, per_minute)
    assert transient(0, "connection refused") and transient(503, {"error": {"code": "unavailable"}})
    assert not transient(500, {"error": {"code": "call_failed"}}) and transient(500, {"error": {"code": "internal_error"}})


def test_a_workspace_is_held_while_paused_and_for_ever_once_torn_down_give_or_take_the_slack():
    history = History()
    history.held["paused"].append((100.0, 120.0))
    history.held["torn-down"].append((200.0, float("inf")))
    assert history.was_held("paused", 110.0, 0) and history.was_held("paused", 125.0, 10)
    assert not history.was_held("paused", 125.0, 0) and not history.was_held("paused", 80.0, 10)
    assert history.was_held("torn-down", 10_000.0, 0) and not history.was_held("other", 110.0, 60)


def test_a_request_in_flight_when_a_fault_began_is_inside_its_window():
    history = History()
    history.windows.append(FaultWindow("postgres-restart", "postgres", 100.0, 103.0))
    assert history.in_window(101.0, 0) and history.in_window(110.0, 10) and not history.in_window(114.0, 10)
    assert not history.in_window(98.0, 10)  # sent and answered before it
    assert history.in_window(98.0, 10, until=100.5)  # sent before it, answered (a 504) once it had begun
