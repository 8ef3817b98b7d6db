"""The eval run use cases (services/evals/run_service.py) in the fast tier: on the in-memory database (tests/memory),
the voice simulator served in this process (its runs end in a blink, its stand-in assistant answering by the
rules in its prompt) and the agents service behind an in-memory port. A run ends with the provider's verdict,
past the provider's rate limit; the eval gate's verdict; runs a stopped process left are resumed; tenancy."""
import time
from datetime import timedelta

import pytest

from contracts import evals
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_as
from core.uow import UnitOfWork
from providers.voice.port import Conversation
from services.evals import domain
from services.evals.agents_port import EvaluatedAgent
from services.evals.repository import EvalsUnit
from services.evals.run_service import Runs
from services.evals.service import Scenarios
from tests.agents import HOURS, RULES, asked
from tests.memory.evals import MemoryRuns, MemoryScenarios
from tests.service.fakes import EvalAgents
from tests.storage_contracts import eval_run_values
from tests.waiting import wait_until

PASSING = asked({"type": "exact", "content": HOURS})
FAILING = asked({"type": "exact", "content": "We are closed."})
MODEL = {"provider": "openai", "model": "gpt-4o"}
WAIT_MS = 5000  # at most: the simulator's runs end within milliseconds


@pytest.fixture
def agent_id() -> str:
    return new_id()


@pytest.fixture
async def assistant_id(voice) -> str:
    """The agent's assistant at the provider: its stand-in gives the Saturday hours when asked."""
    status, made = await voice.request("POST", "/assistant", {
        "name": "Front desk", "firstMessage": "Bright Dental, hello.",
        "model": {**MODEL, "messages": [{"role": "system", "content": RULES}]}})
    assert status == 201, made
    return made["id"]


@pytest.fixture
def uow(database) -> UnitOfWork[EvalsUnit]:
    return UnitOfWork(database, lambda handle: EvalsUnit(handle, MemoryScenarios, MemoryRuns))


@pytest.fixture
def agents(business_id, agent_id, assistant_id) -> EvalAgents:
    return EvalAgents({agent_id: EvaluatedAgent(business_id, assistant_id)})


@pytest.fixture
def caller(business_id):
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "active"),))):
        yield


@pytest.fixture
async def runs(uow, voice_port, agents, caller):
    runs = Runs(uow, voice_port, agents, concurrency=3, poll_seconds=0.01, lease=timedelta(seconds=30))
    yield runs
    await runs.stop()


@pytest.fixture
def scenarios(uow, voice_port, agents, caller) -> Scenarios:
    return Scenarios(uow, voice_port, agents)


async def scenario(scenarios, business_id, agent_id, name="hours.saturday", turns=PASSING):
    return await scenarios.create(business_id, agent_id, name, None, turns)


def conversation(prompt: str) -> Conversation:
    return Conversation(prompt, "Bright Dental, hello.", MODEL)


async def test_a_run_request_ends_with_the_providers_verdicts(runs, scenarios, voice, business_id, agent_id):
    passing = await scenario(scenarios, business_id, agent_id)
    failing = await scenario(scenarios, business_id, agent_id, "hours.closed", FAILING)
    one = await runs.run_scenario(passing.id, True, WAIT_MS)
    assert (one.status, one.passed, one.eval_id, one.trigger) == (evals.ENDED, True, passing.id, domain.REQUEST)
    assert one.results[0]["messages"][1]["content"] == HOURS and one.ended_at is not None
    status, at_provider = await voice.request("GET", f"/eval/run/{one.provider_run_id}")
    assert status == 200 and at_provider["status"] == "ended"
    fan = await runs.run_agent(agent_id, True, WAIT_MS)
    assert (fan.total, fan.completed, fan.passed, fan.failed) == (2, 2, 1, 1)
    assert {(r.eval_id, r.passed) for r in fan.runs} == {(passing.id, True), (failing.id, False)}
    assert len({r.batch_id for r in fan.runs}) == 1 and fan.runs[0].batch_id is not None
    listed = await runs.of_agent(agent_id)
    assert {r.id for r in listed} == {one.id} | {r.id for r in fan.runs} and listed[-1].id == one.id


async def test_a_run_the_provider_refuses_ends_failed_with_the_reason(runs, scenarios, voice, business_id, agent_id):
    made = await scenario(scenarios, business_id, agent_id)
    await voice.fail_next("POST", "/eval/run", 400)
    run = await runs.run_scenario(made.id, True, WAIT_MS)
    assert (run.status, run.passed, run.provider_run_id) == (evals.ENDED, False, None)
    assert run.ended_reason.startswith("the voice provider did not take the run")


async def test_the_providers_rate_limit_is_backed_off_as_it_says_and_the_run_still_ends(runs, scenarios, voice,
                                                                                       business_id, agent_id):
    made = await scenario(scenarios, business_id, agent_id)
    await voice.fail_next("POST", "/eval/run", 429)  # with Retry-After: 1
    started = time.monotonic()
    run = await runs.run_scenario(made.id, True, WAIT_MS)
    assert (run.status, run.passed) == (evals.ENDED, True)
    assert time.monotonic() - started >= 1  # the provider's Retry-After, not our first backoff (half a second)
    status, log = await voice.request("GET", "/_simulator/requests?path=/eval/run&method=POST")
    assert [entry["status"] for entry in log] == [429, 201]


async def left(runs, scenario, **values) -> str:
    """A run as a stopped process left it (stored, nothing following it); its id."""
    row = eval_run_values(scenario, **values)
    async with runs.uow.transaction() as work:
        await work.runs.add([row])
    return row["id"]


async def submitted(voice_port, voice, scenario, assistant_id) -> str:
    """A run submitted at the provider, once it has ended there; its id."""
    provider_run = await voice_port.run_eval(scenario.provider_eval_id, assistant_id)

    async def status() -> str:
        return (await voice.request("GET", f"/eval/run/{provider_run.id}"))[1]["status"]
    await wait_until(status, "the provider's run to end", lambda s: s == "ended", timeout=2)
    return provider_run.id


async def test_an_unfinished_run_is_refreshed_from_the_provider_when_read(runs, scenarios, voice_port, voice,
                                                                          business_id, agent_id, assistant_id):
    made = await scenario(scenarios, business_id, agent_id)
    provider_run_id = await submitted(voice_port, voice, made, assistant_id)
    run_id = await left(runs, made, provider_run_id=provider_run_id, status="running")
    read = await runs.get(run_id, None)
    assert (read.status, read.passed, read.results[0]["status"]) == (evals.ENDED, True, "pass")
    assert read.ended_at is not None and read.updated_at > read.created_at
    assert await runs.get(None, provider_run_id) == read == (await runs.of_agent(agent_id))[0]
    queued = await left(runs, made)  # not submitted: nothing to refresh it from
    assert (await runs.get(queued, None)).status == evals.QUEUED


async def test_the_eval_gate_passes_fails_or_is_unfinished(runs, scenarios, business_id, agent_id, assistant_id):
    await scenario(scenarios, business_id, agent_id)
    good = [("inbound", conversation(RULES))]
    batch_id, verdict = await runs.gate(agent_id, assistant_id, good, WAIT_MS)
    assert (verdict.status, verdict.total, verdict.passed, verdict.shown) == (domain.GATE_PASSED, 1, 1, [])
    bad = [("inbound", conversation("You answer for Bright Dental.")), ("sms", conversation(RULES))]
    batch_id, verdict = await runs.gate(agent_id, assistant_id, bad, WAIT_MS)
    assert (verdict.status, verdict.total, verdict.completed, verdict.passed, verdict.failed) == \
        (domain.GATE_FAILED, 2, 2, 1, 1)
    [shown] = verdict.shown
    assert (shown.channel, shown.passed, shown.trigger, shown.batch_id) == ("inbound", False, domain.EVAL_GATE,
                                                                          batch_id)
    _, verdict = await runs.gate(agent_id, assistant_id, good, 0)
    assert (verdict.status, verdict.completed) == (domain.GATE_UNFINISHED, 0)
    assert [r.status for r in verdict.shown] == [evals.QUEUED]
    assert await runs.gate(new_id(), assistant_id, good, WAIT_MS) == (None, domain.gate_verdict([]))


async def test_runs_left_unfinished_are_resumed_and_an_unsubmitted_gate_run_ends_failed(
        runs, scenarios, voice_port, voice, business_id, agent_id, assistant_id):
    made = await scenario(scenarios, business_id, agent_id)
    gone = await scenario(scenarios, business_id, agent_id, "hours.gone")
    to_submit = await left(runs, made)
    to_follow = await left(runs, made, provider_run_id=await submitted(voice_port, voice, made, assistant_id),
                           status="queued")
    gated = await left(runs, made, trigger=domain.EVAL_GATE, channel="inbound")
    orphan = await left(runs, gone)
    await scenarios.delete(gone.id)
    done = await left(runs, made, status=evals.ENDED, passed=False)
    with acting_as(Tenant(account_id=new_id(), business_ids=())):  # at start: no caller, each run's own business
        assert await taken_over(runs) == 4  # in rounds: three at a time, the runs this process may have in flight
    async with runs.uow.read() as work:
        after = {r.id: r for r in await work.runs.by_ids([to_submit, to_follow, gated, orphan, done])}
    assert {(after[i].status, after[i].passed) for i in (to_submit, to_follow)} == {(evals.ENDED, True)}
    assert after[to_submit].provider_run_id not in (None, after[to_follow].provider_run_id)
    assert (after[gated].status, after[gated].passed, after[gated].provider_run_id) == (evals.ENDED, False, None)
    assert "the eval gate that started it stopped before it was submitted" in after[gated].ended_reason
    assert (after[orphan].status, after[orphan].ended_reason) == (evals.ENDED, "its scenario was deleted before it ran")
    assert (after[done].status, after[done].passed, after[done].ended_reason) == (evals.ENDED, False, None)


async def test_another_business_sees_none_of_the_runs(runs, scenarios, business_id, agent_id, assistant_id):
    made = await scenario(scenarios, business_id, agent_id)
    run = await runs.run_scenario(made.id, True, WAIT_MS)
    stranger = new_id()
    with acting_as(Tenant(account_id=new_id(), business_ids=(stranger,), standings=((stranger, "active"),))):
        for read in (lambda: runs.get(run.id, None), lambda: runs.get(None, run.provider_run_id),
                     lambda: runs.run_scenario(made.id, True, WAIT_MS), lambda: runs.run_agent(agent_id, True, WAIT_MS)):
            with pytest.raises(ServiceError) as hidden:
                await read()
            assert hidden.value.code == "not_found"
        assert await runs.of_agent(agent_id) == []
        assert await runs.gate(agent_id, assistant_id, [("inbound", conversation(RULES))], WAIT_MS) == \
            (None, domain.gate_verdict([]))
    assert [r.id for r in await runs.of_agent(agent_id)] == [run.id]


async def test_a_business_not_in_good_standing_runs_nothing(runs, scenarios, voice, business_id, agent_id):
    made = await scenario(scenarios, business_id, agent_id)
    with acting_as(Tenant(account_id=new_id(), business_ids=(business_id,), standings=((business_id, "paused"),))):
        for start in (lambda: runs.run_scenario(made.id, True, WAIT_MS), lambda: runs.run_agent(agent_id, True, WAIT_MS)):
            with pytest.raises(ServiceError) as refused:
                await start()
            assert refused.value.code == "forbidden" and "running evals" in refused.value.message
    assert await runs.of_agent(agent_id) == []
    assert (await voice.request("GET", "/_simulator/requests?path=/eval/run&method=POST"))[1] == []


async def test_a_run_whose_submission_was_cut_off_is_followed_not_submitted_again(
        runs, scenarios, voice_port, voice, business_id, agent_id, assistant_id):
    """A replica stopped after the provider took the run and before it recorded the provider's id: the replica
    taking it over finds the provider's run (of the same eval and assistant, since the submission began, recorded
    by no run of ours) and follows it."""
    made = await scenario(scenarios, business_id, agent_id)
    followed = await submitted(voice_port, voice, made, assistant_id)  # recorded by another run of ours
    await left(runs, made, provider_run_id=followed, status=evals.ENDED)
    began = utcnow()
    cut_off = await submitted(voice_port, voice, made, assistant_id)
    run_id = await left(runs, made, submitting_at=began)
    with acting_as(Tenant(account_id=new_id(), business_ids=())):
        assert await taken_over(runs) == 1
    async with runs.uow.read() as work:
        [after] = await work.runs.by_ids([run_id])
    assert (after.provider_run_id, after.status, after.passed) == (cut_off, evals.ENDED, True)
    listed = (await voice.request("GET", "/eval/run"))[1]["results"]
    assert len(listed) == 2  # nothing submitted again


async def test_a_run_the_provider_no_longer_has_ends_failed_when_taken_over(runs, scenarios, business_id, agent_id):
    """Else each replica taking it over would look for it again, forever."""
    made = await scenario(scenarios, business_id, agent_id)
    run_id = await left(runs, made, provider_run_id=new_id(), status="running")
    with acting_as(Tenant(account_id=new_id(), business_ids=())):
        assert await taken_over(runs) == 1
    async with runs.uow.read() as work:
        [after] = await work.runs.by_ids([run_id])
    assert (after.status, after.passed, after.ended_reason) == (
        evals.ENDED, False, "the voice provider no longer has the run")


async def taken_over(runs) -> int:
    """`take_over` rounds (as RunClaims makes them) until none takes a run and every run taken has been driven;
    how many were taken."""
    taken = []

    async def round_() -> bool:
        taken.append(await runs.take_over())
        return taken[-1] == 0 and not runs.driving
    await wait_until(round_, "the runs left to be taken over and driven", timeout=5, interval=0.02)
    return sum(taken)
