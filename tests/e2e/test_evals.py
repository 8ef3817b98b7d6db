"""Eval scenarios through the gateway: validation that names the turn and field, reads (list without turns, one
with them), PATCH replacing the turn list, delete, each mirrored to the voice provider's eval API (checked at the
simulator), a provider failure leaving both sides as they were, and another account's key."""
import asyncio

import pytest

from deploy.local.servers import wait_for_port
from tests.agents import HOURS, RULES, SCENARIO, asked, create_agent, create_eval
from tests.waiting import wait_until


@pytest.fixture
async def agent(api, account):
    return await create_agent(api, account)


async def test_a_scenario_is_mirrored_read_updated_and_deleted(api, account, agent, voice):
    key = account["key"]
    status, made = await create_eval(api, account, agent["id"])
    assert status == 201, made
    assert made["messages"] == SCENARIO and made["provider_eval_id"] and made["agent_id"] == agent["id"]
    status, mirror = await voice.request("GET", f"/eval/{made['provider_eval_id']}")
    assert status == 200 and mirror["type"] == "chat.mockConversation" and mirror["messages"] == SCENARIO

    status, listed, _ = await api.request("GET", "/api/v1/evals", key=key, params={"agent_id": agent["id"]})
    assert status == 200 and [e["id"] for e in listed["evals"]] == [made["id"]] and "messages" not in listed["evals"][0]
    status, everything, _ = await api.request("GET", "/api/v1/evals", key=key)
    assert status == 200 and made["id"] in [e["id"] for e in everything["evals"]]
    status, one, _ = await api.request("GET", "/api/v1/evals", key=key, params={"id": made["id"]})
    assert status == 200 and one["messages"] == SCENARIO

    shorter = SCENARIO[:2]
    status, updated, _ = await api.request("PATCH", "/api/v1/evals", key=key, json={
        "id": made["id"], "name": "hours.saturday", "messages": shorter})
    assert status == 200 and updated["messages"] == shorter and updated["name"] == "hours.saturday"
    status, mirror = await voice.request("GET", f"/eval/{made['provider_eval_id']}")
    assert mirror["messages"] == shorter and mirror["name"] == "hours.saturday"

    status, gone, _ = await api.request("DELETE", "/api/v1/evals", key=key, params={"id": made["id"]})
    assert status == 200 and gone == {"success": True, "id": made["id"]}
    assert (await voice.request("GET", f"/eval/{made['provider_eval_id']}"))[0] == 404
    assert (await api.request("GET", "/api/v1/evals", key=key, params={"id": made["id"]}))[0] == 404


@pytest.mark.parametrize("messages, fragment", [
    ([], "messages"),
    ([{"role": "user", "content": "Hi"}], "at least one assistant turn"),
    ([{"role": "user", "content": "Hi"}, {"role": "user", "content": "Hello?"}], "messages[1].role"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant"}], "messages[1].judgePlan is required"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "judgePlan": {"type": "exact"}}],
     "messages[1].judgePlan.content is required"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "judgePlan": {"type": "regex", "content": "(open"}}],
     "messages[1].judgePlan.content is not a valid regular expression"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "judgePlan": {"type": "ai", "model": {
        "provider": "openai", "model": "gpt-4o", "messages": [{"role": "system", "content": "Is it polite?"}]}}}],
     "pass or fail"),
    ([{"role": "user", "content": "Hi"}, {"role": "assistant", "judgePlan": {"type": "ai", "model": {
        "provider": "openai", "model": "gpt-4o", "messages": [{"role": "system",
                                                               "content": "{{transcript}}: pass or fail"}]}}}],
     "{{transcript}}"),
    ([{"role": "user", "content": "Hi", "judgePlan": {"type": "exact", "content": "x"}},
      {"role": "assistant", "judgePlan": {"type": "exact", "content": "Hello"}}], "messages[0] has unknown field"),
])
async def test_bad_turns_are_refused_naming_the_turn_and_field(api, account, agent, messages, fragment):
    status, body = await create_eval(api, account, agent["id"], messages=messages)
    assert status == 400 and body["error"]["code"] == "invalid_request", body
    assert fragment in body["error"]["message"], body


async def test_a_provider_failure_leaves_both_sides_as_they_were(api, account, agent, voice):
    key = account["key"]
    await voice.fail_next("POST", "/eval", 500, times=10)
    status, body = await create_eval(api, account, agent["id"])
    assert status == 500 and body["error"]["code"] == "provider_error", body
    await voice.clear_faults()
    status, listed, _ = await api.request("GET", "/api/v1/evals", key=key, params={"agent_id": agent["id"]})
    assert listed["evals"] == []

    status, made = await create_eval(api, account, agent["id"])
    await voice.fail_next("PATCH", "/eval", 500, times=10)
    status, body, _ = await api.request("PATCH", "/api/v1/evals", key=key, json={"id": made["id"], "name": "x.y"})
    assert status == 500 and body["error"]["code"] == "provider_error"
    await voice.fail_next("DELETE", "/eval", 500, times=10)
    status, body, _ = await api.request("DELETE", "/api/v1/evals", key=key, params={"id": made["id"]})
    assert status == 500
    await voice.clear_faults()
    status, one, _ = await api.request("GET", "/api/v1/evals", key=key, params={"id": made["id"]})
    assert one["name"] == "booking.saturday"
    assert (await voice.request("GET", f"/eval/{made['provider_eval_id']}"))[1]["name"] == "booking.saturday"


async def test_another_account_sees_and_touches_nothing(api, account, agent, other_key):
    status, made = await create_eval(api, account, agent["id"])
    for method, kwargs in (("GET", {"params": {"id": made["id"]}}), ("DELETE", {"params": {"id": made["id"]}}),
                           ("PATCH", {"json": {"id": made["id"], "name": "stolen"}})):
        status, body, _ = await api.request(method, "/api/v1/evals", key=other_key, **kwargs)
        assert status == 404 and body["error"]["code"] == "not_found", (method, body)
    for params in ({"agent_id": agent["id"]}, {}):
        status, listed, _ = await api.request("GET", "/api/v1/evals", key=other_key, params=params)
        assert status == 200 and made["id"] not in [e["id"] for e in listed["evals"]]
    status, body = await create_eval(api, {"key": other_key, "business_id": account["business_id"]}, agent["id"])
    assert status == 403, body


# -- runs --------------------------------------------------------------------------------------------------------

def rubric(text: str) -> dict:
    return {"type": "ai", "model": {"provider": "openai", "model": "gpt-4o", "messages": [
        {"role": "system", "content": f"{text} Look at {{{{messages[-1]}}}}; answer pass or fail."}]}}


@pytest.fixture
async def hours_agent(api, account):
    return await create_agent(api, account, system_prompt=RULES)


async def run(api, key, **body) -> dict:
    status, answer, _ = await api.request("POST", "/api/v1/evals/run", key=key, json=body)
    assert status == 200, answer
    return answer


@pytest.mark.parametrize("judge_plan, passes", [
    ({"type": "exact", "content": HOURS}, True),
    ({"type": "exact", "content": "We are closed."}, False),
    ({"type": "regex", "content": "(?i)open on saturday"}, True),
    ({"type": "regex", "content": "(?i)closed"}, False),
    (rubric('It must mention "Saturday".'), True),
    (rubric('It must mention "Sunday".'), False),
])
async def test_a_run_passes_or_fails_by_each_judge(api, account, hours_agent, judge_plan, passes):
    status, made = await create_eval(api, account, hours_agent["id"], messages=asked(judge_plan))
    assert status == 201, made
    result = await run(api, account["key"], eval_id=made["id"])
    assert set(result) == {"run_id", "provider_run_id", "status", "passed", "results"}
    assert result["status"] == "ended" and result["passed"] is passes, result
    [conversation] = result["results"]
    assert conversation["status"] == ("pass" if passes else "fail")
    assert conversation["messages"][1]["content"] == HOURS  # what the assistant said, graded


async def test_a_run_not_waited_for_is_polled_to_its_end_and_then_never_changes(api, account, hours_agent):
    key = account["key"]
    status, made = await create_eval(api, account, hours_agent["id"], messages=asked({"type": "exact", "content": HOURS}))
    started = await run(api, key, eval_id=made["id"], wait=False)
    assert started["status"] in ("queued", "in-progress") and started["passed"] is None

    async def run_now() -> dict:
        status, one, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"run_id": started["run_id"]})
        assert status == 200, one
        return one
    final = await wait_until(run_now, "the run to end", lambda r: r["status"] == "ended", timeout=20)
    assert final["passed"] is True and final["eval_id"] == made["id"] and final["ended_reason"]
    status, by_provider, _ = await api.request("GET", "/api/v1/evals/run", key=key,
                                               params={"provider_run_id": final["provider_run_id"]})
    assert by_provider == final
    # Changing the scenario afterwards changes no ended run.
    await api.request("PATCH", "/api/v1/evals", key=key, json={
        "id": made["id"], "messages": asked({"type": "exact", "content": "We are closed."})})
    status, again, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"run_id": started["run_id"]})
    assert again == final
    status, listed, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"agent_id": hours_agent["id"]})
    assert listed["runs"][0]["run_id"] == started["run_id"]


async def test_a_fan_out_of_20_scenarios_rides_out_the_providers_rate_limit(api, account, hours_agent, voice):
    key = account["key"]
    for n in range(20):
        status, _ = await create_eval(api, account, hours_agent["id"], name=f"hours.{n}",
                                 messages=asked({"type": "regex", "content": "(?i)saturday"}))
        assert status == 201
    status, before = await voice.request("GET", "/_simulator/requests?path=/eval/run&method=POST")

    async def in_flight() -> int:  # other tests' runs still in flight at the provider
        return (await voice.request("GET", "/_simulator/eval-runs/in-flight"))[1]["in_flight"]
    await wait_until(in_flight, "earlier runs to end", lambda n: n == 0, timeout=20)
    await voice.request("DELETE", "/_simulator/eval-runs/in-flight")
    await voice.fail_next("POST", "/eval/run", 429, times=8)  # the provider turns runs away for a while
    fan = await run(api, key, agent_id=hours_agent["id"], max_wait_ms=110000)
    assert (fan["total"], fan["completed"], fan["passed"], fan["failed"]) == (20, 20, 20, 0), fan
    status, flight = await voice.request("GET", "/_simulator/eval-runs/in-flight")
    assert 2 <= flight["peak"] <= 5, flight  # in parallel, and never more than EVAL_RUN_CONCURRENCY at once
    assert {r["status"] for r in fan["results"]} == {"ended"} and all(r["provider_run_id"] for r in fan["results"])
    assert set(fan["results"][0]) == {"eval_id", "name", "run_id", "provider_run_id", "status", "passed"}
    status, log = await voice.request("GET", "/_simulator/requests?path=/eval/run&method=POST")
    statuses = [entry["status"] for entry in log[len(before):]]
    assert statuses.count(429) == 8 and statuses.count(201) == 20


async def test_runs_refuse_bad_requests_and_other_accounts(api, account, hours_agent, other_key):
    key = account["key"]
    status, made = await create_eval(api, account, hours_agent["id"], messages=asked({"type": "exact", "content": HOURS}))
    for body in ({}, {"eval_id": made["id"], "agent_id": hours_agent["id"]}):
        status, answer, _ = await api.request("POST", "/api/v1/evals/run", key=key, json=body)
        assert status == 400 and "exactly one of" in answer["error"]["message"], answer
    status, answer, _ = await api.request("POST", "/api/v1/evals/run", key=key, json={"eval_id": made["id"],
                                                                                    "max_wait_ms": 110001})
    assert status == 400
    started = await run(api, key, eval_id=made["id"], wait=False)
    for body in ({"eval_id": made["id"]}, {"agent_id": hours_agent["id"]}):
        status, answer, _ = await api.request("POST", "/api/v1/evals/run", key=other_key, json=body)
        assert status == 404, answer
    for params in ({"run_id": started["run_id"]}, {"provider_run_id": started["provider_run_id"] or "x"}):
        status, answer, _ = await api.request("GET", "/api/v1/evals/run", key=other_key, params=params)
        assert status == 404, answer
    status, listed, _ = await api.request("GET", "/api/v1/evals/run", key=other_key,
                                          params={"agent_id": hours_agent["id"]})
    assert status == 200 and listed["runs"] == []


async def test_runs_left_unfinished_by_a_stopped_evals_process_are_driven_again(api, account, hours_agent, voice,
                                                                               stack):
    key = account["key"]
    status, made = await create_eval(api, account, hours_agent["id"], messages=asked({"type": "exact", "content": HOURS}))
    await voice.delay_next("POST", "/eval/run", 3)  # the provider is slow to take the run ...
    started = await run(api, key, eval_id=made["id"], wait=False)
    assert started["provider_run_id"] is None  # ... so it is not submitted yet when the process stops
    evals = stack.process("evals")
    await asyncio.to_thread(stack.restart_process, "evals")
    await asyncio.to_thread(wait_for_port, evals.port, 30, evals.proc, "evals", evals.log)

    async def ended():
        status, one, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"run_id": started["run_id"]})
        return one if status == 200 and one["status"] == "ended" else None
    final = await wait_until(ended, "the resumed run to end", timeout=20)
    assert final["passed"] is True and final["provider_run_id"], final["ended_reason"]
