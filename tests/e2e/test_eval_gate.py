"""The eval gate through the gateway: an agent that opts in has each prompt change (PATCH, persona, rollback, SMS
prompt) first run its scenarios against the new configuration at the voice provider (assistantOverrides, so the
live assistant is untouched); a regression is refused with 409 and the failing results, an improvement goes
through, force applies a refused change and the version records it. Also test mode: the tool calls an assistant
makes in a run are stubbed by the provider and shown in the run."""
import pytest

from tests.agents import HOURS, RULES, asked, create_agent, create_eval, read_agent

GOOD = RULES + '\nWhen the caller says "parking", answer "Free parking is behind the building."'
# A regression: the Saturday rule is gone, so the stand-in assistant no longer gives the hours.
BAD = 'You answer for Bright Dental.\nWhen the caller says "parking", answer "Free parking is behind the building."'


@pytest.fixture
async def gated(api, account):
    """An agent with the eval gate on and one scenario that its prompt passes."""
    agent = await create_agent(api, account, system_prompt=RULES, eval_gate=True)
    status, scenario = await create_eval(api, account, agent["id"], name="hours.saturday",
                                    messages=asked({"type": "exact", "content": HOURS}))
    assert status == 201, scenario
    return agent


async def patch(api, key, **body) -> tuple[int, dict]:
    status, answer, _ = await api.request("PATCH", "/api/v1/agents", key=key, json=body)
    return status, answer


def refused(status: int, answer: dict) -> dict:
    """The eval gate's refusal: 409 conflict with error.eval_gate; returns the gate's outcome."""
    assert status == 409, answer
    error = answer["error"]
    assert error["code"] == "conflict" and "eval gate refused" in error["message"], error
    return error["eval_gate"]


async def versions(api, key, agent_id: str) -> list[dict]:
    status, listed, _ = await api.request("GET", "/api/v1/agents/versions", key=key, params={"agent_id": agent_id})
    assert status == 200, listed
    return listed["versions"]


async def test_a_regression_is_refused_and_an_improvement_goes_through(api, account, gated, voice):
    key = account["key"]
    assert (await read_agent(api, account, gated["id"]))["eval_gate"] is True

    gate = refused(*await patch(api, key, id=gated["id"], inbound_prompt=BAD))
    assert gate["status"] == "failed" and gate["failed"] >= 1 and gate["batch_id"], gate
    failing = gate["runs"][0]
    assert failing["name"] == "hours.saturday" and failing["passed"] is False and failing["trigger"] == "eval_gate"
    assert "inbound" in failing["channel"]
    said = failing["results"][0]["messages"][1]
    assert said["content"] != HOURS and said["judge"]["status"] == "fail"  # what the new prompt would have said
    # Nothing changed: not the record, not the live assistant.
    agent = await read_agent(api, account, gated["id"])
    assert agent["prompts"]["inbound"]["prompt"] == RULES and agent["version"] == 1
    status, assistant = await voice.request("GET", f"/assistant/{gated['provider_assistant_id']}")
    assert assistant["model"]["messages"][0]["content"] == RULES

    status, answer = await patch(api, key, id=gated["id"], inbound_prompt=GOOD)
    assert status == 200 and answer["updated_fields"] == ["inbound_prompt"], answer
    gate = answer["eval_gate"]
    # The inbound and outbound channels share the new configuration (no outbound prompt): one run; SMS one more.
    assert (gate["status"], gate["total"], gate["passed"], gate["failed"]) == ("passed", 2, 2, 0), gate
    assert (await read_agent(api, account, gated["id"]))["prompts"]["inbound"]["prompt"] == GOOD
    [latest, *_] = await versions(api, key, gated["id"])
    assert latest["version"] == 2 and latest["eval_gate"]["status"] == "passed"
    assert latest["eval_gate"]["batch_id"] == gate["batch_id"]

    status, runs, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"agent_id": gated["id"]})
    gate_runs = [r for r in runs["runs"] if r["trigger"] == "eval_gate"]
    assert sorted(r["channel"] for r in gate_runs) == ["inbound,outbound", "inbound,outbound", "sms", "sms"]


async def test_force_applies_a_refused_change_and_the_version_records_it(api, account, gated):
    key = account["key"]
    status, answer = await patch(api, key, id=gated["id"], inbound_prompt=BAD, force=True)
    assert status == 200 and answer["eval_gate"]["status"] == "forced" and answer["eval_gate"]["runs"] == []
    status, keys, _ = await account["dashboard"].request("GET", "/api/v1/keys")
    forcing_key = next(k["id"] for k in keys["keys"] if k["name"] == "all")
    [latest, *_] = await versions(api, key, gated["id"])
    assert latest["eval_gate"] == {**latest["eval_gate"], "status": "forced", "forced_by": forcing_key}

    # A rollback to the good version passes the gate; one back to the forced regression is refused.
    status, answer, _ = await api.request("POST", "/api/v1/agents/versions/rollback", key=key,
                                          json={"agent_id": gated["id"], "version": 1})
    assert status == 200 and answer["eval_gate"]["status"] == "passed" and answer["version"] == 3, answer
    status, answer, _ = await api.request("POST", "/api/v1/agents/versions/rollback", key=key,
                                          json={"agent_id": gated["id"], "version": 2})
    assert refused(status, answer)["status"] == "failed"
    assert (await read_agent(api, account, gated["id"]))["version"] == 3


async def test_the_sms_prompt_and_a_persona_pass_through_the_gate(api, account, gated):
    key = account["key"]
    status, answer, _ = await api.request("POST", "/api/v1/sms/update-prompt", key=key, json={
        "agent_id": gated["id"], "sms_prompt": "Reply briefly by text.", "reason": "shorter texts"})
    gate = refused(status, answer)
    assert [r["channel"] for r in gate["runs"]] == ["sms"]  # only the SMS channel changed
    status, answer, _ = await api.request("POST", "/api/v1/sms/update-prompt", key=key, json={
        "agent_id": gated["id"], "sms_prompt": RULES + "\nKeep texts short."})
    assert status == 200 and answer["success"] is True and answer["eval_gate"]["status"] == "passed", answer

    # A persona's role-play prompt carries none of the agent's rules: it fails the hours scenario.
    persona = {"agent_id": gated["id"], "persona": {"lead_name": "Dana", "scenario": "asks about a quote"}}
    status, answer, _ = await api.request("POST", "/api/v1/agents/persona", key=key, json=persona)
    assert refused(status, answer)["status"] == "failed"
    status, answer, _ = await api.request("POST", "/api/v1/agents/persona", key=key, json={**persona, "force": True})
    assert status == 200 and answer["persona_loaded"] is True and answer["eval_gate"]["status"] == "forced"


async def test_the_gate_applies_only_when_opted_in_and_to_what_the_agent_says(api, account, gated):
    key = account["key"]
    # Turning the gate off in the same write does not skip it.
    gate = refused(*await patch(api, key, id=gated["id"], inbound_prompt=BAD, eval_gate=False))
    assert gate["status"] == "failed"
    # A change no channel's configuration sees (the name, metadata) is not gated.
    status, answer = await patch(api, key, id=gated["id"], name="Front desk 2", metadata={"team": "a"})
    assert status == 200 and answer["eval_gate"] is None and answer["version"] == 2, answer
    status, answer = await patch(api, key, id=gated["id"], eval_gate=False)
    assert status == 200 and answer["updated_fields"] == ["eval_gate"] and answer["version"] == 2, answer
    status, answer = await patch(api, key, id=gated["id"], inbound_prompt=BAD)
    assert status == 200 and answer["eval_gate"] is None, answer

    # Opted in without scenarios: nothing holds the change.
    bare = await create_agent(api, account, system_prompt=RULES, eval_gate=True)
    status, answer = await patch(api, key, id=bare["id"], inbound_prompt=BAD)
    assert status == 200 and answer["eval_gate"]["status"] == "no_scenarios", answer


async def test_another_accounts_key_neither_changes_the_gate_nor_sees_its_runs(api, account, gated, other_key):
    status, answer = await patch(api, other_key, id=gated["id"], eval_gate=False, force=True)
    assert status == 404, answer
    refused(*await patch(api, account["key"], id=gated["id"], inbound_prompt=BAD))
    status, runs, _ = await api.request("GET", "/api/v1/evals/run", key=other_key, params={"agent_id": gated["id"]})
    assert status == 200 and runs["runs"] == []
    assert (await read_agent(api, account, gated["id"]))["eval_gate"] is True


# -- test mode ------------------------------------------------------------------------------------------------------

TEXTS = "I just texted you the booking link."
TEXTING_RULES = (RULES + '\nWhen the caller says "text me", call sms with {"body": "Book at example.com/book"} '
                 f'and answer "{TEXTS}".')
ASKS_FOR_A_TEXT = [{"role": "user", "content": "Can you text me the booking link?"},
                   {"role": "assistant", "judgePlan": {"type": "exact", "content": TEXTS,
                                                       "toolCalls": [{"name": "sms"}]}}]


async def test_tool_calls_in_a_run_are_shown(api, account, voice):
    """The assistant carries an SMS tool (set at the provider); the run shows the call it made. The eval gate keeps the live assistant's tools when it tries a new prompt."""
    key = account["key"]
    agent = await create_agent(api, account, system_prompt=TEXTING_RULES, eval_gate=True)
    path = f"/assistant/{agent['provider_assistant_id']}"
    status, assistant = await voice.request("GET", path)
    status, _ = await voice.request("PATCH", path, json={"model": {**assistant["model"], "tools": [{"type": "sms"}]}})
    assert status == 200
    status, scenario = await create_eval(api, account, agent["id"], name="booking.texts_link", messages=ASKS_FOR_A_TEXT)
    assert status == 201, scenario

    status, ran, _ = await api.request("POST", "/api/v1/evals/run", key=key, json={"eval_id": scenario["id"]})
    assert status == 200 and ran["passed"] is True, ran
    status, run, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"run_id": ran["run_id"]})
    # The tool calls the assistant made, read from the run's result messages (the provider's EvalRun lists none),
    # each with the test-mode stub the scenario's mock tool response gave it.
    assert run["stubbed_tool_calls"] == [{"turn": 1, "name": "sms", "arguments": {"body": "Book at example.com/book"},
                                          "result": "(test mode) The tool sms would be called. Nothing was sent to it."}]

    status, answer = await patch(api, key, id=agent["id"], inbound_prompt=TEXTING_RULES + "\nBe warm.")
    assert status == 200 and answer["eval_gate"]["status"] == "passed", answer
    status, runs, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"agent_id": agent["id"]})
    gate_runs = [r for r in runs["runs"] if r["trigger"] == "eval_gate"]
    assert gate_runs and all(r["stubbed_tool_calls"][0]["name"] == "sms" for r in gate_runs)
