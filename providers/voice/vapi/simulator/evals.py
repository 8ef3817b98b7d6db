"""Evals and eval runs: their collections (kept in the store like assistants) and the runs' lifecycle.

- `POST /eval`, `GET /eval/{id}`, `PATCH /eval/{id}`, `DELETE /eval/{id}` (→ the deleted eval), and
  `GET /eval?page=&limit=&sortOrder=&id=` → the provider's page `{"results": [...], "metadata": {"itemsPerPage",
  "totalItems", "currentPage", "totalPages", "hasNextPage", "sortOrder"}}` (newest first by default). Bodies are
  checked as the provider checks them (`eval_validation`: a bad turn is a 400 in the provider's error shape).
- `POST /eval/run` `{"type": "eval", "evalId" | "eval", "target": {"type": "assistant", "assistantId" |
  "assistant", "assistantOverrides"?}}` → 201, the run `queued`; `GET /eval/run/{id}`; `GET /eval/run` (a page,
  as above); `DELETE /eval/run/{id}` (stops it if it is under way).

A run's life (times multiplied by VOICE_SIM_TIME_SCALE): `queued` for `QUEUE_SECONDS`, then `running`
(`startedAt`), each judged turn taking `TURN_SECONDS`, then `ended` (`endedAt`, `endedReason`
"mockConversation.done", or "error" with `endedMessage` when the judge model failed, or "aborted" for a run the
simulator was stopped in the middle of, found at the next start). The eval's messages and the assistant (with
its overrides) are taken when the run is created: later changes to either do not affect it. The conversation is
played by `mock_conversation` (stand-in rules: `standin`; judges: `judges`). The ended run:

    {"id", "orgId", "type": "eval", "evalId" | "eval", "target", "status": "ended",
     "endedReason": "mockConversation.done", "createdAt", "updatedAt", "startedAt", "endedAt",
     "results": [{"status": "pass"|"fail", "messages": [...], "startedAt", "endedAt"}], "cost": 0, "costs": []}

Simulator-only rate limit: the provider documents no limit on eval runs (its OpenAPI gives `POST /eval/run` no
429), but it may refuse any request with 429 and our evals service backs off on one. So the simulator, one
organization, admits at most `limit` runs in flight (queued or running; VOICE_SIM_EVAL_RUN_LIMIT, default 10):
beyond it `POST /eval/run` answers 429 in the provider's error shape with `Retry-After` (whole seconds until the
first run in flight is due to end, at least 1). The number and the in-flight rule are the simulator's own.
"""
from __future__ import annotations

import asyncio
import copy
import logging
import math
from typing import Any

from providers.voice.vapi.simulator import eval_validation
from providers.voice.vapi.simulator.errors import ApiError
from providers.voice.vapi.simulator.judges import Judges
from providers.voice.vapi.simulator.mock_conversation import ERROR, execute
from providers.voice.vapi.simulator.resources import LIST_LIMIT_DEFAULT, Collection, check
from providers.voice.vapi.simulator.standin import StandIn, effective_assistant
from providers.voice.vapi.simulator.state import Store, now_iso

log = logging.getLogger(__name__)

QUEUE_SECONDS = 1.0  # queued → running
TURN_SECONDS = 0.5  # each judged turn
RUN_LIMIT_DEFAULT = 10
IN_FLIGHT = ("queued", "running")
ABORTED = "aborted"


def page_of(records: list[dict[str, Any]], page: int, limit: int, sort_order: str) -> dict[str, Any]:
    """The provider's paginated answer over `records` (newest first)."""
    ordered = records if sort_order == "DESC" else list(reversed(records))
    total = len(ordered)
    start = (page - 1) * limit
    return {"results": ordered[start:start + limit],
            "metadata": {"itemsPerPage": limit, "totalItems": total, "currentPage": page,
                         "totalPages": math.ceil(total / limit) if limit else 0,
                         "hasNextPage": limit > 0 and start + limit < total, "sortOrder": sort_order}}


class Paginated(Collection):
    """A collection listed as the provider's page `{results, metadata}` rather than an array."""

    filters = ("id",)

    def page(self, page: int = 1, limit: int = LIST_LIMIT_DEFAULT, sort_order: str = "DESC",
             **filters: object) -> dict[str, Any]:
        return page_of(self.store.list(self.kind, None, **filters), page, limit, sort_order)


class Evals(Paginated):
    kind, segment, label = "eval", "eval", "Eval"

    def prepare_create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(eval_validation.eval_(body))
        return body

    def prepare_update(self, record: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        check(eval_validation.eval_(body, updating=True))
        return body


class EvalRunner:
    """Runs in flight: their tasks, when each is due to end, and the organization's limit."""

    def __init__(self, store: Store, time_scale: float, limit: int, judges: Judges) -> None:
        self.store, self.time_scale, self.limit, self.judges = store, time_scale, limit, judges
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.due: dict[str, float] = {}  # run id -> loop time it is expected to end
        self.peak = 0  # the most runs in flight at once since the last reset (the control plane shows it)

    def in_flight(self) -> int:
        return sum(1 for run in self.store.list(EvalRuns.kind) if run.get("status") in IN_FLIGHT)

    def admit(self) -> None:
        """A 429 with Retry-After when the organization already has `limit` runs in flight."""
        if self.in_flight() < self.limit:
            return
        now = asyncio.get_running_loop().time()
        wait = max(1, math.ceil(min(self.due.values()) - now)) if self.due else 1
        raise ApiError(429, f"Too many eval runs in progress: at most {self.limit} at a time for this "
                            f"organization. Retry after {wait} seconds.", {"Retry-After": str(wait)})

    def start(self, run_id: str, messages: list[dict[str, Any]], assistant: dict[str, Any]) -> None:
        judged = sum(1 for m in messages if "judgePlan" in m)
        loop = asyncio.get_running_loop()
        self.due[run_id] = loop.time() + (QUEUE_SECONDS + judged * TURN_SECONDS) * self.time_scale
        self.tasks[run_id] = loop.create_task(self._run(run_id, messages, assistant))
        self.peak = max(self.peak, self.in_flight())

    def cancel(self, run_id: str) -> None:
        task = self.tasks.pop(run_id, None)
        self.due.pop(run_id, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        """Stop every run under way (they are found unfinished, and aborted, at the next start)."""
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def abort_unfinished(self) -> None:
        """Runs a previous process left queued or running end `aborted`."""
        for run in self.store.list(EvalRuns.kind):
            if run.get("status") in IN_FLIGHT:
                self.store.update(EvalRuns.kind, run["id"], {
                    "status": "ended", "endedReason": ABORTED, "endedAt": now_iso(),
                    "endedMessage": "The simulator stopped before the run ended."})

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.time_scale)

    async def _run(self, run_id: str, messages: list[dict[str, Any]], assistant: dict[str, Any]) -> None:
        try:
            await self._sleep(QUEUE_SECONDS)
            if self.store.get(EvalRuns.kind, run_id) is None:
                return
            self.store.update(EvalRuns.kind, run_id, {"status": "running", "startedAt": now_iso()})
            try:
                outcome = await execute(messages, StandIn(assistant), self.judges, lambda: self._sleep(TURN_SECONDS))
                fields = {"endedReason": outcome.ended_reason, "results": [outcome.result]}
                if outcome.ended_message:
                    fields["endedMessage"] = outcome.ended_message
            except Exception:
                log.exception("eval run %s failed", run_id)
                fields = {"endedReason": ERROR, "endedMessage": "The simulator failed to run the eval."}
            if self.store.get(EvalRuns.kind, run_id) is not None:
                self.store.update(EvalRuns.kind, run_id, {"status": "ended", "endedAt": now_iso(), **fields})
        finally:
            self.tasks.pop(run_id, None)
            self.due.pop(run_id, None)


class EvalRuns(Paginated):
    """Runs of an eval against an assistant: created `queued`, then executed by the runner."""

    kind, segment, label = "eval-run", "eval/run", "Eval Run"
    operations = frozenset({"create", "list", "get", "delete"})

    def __init__(self, store: Store, runner: EvalRunner) -> None:
        super().__init__(store)
        self.runner = runner

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        check(eval_validation.eval_run(body))
        target = body["target"]
        assistant = target["assistant"] if isinstance(target.get("assistant"), dict) else \
            self.require("assistant", target["assistantId"], "Assistant")
        scenario = body["eval"] if isinstance(body.get("eval"), dict) else self.require("eval", body["evalId"], "Eval")
        self.runner.admit()
        record = self.store.create(self.kind, {
            "type": "eval", **body, "status": "queued", "endedReason": None, "startedAt": None, "endedAt": None,
            "results": [], "cost": 0, "costs": []})
        self.runner.start(record["id"], copy.deepcopy(scenario["messages"]),
                          effective_assistant(assistant, target.get("assistantOverrides")))
        return record

    def delete(self, record_id: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        self.get(record_id)
        self.runner.cancel(record_id)
        return self.store.delete(self.kind, record_id)


def eval_collections(store: Store, runner: EvalRunner) -> dict[str, Collection]:
    return {Evals.kind: Evals(store), EvalRuns.kind: EvalRuns(store, runner)}
