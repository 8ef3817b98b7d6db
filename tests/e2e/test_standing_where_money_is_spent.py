"""Standing is checked where money is spent, also where no gateway vouched for it (core.standings): an inbound call
to a held workspace's number is answered by a recorded sentence (the provider speaks it and hangs up), never by the
agent; the eval gate of a held workspace runs nothing at the provider; a communication run's touch and the pipeline
runner leave alone a workspace the accounts service says is held, even when no standing event told the sdr service
(a subscription set directly, as a lost event would leave it)."""
import asyncio

from services.calls.inbound_service import HELD_MESSAGE
from tests.agents import HOURS, RULES, asked, create_agent, create_eval
from tests.calling import our_call, provider_calls_to, ring, settled
from tests.compliance import answering_callee
from tests.e2e.test_sdr_runner import enabled_with_a_fresh_lead, trigger
from tests.runs import create, jobs_of, run_of, touch
from tests.standing import set_subscription
from tests.texting import opt_in
from tests.waiting import wait_until


async def lifecycle(api, key, business_id, action: str) -> dict:
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                        json={"id": business_id, "action": action})
    assert status == 200, body
    return body


async def test_a_paused_workspaces_number_is_answered_by_the_recorded_message_not_the_agent(
        api, account, calling_agent, voice):
    key, business_id, agent = account["key"], account["business_id"], calling_agent
    answered = await ring(voice, agent["phone_number"], "+14155550181")
    assert answered["assistantId"] == agent["provider_assistant_id"]  # in good standing the agent answers
    await settled(api, key, (await our_call(api, key, agent["id"], answered["id"]))["id"])
    await lifecycle(api, key, business_id, "pause")

    async def rung() -> dict:  # the calls service forgets the standing it kept once it hears the change
        return await ring(voice, agent["phone_number"], "+14155550182")
    held = await wait_until(rung, "the paused workspace's number to answer with the recorded message",
                            lambda call: call.get("status") == "ended", timeout=10)
    assert held["endedReason"] == "assistant-request-returned-error" and held["endedMessage"] == HELD_MESSAGE
    assert "assistantId" not in held  # no assistant took the call: no model, no AI minutes
    status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
    assert held["id"] not in [c["conversation_id"] for c in page["calls"]]  # nothing recorded for it
    await lifecycle(api, key, business_id, "resume")

    async def answered_again() -> dict:
        return await ring(voice, agent["phone_number"], "+14155550183")
    again = await wait_until(answered_again, "the resumed workspace's agent to answer",
                             lambda call: call.get("assistantId") == agent["provider_assistant_id"], timeout=10)
    await settled(api, key, (await our_call(api, key, agent["id"], again["id"]))["id"])


async def test_a_workspace_held_without_an_event_is_not_answered_by_the_agent(api, stack, account, calling_agent,
                                                                              voice):
    """No standing event: the calls service asks the accounts service (it kept nothing for this business yet)."""
    await set_subscription(stack.database_url, "incomplete", account["business_id"])
    held = await ring(voice, calling_agent["phone_number"], "+14155550184")
    assert held["status"] == "ended" and held["endedMessage"] == HELD_MESSAGE and "assistantId" not in held


async def test_the_eval_gate_of_a_held_workspace_runs_nothing(api, account):
    key, business_id = account["key"], account["business_id"]
    agent = await create_agent(api, account, system_prompt=RULES, eval_gate=True)
    status, scenario = await create_eval(api, account, agent["id"], name="hours.saturday",
                                         messages=asked({"type": "exact", "content": HOURS}))
    assert status == 201, scenario
    await lifecycle(api, key, business_id, "pause")
    status, answer, _ = await api.request("PATCH", "/api/v1/agents", key=key,
                                          json={"id": agent["id"], "inbound_prompt": RULES + "\nBe brief."})
    assert status == 403 and answer["error"]["code"] == "forbidden", answer
    assert "eval gate" in answer["error"]["message"] and "paused" in answer["error"]["message"]
    status, runs, _ = await api.request("GET", "/api/v1/evals/run", key=key, params={"agent_id": agent["id"]})
    assert status == 200 and runs["runs"] == [], runs  # the gate ran nothing (no run recorded, none at the provider)
    status, answer, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "inbound_prompt": RULES + "\nBe brief.", "force": True})
    assert status == 200, answer  # setting up is still allowed: past the gate, nothing is spent


async def test_a_run_touch_of_a_workspace_the_accounts_service_holds_is_not_placed(api, stack, account,
                                                                                  calling_agent, voice):
    key = account["key"]
    phone = answering_callee()
    await opt_in(api, key, phone)  # the touch is legal: only the standing holds it
    status, run, _ = await create(api, key, run_of(account, calling_agent, touch("soon", phone, seconds=2)))
    assert status == 201, run
    await set_subscription(stack.database_url, "incomplete", account["business_id"])  # no event: sdr cannot know
    await asyncio.sleep(4)  # the touch is due, and the scheduler polls every 0.2 s
    [job] = await jobs_of(api, key, run["id"])
    assert job["status"] == "pending" and "not in good standing" in job["reason"], job
    assert await provider_calls_to(voice, phone) == []


async def test_the_pipeline_runner_leaves_a_workspace_the_accounts_service_holds_alone(api, stack, account,
                                                                                      calling_agent, voice):
    key, business = account["key"], account["business_id"]
    lead, phone = await enabled_with_a_fresh_lead(api, key, business)
    await set_subscription(stack.database_url, "incomplete", business)
    status, done, _ = await trigger(api, stack, business)
    assert status == 200 and [(r["businessId"], r["status"]) for r in done["runs"]] == [(business, "held")], done
    assert await provider_calls_to(voice, phone) == []
