"""Eval runs: one scenario, or every scenario of an agent (fan-out), run at the voice provider.

The runs are stored `queued` first, then a driver task submits each to the provider and follows it to its end.
The provider limits the runs an organisation has in flight, so one process keeps at most `concurrency` of its
runs in flight (from submission to end) and backs off on a 429 (its Retry-After, else doubling), up to
`SUBMIT_TRIES` tries; a run the provider never takes ends failed with the reason. A caller that waits gets the
runs as they stand after `max_wait_ms` at most; a run polled later is refreshed from the provider. An ended
run's results and verdict never change (RunsRepository.record).

Any number of replicas: an unfinished run is driven (submitted, polled, recorded) by the replica holding its lease
(the runs' lease columns, core.leases' meaning; `holder` is the replica's id), the one that stored it, which renews
it every `lease`/3 (`RunClaims`) while it drives it; every write of a driver is guarded by the lease. A replica
that stops releases its runs; one that dies loses them when their lease runs out; either way another replica's
`RunClaims` takes them over (`FOR UPDATE SKIP LOCKED`: one replica each). A submission is marked (`submitting_at`)
under the lease before the provider is asked: a replica taking over a run so marked with no provider run recorded
first looks at the provider for a run of the same eval and assistant since then that no run of ours has recorded
(the submission cut off before its id was written) and follows it, submitting only when there is none. An eval
gate's run not yet submitted when its replica stopped ends failed (its configuration is not stored; the change it
gated was refused); a live gate's runs are its replica's, which no other replica's start touches.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from contracts import evals
from core import tenant
from core.background import Periodic
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.standings import Standings, carried_only
from core.uow import UnitOfWork
from providers.voice.port import Conversation, EvalRun, ProviderError, VoiceProvider
from services.evals import domain
from services.evals.agents_port import AgentsPort
from services.evals.records import Run, Scenario, UnfinishedRun
from services.evals.repository import EvalsUnit

log = logging.getLogger(__name__)

RESUMER = "eval-runs-resumer"
SUBMIT_TRIES = 6
FIRST_BACKOFF_SECONDS = 0.5
# How far before a cut-off submission the provider's runs are looked at: its clock against our database's.
CLOCK_SLACK = timedelta(minutes=1)


@dataclass(frozen=True)
class Play:
    """One run to start: a scenario against an assistant, with the configuration not yet live (`conversation`) of an
    agent channel when an eval gate starts it."""

    scenario: Scenario
    assistant_id: str
    conversation: Conversation | None = None
    channel: str | None = None


@dataclass(frozen=True)
class FanOut:
    total: int
    completed: int
    passed: int
    failed: int
    runs: list[Run]


class Runs:
    def __init__(self, uow: UnitOfWork[EvalsUnit], voice: VoiceProvider, agents: AgentsPort, concurrency: int,
                 poll_seconds: float, *, lease: timedelta, standings: Standings | None = None):
        self.uow = uow
        self.standings = standings or carried_only()  # may the business spend (core.standings)
        self.voice = voice
        self.agents = agents
        self.concurrency = concurrency
        self.slots = asyncio.Semaphore(concurrency)  # this process's runs in flight at the provider
        self.poll_seconds = poll_seconds
        self.holder = new_id()  # this replica: the lease token of the runs it drives
        self.lease = lease
        self.driving: set[str] = set()  # the runs this replica holds and drives: their leases are renewed
        self._drivers: set[asyncio.Task[None]] = set()

    # -- starting ------------------------------------------------------------------------------------------------

    async def run_scenario(self, scenario_id: str, wait: bool, max_wait_ms: int | None) -> Run:
        require_uuid(scenario_id, "eval_id")
        who = tenant.require_account()
        async with self.uow.read() as work:
            scenario = await work.scenarios.owned(who.business_ids, scenario_id)
        if scenario is None:
            raise not_found("eval scenario")
        await self.standings.require_good(str(scenario.business_id), "running evals")
        assistant = await self._assistant(str(scenario.agent_id))
        [run] = await self._start([Play(scenario, assistant)], None, wait,
                                  domain.check_max_wait(max_wait_ms))
        return run

    async def run_agent(self, agent_id: str, wait: bool, max_wait_ms: int | None) -> FanOut:
        require_uuid(agent_id, "agent_id")
        assistant = await self._assistant(agent_id)  # another business's agent is not found
        scenarios = await self._scenarios_of(agent_id)
        if not scenarios:
            raise invalid("this agent has no eval scenarios to run; create some with POST /api/v1/evals")
        await self.standings.require_good(str(scenarios[0].business_id), "running evals")
        runs = await self._start([Play(s, assistant) for s in scenarios], new_id(), wait,
                                 domain.check_max_wait(max_wait_ms))
        ended = [r for r in runs if r.status == evals.ENDED]
        passed = sum(1 for r in ended if r.passed)
        return FanOut(total=len(runs), completed=len(ended), passed=passed, failed=len(ended) - passed, runs=runs)

    async def gate(self, agent_id: str, assistant_id: str, targets: list[tuple[str, Conversation]],
                   max_wait_ms: int) -> tuple[str | None, domain.GateVerdict]:
        """An agent's eval gate: every scenario of the agent against each target (channel, configuration),
        waiting up to `max_wait_ms`; (the runs' batch id, the verdict). The caller (the agents service) owns the
        agent and its assistant; the scenarios are read within the caller's businesses."""
        require_uuid(agent_id, "agent_id")
        scenarios = await self._scenarios_of(agent_id)
        plays = [Play(s, assistant_id, conversation, channel) for channel, conversation in targets for s in scenarios]
        if not plays:
            return None, domain.gate_verdict([])
        await self.standings.require_good(str(scenarios[0].business_id), "running the eval gate")
        batch_id = new_id()
        runs = await self._start(plays, batch_id, True, max_wait_ms, trigger=domain.EVAL_GATE)
        return batch_id, domain.gate_verdict(runs)

    async def _scenarios_of(self, agent_id: str) -> list[Scenario]:
        who = tenant.require_account()
        async with self.uow.read() as work:
            return await work.runs.scenarios_to_run(who.business_ids, agent_id)

    async def _start(self, plays: list[Play], batch_id: str | None, wait: bool, max_wait_ms: int,
                     trigger: str = domain.REQUEST) -> list[Run]:
        now = utcnow()
        rows: list[dict[str, Any]] = [{"id": new_id(), "business_id": p.scenario.business_id, "agent_id": p.scenario.agent_id,
                 "eval_id": p.scenario.id, "eval_name": p.scenario.name, "batch_id": batch_id, "trigger": trigger,
                 "channel": p.channel, "status": evals.QUEUED, "results": [], "created_at": now, "updated_at": now,
                 "lease_token": self.holder, "lease_until": now + self.lease}
                for p in plays]
        self.driving.update(row["id"] for row in rows)
        try:
            async with self.uow.transaction() as work:
                await work.runs.add(rows)
        except BaseException:
            self.driving.difference_update(row["id"] for row in rows)
            raise
        todo = [(row["id"], p.scenario.provider_eval_id, p.assistant_id, p.conversation)
                for row, p in zip(rows, plays, strict=True)]
        driver = self._spawn(self._drive(todo), f"eval-runs-{rows[0]['id']}")
        if wait:
            await asyncio.wait({driver}, timeout=max_wait_ms / 1000)
        async with self.uow.read() as work:
            return await work.runs.by_ids([row["id"] for row in rows])

    async def _assistant(self, agent_id: str) -> str:
        """The agent's provider assistant (an agent of another business reads as not found)."""
        return (await self.agents.agent(agent_id)).provider_assistant_id

    # -- driving -------------------------------------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        driver = asyncio.create_task(work, name=name)
        self._drivers.add(driver)
        driver.add_done_callback(self._drivers.discard)
        return driver

    async def _drive(self, todo: list[tuple[str, str, str, Conversation | None]]) -> None:
        await asyncio.gather(*(self._drive_one(*item) for item in todo))

    async def _drive_one(self, run_id: str, provider_eval_id: str | None, assistant_id: str | None,
                         conversation: Conversation | None = None, provider_run_id: str | None = None,
                         submitting_at: datetime | None = None) -> None:
        """Submit a run (unless it was: `provider_run_id`, or the provider has the run a submission begun at
        `submitting_at` made) and follow it at the provider to its end, while this replica holds it."""
        try:
            async with self.slots:
                provider_run: EvalRun | None
                if provider_run_id:
                    provider_run = await self.voice.eval_run(provider_run_id)
                else:
                    assert provider_eval_id is not None and assistant_id is not None  # a run to submit has both
                    made = None
                    if submitting_at is not None:  # a replica that stopped was submitting it
                        made = await self._made_before(provider_eval_id, assistant_id, submitting_at)
                    provider_run = (await self._adopt(run_id, made) if made is not None else
                                    await self._submit(run_id, provider_eval_id, assistant_id, conversation))
                while provider_run is not None:
                    if await self._record(run_id, provider_run) is None or provider_run.status == evals.ENDED:
                        return  # ended, or another replica took the run over
                    await asyncio.sleep(self.poll_seconds)
                    provider_run = await self.voice.eval_run(provider_run.id)
        except asyncio.CancelledError:
            raise
        except ProviderError as exc:
            if exc.status != 404:
                log.warning("eval run %s: following it at the provider failed: %s", run_id, exc)
                return  # the run stays as stored; its lease runs out to another round
            # taken over again and again, it would be looked for forever: it ends, as a run never taken
            await self._record(run_id, domain.failed_to_start("the voice provider no longer has the run"))
        except Exception as exc:  # noqa: BLE001 - the run stays as stored; its lease runs out to another round
            log.warning("eval run %s: following it at the provider failed: %s", run_id, exc)
        finally:
            self.driving.discard(run_id)

    async def _submit(self, run_id: str, provider_eval_id: str, assistant_id: str,
                      conversation: Conversation | None) -> EvalRun | None:
        """The provider's run, recorded as this run's, retried on its rate limit; None when it never took it (the
        run is ended failed) or this replica no longer holds the run."""
        if await self._write(run_id, {"submitting_at": utcnow(), "updated_at": utcnow()}) is None:
            return None
        pause = FIRST_BACKOFF_SECONDS
        for attempt in range(1, SUBMIT_TRIES + 1):
            try:
                provider_run = await self.voice.run_eval(provider_eval_id, assistant_id, conversation)
            except ProviderError as exc:
                if exc.status == 429 and attempt < SUBMIT_TRIES:
                    await asyncio.sleep(exc.retry_after if exc.retry_after else pause)
                    pause *= 2
                    continue
                await self._record(run_id, domain.failed_to_start(f"the voice provider did not take the run: "
                                                                  f"{exc.message}"))
                return None
            return await self._adopt(run_id, provider_run)
        return None

    async def _made_before(self, provider_eval_id: str, assistant_id: str, since: datetime) -> EvalRun | None:
        """The provider's run of a submission cut off before its id was recorded: the oldest run of this eval
        against this assistant since `since` that no run of ours has recorded; None when there is none."""
        made = await self.voice.eval_runs_since(provider_eval_id, assistant_id, since - CLOCK_SLACK)
        if not made:
            return None
        async with self.uow.read() as work:
            recorded = await work.runs.provider_runs_recorded([r.id for r in made])
        return next((r for r in made if r.id not in recorded), None)

    async def _adopt(self, run_id: str, provider_run: EvalRun) -> EvalRun | None:
        """`provider_run`, recorded as this run's while this replica holds it; None when it no longer does (the
        replica that took the run over finds the provider's run by `_made_before`)."""
        if await self._write(run_id, {"provider_run_id": provider_run.id, "updated_at": utcnow()}) is None:
            return None
        return provider_run

    async def _record(self, run_id: str, state: EvalRun, *, held: bool = True) -> Run | None:
        values: dict[str, Any] = {"status": state.status, "passed": state.passed, "results": list(state.results),
                  "ended_reason": state.ended_reason, "stubbed_tool_calls": list(state.tool_calls),
                  "updated_at": utcnow()}
        if state.status == evals.ENDED:
            values["ended_at"] = utcnow()
        return await self._write(run_id, values, held=held)

    async def _write(self, run_id: str, values: dict[str, Any], *, held: bool = True) -> Run | None:
        """The run after `values`; None when it has ended or (`held`) this replica no longer holds it."""
        async with self.uow.transaction() as work:
            return await work.runs.record(run_id, values, self.holder if held else None)

    # -- leases ----------------------------------------------------------------------------------------------------

    async def renew(self) -> None:
        """Keep the runs this replica drives: their leases last `lease` from now."""
        if self.driving:
            async with self.uow.transaction() as work:
                await work.runs.renew(self.holder, sorted(self.driving), self.lease)

    async def take_over(self) -> int:
        """Take over the unfinished runs nobody holds (a replica stopped, or died and their leases ran out), as
        many as this replica has room for, and drive them: submitted ones are followed, the others submitted (or
        found at the provider); how many."""
        room = self.concurrency - len(self.driving)
        if room <= 0:
            return 0
        async with self.uow.transaction() as work:
            left = await work.runs.claim(self.holder, self.lease, room)
        if left:
            log.info("taking over %d unfinished eval runs", len(left))
        for run in left:
            self.driving.add(str(run.id))
            self._spawn(self._taken_over(run), f"eval-run-{run.id}")
        return len(left)

    async def _taken_over(self, run: UnfinishedRun) -> None:
        run_id = str(run.id)
        try:
            if run.provider_run_id:
                await self._drive_one(run_id, None, None, provider_run_id=run.provider_run_id)
            elif run.trigger == domain.EVAL_GATE:  # its configuration is not stored: the change it gated was refused
                await self._record(run_id, domain.failed_to_start(
                    "the eval gate that started it stopped before it was submitted (the change was not applied)"))
            elif run.provider_eval_id is None:  # its scenario was deleted meanwhile
                await self._record(run_id, domain.failed_to_start("its scenario was deleted before it ran"))
            else:
                try:
                    with tenant.acting_as(tenant.acting_for(str(run.business_id), RESUMER)):
                        assistant = await self._assistant(str(run.agent_id))
                except ServiceError as exc:
                    await self._record(run_id, domain.failed_to_start(f"the run could not be resumed: {exc.message}"))
                    return
                await self._drive_one(run_id, run.provider_eval_id, assistant, submitting_at=run.submitting_at)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - its lease runs out to another round
            log.warning("eval run %s: taking it over failed: %s", run_id, exc)
        finally:
            self.driving.discard(run_id)

    async def stop(self) -> None:
        """At shutdown, before the provider client closes: stop following runs without recording anything, and
        release them so another replica takes them over at once (else when their leases run out)."""
        for driver in list(self._drivers):
            driver.cancel()
        await asyncio.gather(*self._drivers, return_exceptions=True)
        try:
            async with self.uow.transaction() as work:
                await work.runs.release(self.holder)
        except Exception as exc:  # noqa: BLE001 - the database may be away: the leases run out instead
            log.warning("eval runs: releasing this replica's runs failed: %s", exc)

    # -- reading -------------------------------------------------------------------------------------------------

    async def get(self, run_id: str | None, provider_run_id: str | None) -> Run:
        """One run; an unfinished one is refreshed from the provider first."""
        if run_id:
            require_uuid(run_id, "run_id")
        who = tenant.require_account()
        async with self.uow.read() as work:
            row = await work.runs.owned(who.business_ids, run_id=run_id, provider_run_id=provider_run_id)
        if row is None:
            raise not_found("eval run")
        return await self._refreshed(row)

    async def of_agent(self, agent_id: str) -> list[Run]:
        """The agent's 50 most recent runs, newest first (unfinished ones refreshed)."""
        require_uuid(agent_id, "agent_id")
        who = tenant.require_account()
        async with self.uow.read() as work:
            rows = await work.runs.of_agent(who.business_ids, agent_id, domain.RUNS_LISTED)
        return [await self._refreshed(r) for r in rows]

    async def _refreshed(self, row: Run) -> Run:
        if row.status == evals.ENDED or not row.provider_run_id:
            return row
        try:
            provider_run = await self.voice.eval_run(row.provider_run_id)
        except ServiceError as exc:
            log.warning("eval run %s: refresh failed: %s", row.id, exc)
            return row
        updated = await self._record(str(row.id), provider_run, held=False)  # the state read, by any replica
        if updated is None:  # it ended meanwhile (its driver recorded it): read it as it is now
            async with self.uow.read() as work:
                [updated] = await work.runs.by_ids([str(row.id)])
        return updated


class RunClaims(Periodic):
    """This replica's hold on eval runs: every `interval` (a third of the lease), it renews the leases of the runs
    it drives and takes over the runs nobody holds (at start: those a stopped replica left)."""

    task_name = "eval-run-claims"

    def __init__(self, runs: Runs, interval: float):
        self.runs, self.interval = runs, interval

    async def round(self) -> bool:
        await self.runs.renew()
        await self.runs.take_over()
        return False
