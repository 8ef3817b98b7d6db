"""The voice provider's eval API through the real client against the simulator served in-process: evals and
their pages, runs that execute the mock conversation for real (the stand-in assistant's rules; exact, regex and
ai judges, the latter deterministic or through a chat-completions endpoint), assistant overrides, tools never executed
(simulator-only), the simulator-only run limit's 429, and a run's life from queued to ended."""
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from providers.voice.port import ProviderError
from providers.voice.vapi import evals as vapi_evals
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.simulator.app import build_app
from providers.voice.vapi.simulator.standin import FALLBACK_REPLY
from tests.integration.servers import serving
from tests.waiting import wait_until

KEY = "sim-eval-key-0123456789"
SCALE = 0.02  # a run lasts (1 + 0.5 per judged turn) × SCALE seconds

PROMPT = "\n".join([
    "You answer calls for Acme Plumbing.",
    'When the caller says "hours", answer "We are open 8am to 6pm, Monday to Friday."',
    'When the caller says "refund", answer "Refunds take 5 business days."',
    'When the caller says "book", call book_appointment with {"day": "Monday"} and answer "You are booked for Monday."',
    'When the caller says "text me", call sms with {"body": "Your quote"} and answer "I have texted you the quote."',
])
MODEL = {"provider": "openai", "model": "gpt-4.1", "messages": [{"role": "system", "content": PROMPT}]}
ASSISTANT = {"name": "Front desk", "firstMessage": "Thanks for calling Acme Plumbing!", "model": MODEL}
HOURS = "We are open 8am to 6pm, Monday to Friday."


class Sim:
    def __init__(self, server, client: VapiClient):
        self.url, self.client = str(server.make_url("")).rstrip("/"), client

    async def control(self, method: str, path: str, json=None):
        async with aiohttp.ClientSession() as s, s.request(method, f"{self.url}/_simulator{path}", json=json) as r:
            assert r.status < 300, await r.text()
            return await r.json()

    async def attempts(self, method: str, path: str) -> list:
        return [e["status"] for e in await self.control("GET", f"/requests?path={path}")
                if e["method"] == method and e["path"] == path]


@asynccontextmanager
async def simulator(folder: Path, time_scale: float = SCALE, **options):
    async with serving(build_app(folder, KEY, time_scale, **options)) as server:
        client = VapiClient(str(server.make_url("")), KEY, timeout=2.0, backoff_base=0.01, backoff_max=0.05)
        try:
            yield Sim(server, client)
        finally:
            await client.close()


@pytest.fixture
async def sim(tmp_path):
    async with simulator(tmp_path / "voice-sim") as s:
        yield s


async def ended(client: VapiClient, run_id: str, within: float = 5.0) -> dict:
    """The eval run once it has ended."""
    return await wait_until(lambda: client.get_eval_run(run_id), f"eval run {run_id} to end",
                            lambda run: run["status"] == "ended", timeout=within, interval=0.01)


async def run_inline(client: VapiClient, assistant_id: str, messages: list[dict], overrides: dict | None = None) -> dict:
    target = {"type": "assistant", "assistantId": assistant_id}
    if overrides is not None:
        target["assistantOverrides"] = overrides
    run = await client.run_eval({"type": "eval", "eval": {"type": "chat.mockConversation", "messages": messages},
                                 "target": target})
    return await ended(client, run["id"])


def verdicts(run: dict) -> list[dict]:
    return [m["judge"] for m in run["results"][0]["messages"] if "judge" in m]


def ai_plan(rubric: str, model: str = "gpt-4o") -> dict:
    return {"type": "ai", "model": {"provider": "openai", "model": model,
                                    "messages": [{"role": "system", "content": rubric}]}}


# -- evals ---------------------------------------------------------------------------------------------------------

async def test_evals_crud_and_pages(sim):
    client = sim.client
    turns = [{"role": "user", "content": "What are your hours?"},
             {"role": "assistant", "judgePlan": {"type": "exact", "content": HOURS}}]
    made = [await client.create_eval({"type": "chat.mockConversation", "name": f"hours.{i}",
                                      "description": "Opening hours", "messages": turns}) for i in range(3)]
    assert made[0]["id"] and made[0]["orgId"] and made[0]["messages"] == turns and made[0]["createdAt"].endswith("Z")
    assert await client.get_eval(made[0]["id"]) == made[0]

    changed = await client.update_eval(made[0]["id"], {"name": "hours.weekdays", "messages": turns[:1] + [
        {"role": "assistant", "judgePlan": {"type": "regex", "content": "Monday"}}]})
    assert changed["name"] == "hours.weekdays" and changed["messages"][1]["judgePlan"]["type"] == "regex"
    assert changed["description"] == "Opening hours"

    page = await client.list_evals()
    assert [e["id"] for e in page["results"]] == [m["id"] for m in reversed(made)]  # newest first
    assert page["metadata"] == {"itemsPerPage": 100, "totalItems": 3, "currentPage": 1, "totalPages": 1,
                                "hasNextPage": False, "sortOrder": "DESC"}
    first, second = await client.list_evals(limit=2), await client.list_evals(limit=2, page=2)
    assert len(first["results"]) == 2 and first["metadata"]["hasNextPage"] is True
    assert [e["id"] for e in second["results"]] == [made[0]["id"]] and second["metadata"]["totalPages"] == 2

    await client.delete_eval(made[1]["id"])
    with pytest.raises(ProviderError) as err:
        await client.get_eval(made[1]["id"])
    assert err.value.status == 404 and "Couldn't Find Eval" in err.value.message
    assert (await client.list_evals())["metadata"]["totalItems"] == 2


BAD_TURNS = [
    ([{"role": "robot", "content": "hi"}],
     "messages.0.role must be one of the following values: assistant, system, tool, user"),
    ([{"role": "user"}], "messages.0.content must be a string"),
    ([{"role": "user", "content": "hi", "mood": "happy"}], "messages.0.property mood should not exist"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {"type": "fuzzy", "content": "x"}}],
     "messages.1.judgePlan.type must be one of the following values: exact, regex, ai"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {"type": "regex", "content": "("}}],
     "messages.1.judgePlan.content must be a valid regular expression"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {"type": "ai"}}],
     "messages.1.judgePlan.model must be an object"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {
        "type": "ai", "model": {"provider": "openai", "model": "gpt-4o", "messages": []}}}],
     "messages.1.judgePlan.model.messages must be a non-empty array of {role, content} objects"),
    ([{"role": "user", "content": "x" * 1001}], "messages.0.content must be shorter than or equal to 1000 characters"),
    # AssistantMessageJudgePlanExact and ...Regex require content.
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {"type": "exact",
                                                                              "toolCalls": [{"name": "sms"}]}}],
     "messages.1.judgePlan.content must be a string"),
    # The judge models are openai, anthropic, google and custom-llm (with a url); groq is not one.
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {
        "type": "ai", "model": {"provider": "groq", "model": "llama", "messages": [{"role": "system", "content": "x"}]}}}],
     "messages.1.judgePlan.model.provider must be one of the following values: openai, anthropic, google, custom-llm"),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "judgePlan": {
        "type": "ai", "model": {"provider": "custom-llm", "model": "m", "messages": [{"role": "system", "content": "x"}],
                                "timeoutSeconds": 5}}}],
     "messages.1.judgePlan.model.timeoutSeconds must be a number from 20 to 600"),
]


@pytest.mark.parametrize(("turns", "message"), BAD_TURNS)
async def test_bad_turns_are_refused_as_the_provider_refuses_them(sim, turns, message):
    with pytest.raises(ProviderError) as err:
        await sim.client.create_eval({"type": "chat.mockConversation", "messages": turns})
    assert err.value.status == 400 and message in err.value.message


async def test_refusals_have_the_providers_error_shape(sim):
    good = await sim.client.create_eval({"type": "chat.mockConversation", "messages": BAD_TURNS[3][0][:1]})
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {KEY}"}) as s:
        async with s.patch(f"{sim.url}/eval/{good['id']}", json={"messages": BAD_TURNS[3][0]}) as r:
            assert r.status == 400
            assert await r.json() == {"message": [BAD_TURNS[3][1]], "error": "Bad Request", "statusCode": 400}
    assert (await sim.client.get_eval(good["id"]))["messages"] == BAD_TURNS[3][0][:1]  # unchanged


# -- runs and judges -----------------------------------------------------------------------------------------------

async def test_exact_judge_passes_and_fails(sim):
    client = sim.client
    assistant = await client.create_assistant(ASSISTANT)
    passing = await client.create_eval({"type": "chat.mockConversation", "name": "greeting.then.hours", "messages": [
        {"role": "assistant", "judgePlan": {"type": "exact", "content": "thanks for calling ACME plumbing!"}},
        {"role": "user", "content": "What are your hours?"},
        {"role": "assistant", "judgePlan": {"type": "exact", "content": HOURS}}]})
    run = await client.run_eval({"type": "eval", "evalId": passing["id"],
                                 "target": {"type": "assistant", "assistantId": assistant["id"]}})
    assert run["status"] == "queued" and run["evalId"] == passing["id"]
    run = await ended(client, run["id"])
    assert run["endedReason"] == "mockConversation.done" and run["results"][0]["status"] == "pass"
    assert run["results"][0]["messages"] == [
        {"role": "assistant", "content": "Thanks for calling Acme Plumbing!", "judge": {"status": "pass"}},
        {"role": "user", "content": "What are your hours?"},
        {"role": "assistant", "content": HOURS, "judge": {"status": "pass"}}]

    failing = await run_inline(client, assistant["id"], [
        {"role": "user", "content": "Can you fix my roof?"},
        {"role": "assistant", "judgePlan": {"type": "exact", "content": "Sure, we fix roofs too."},
         "continuePlan": {"exitOnFailureEnabled": True}},
        {"role": "user", "content": "What are your hours?"},
        {"role": "assistant", "judgePlan": {"type": "exact", "content": HOURS}}])
    assert failing["endedReason"] == "mockConversation.done" and failing["results"][0]["status"] == "fail"
    # The first reply is the firstMessage (no rule matches, the assistant had not spoken); the run stops there.
    assert failing["results"][0]["messages"] == [
        {"role": "user", "content": "Can you fix my roof?"},
        {"role": "assistant", "content": "Thanks for calling Acme Plumbing!", "judge": {
            "status": "fail", "failureReason": "Expected exact match: 'Sure, we fix roofs too.' but got: "
                                               "'Thanks for calling Acme Plumbing!'"}}]


async def test_regex_judge_passes_and_fails(sim):
    assistant = await sim.client.create_assistant(ASSISTANT)
    turns = [{"role": "user", "content": "Hi, what are your HOURS this week?"}]
    passing = await run_inline(sim.client, assistant["id"], turns + [
        {"role": "assistant", "judgePlan": {"type": "regex", "content": r"open \d+am to \d+pm"}},
        {"role": "user", "content": "And can I get a refund?"},
        {"role": "assistant", "judgePlan": {"type": "regex", "content": "/BUSINESS DAYS/i"}}])
    assert passing["results"][0]["status"] == "pass" and verdicts(passing) == [{"status": "pass"}] * 2

    failing = await run_inline(sim.client, assistant["id"], turns + [
        {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?i)closed"}}])
    assert failing["results"][0]["status"] == "fail"
    assert verdicts(failing)[0]["failureReason"] == f"Expected a match for '(?i)closed' but got: {HOURS!r}"


async def test_ai_judge_without_a_judge_model_reads_the_rubric(sim):
    assistant = await sim.client.create_assistant(ASSISTANT)
    refund = [{"role": "user", "content": "I want a refund"}]
    passing = await run_inline(sim.client, assistant["id"], refund + [{"role": "assistant", "judgePlan": ai_plan(
        'Judge {{messages[-1]}}. It must mention "5 business days" and must not mention "sorry". '
        "Answer pass or fail.")}])
    assert passing["results"][0]["status"] == "pass" and verdicts(passing) == [{"status": "pass"}]

    missing = await run_inline(sim.client, assistant["id"], refund + [{"role": "assistant", "judgePlan": ai_plan(
        'The reply must mention "refund approved". Answer pass or fail.')}])
    assert verdicts(missing) == [{"status": "fail", "failureReason": 'the message does not mention "refund approved"'}]

    # No phrase: a real answer passes, the fallback fails.
    unhelpful = await run_inline(sim.client, assistant["id"], [
        {"role": "user", "content": "What are your hours?"},
        {"role": "assistant", "judgePlan": ai_plan("Is {{messages[-1]}} helpful? Answer pass or fail.")},
        {"role": "user", "content": "Can you fix my roof?"},
        {"role": "assistant", "judgePlan": ai_plan("Is {{messages[-1]}} helpful? Answer pass or fail.")}])
    assert unhelpful["results"][0]["status"] == "fail"
    assert [v["status"] for v in verdicts(unhelpful)] == ["pass", "fail"]
    assert unhelpful["results"][0]["messages"][-1]["content"] == FALLBACK_REPLY


async def test_ai_judge_through_a_chat_completions_endpoint(tmp_path, monkeypatch):
    asked: list[dict] = []
    behaviour = {"status": 200}

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        asked.append(body)
        if behaviour["status"] != 200:
            return web.json_response({"error": {"message": "overloaded"}}, status=behaviour["status"])
        verdict = "pass" if "5 business days" in body["messages"][-1]["content"] else "FAIL."
        return web.json_response({"choices": [{"index": 0, "message": {"role": "assistant", "content": verdict}}]})

    judge = web.Application()
    judge.router.add_post("/v1/chat/completions", completions)
    plan = {"type": "ai", "model": {"provider": "openai", "model": "gpt-4o-mini", "messages": [
        {"role": "system", "content": "You judge calls. Conversation: {{messages}}. Answer exactly pass or fail."},
        {"role": "user", "content": "Judge this message: {{ messages[-1] }}"}]}}
    async with serving(judge) as judge_server:
        monkeypatch.setenv("EVAL_JUDGE_URL", str(judge_server.make_url("/v1")))
        async with simulator(tmp_path / "voice-sim") as sim:
            assistant = await sim.client.create_assistant(ASSISTANT)
            passing = await run_inline(sim.client, assistant["id"], [
                {"role": "user", "content": "I want a refund"}, {"role": "assistant", "judgePlan": plan}])
            failing = await run_inline(sim.client, assistant["id"], [
                {"role": "user", "content": "What are your hours?"}, {"role": "assistant", "judgePlan": plan}])
            behaviour["status"] = 503
            broken = await run_inline(sim.client, assistant["id"], [
                {"role": "user", "content": "I want a refund"}, {"role": "assistant", "judgePlan": plan}])

    assert passing["results"][0]["status"] == "pass" and verdicts(passing) == [{"status": "pass"}]
    assert failing["results"][0]["status"] == "fail"
    assert verdicts(failing) == [{"status": "fail", "failureReason": "the judge answered fail"}]
    assert asked[0]["model"] == "gpt-4o-mini" and asked[0]["temperature"] == 0
    system, user = asked[0]["messages"]
    assert system["role"] == "system" and "{{" not in system["content"] + user["content"]
    assert ('[{"role": "user", "content": "I want a refund"}, {"role": "assistant", "content": '
            '"Refunds take 5 business days."}]') in system["content"]
    assert user["content"] == 'Judge this message: {"role": "assistant", "content": "Refunds take 5 business days."}'
    assert broken["endedReason"] == "error" and "HTTP 503" in broken["endedMessage"]
    assert broken["results"][0]["status"] == "fail"


async def test_assistant_overrides_apply_to_the_run_only(sim):
    client = sim.client
    assistant = await client.create_assistant(ASSISTANT)
    turns = [{"role": "assistant", "judgePlan": {"type": "exact", "content": "Hi Sam, this is the night line."}},
             {"role": "user", "content": "What are your hours tonight?"},
             {"role": "assistant", "judgePlan": {"type": "exact", "content": "We are closed at night."}}]
    overrides = {"firstMessage": "Hi {{name}}, this is the night line.", "variableValues": {"name": "Sam"},
                 "model": {"provider": "openai", "model": "gpt-4.1", "messages": [{"role": "system", "content":
                           'When the caller says "hours", answer "We are closed at night."'}]}}
    night = await run_inline(client, assistant["id"], turns, overrides)
    assert night["results"][0]["status"] == "pass" and night["target"]["assistantOverrides"] == overrides

    day = await run_inline(client, assistant["id"], turns)  # the stored assistant is as it was
    assert day["results"][0]["status"] == "fail"
    assert [m.get("content") for m in day["results"][0]["messages"]] == [
        "Thanks for calling Acme Plumbing!", "What are your hours tonight?", HOURS]
    assert await client.get_assistant(assistant["id"]) == assistant

    with pytest.raises(ProviderError) as err:
        await client.run_eval({"type": "eval", "eval": {"type": "chat.mockConversation", "messages": turns},
                               "target": {"type": "assistant", "assistantId": assistant["id"],
                                          "assistantOverrides": {"silenceTimeoutSeconds": 5}}})
    assert err.value.status == 400
    assert "target.assistantOverrides.property silenceTimeoutSeconds should not exist" in err.value.message


async def test_an_assistant_that_waits_for_the_user_never_opens_with_its_first_message(sim):
    assistant = await sim.client.create_assistant(ASSISTANT)
    turns = [{"role": "user", "content": "Hello?"},
             {"role": "assistant", "judgePlan": {"type": "exact", "content": "Thanks for calling Acme Plumbing!"}}]
    opens = await run_inline(sim.client, assistant["id"], turns)
    waits = await run_inline(sim.client, assistant["id"], turns, {"firstMessageMode": "assistant-waits-for-user"})
    assert verdicts(opens)[0]["status"] == "pass" and verdicts(waits)[0]["status"] == "fail"
    assert waits["results"][0]["messages"][1]["content"] == "I'm sorry, I can't help with that."


async def test_the_simulator_never_executes_a_tool(sim):
    hits: list[str] = []

    async def tool_server(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"results": [{"result": "booked for real"}]})

    tools_app = web.Application()
    tools_app.router.add_post("/{tail:.*}", tool_server)
    async with serving(tools_app) as tools:
        tooled = await sim.client.create_assistant({**ASSISTANT, "name": "Booker", "model": {**MODEL, "tools": [
            {"type": "function", "function": {"name": "book_appointment", "parameters": {"type": "object", "properties": {}}},
             "server": {"url": str(tools.make_url("/book"))}},
            {"type": "sms"}]}})
        plain = await sim.client.create_assistant(ASSISTANT)
        turns = [{"role": "user", "content": "Please book me in"},
                 {"role": "assistant", "judgePlan": {"type": "exact", "content": "You are booked for Monday.",
                                                     "toolCalls": [{"name": "book_appointment",
                                                                    "arguments": {"day": "Monday"}}]}},
                 {"role": "tool", "content": '{"status": "booked"}'},
                 {"role": "user", "content": "Can you text me the quote?"},
                 {"role": "assistant", "judgePlan": {"type": "regex", "content": "texted",
                                                     "toolCalls": [{"name": "sms", "arguments": {"body": "(?i)quote"}}]}}]
        run = await run_inline(sim.client, tooled["id"], turns)
        without = await run_inline(sim.client, plain["id"], turns)

    assert run["results"][0]["status"] == "pass", run["results"]
    assert run["results"][0]["messages"][1] == {
        "role": "assistant", "content": "You are booked for Monday.",
        "toolCalls": [{"name": "book_appointment", "arguments": {"day": "Monday"}}], "judge": {"status": "pass"}}
    assert run["results"][0]["messages"][4]["toolCalls"] == [{"name": "sms", "arguments": {"body": "Your quote"}}]
    assert "stubbedToolCalls" not in run  # not a field of the provider's EvalRun
    assert hits == []  # the tool's server was never called (simulator-only: see mock_conversation)
    # As we read the run: each call with the mock tool response that answered it (none for the text).
    assert [(c["turn"], c["name"], c["result"]) for c in vapi_evals.run_of(run).tool_calls] == [
        (1, "book_appointment", '{"status": "booked"}'), (4, "sms", None)]

    # An assistant without the tools answers without calling them.
    assert without["results"][0]["status"] == "fail"
    assert all("toolCalls" not in m for m in without["results"][0]["messages"])
    assert verdicts(without)[0] == {"status": "fail",
                                    "failureReason": "expected tool calls ['book_appointment'] but got []"}


# -- the run limit and a run's life --------------------------------------------------------------------------------

async def test_run_starts_beyond_the_limit_get_429_with_retry_after(tmp_path, monkeypatch):
    monkeypatch.setenv("VOICE_SIM_EVAL_RUN_LIMIT", "2")
    async with simulator(tmp_path / "voice-sim", time_scale=0.3) as sim:
        assistant = await sim.client.create_assistant(ASSISTANT)
        body = {"type": "eval", "target": {"type": "assistant", "assistantId": assistant["id"]},
                "eval": {"type": "chat.mockConversation", "messages": [
                    {"role": "user", "content": "hours?"},
                    {"role": "assistant", "judgePlan": {"type": "exact", "content": HOURS}}]}}
        first, second = await sim.client.run_eval(body), await sim.client.run_eval(body)
        with pytest.raises(ProviderError) as err:
            await sim.client.run_eval(body)
        assert err.value.status == 429 and err.value.retry_after == 1.0
        assert "Too many eval runs in progress: at most 2" in err.value.message
        assert await sim.attempts("POST", "/eval/run") == [201, 201, 429]  # not retried by the client

        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {KEY}"}) as s:
            async with s.post(f"{sim.url}/eval/run", json=body) as r:
                assert r.status == 429 and r.headers["Retry-After"] == "1"
                assert (await r.json())["error"] == "Too Many Requests"

        await ended(sim.client, first["id"])
        await ended(sim.client, second["id"])
        third = await sim.client.run_eval(body)  # room again
        assert (await ended(sim.client, third["id"]))["results"][0]["status"] == "pass"

        # The control plane can force it too: an injected 429 says Retry-After: 1.
        await sim.control("POST", "/faults", {"method": "POST", "path": "/eval/run", "status": 429})
        with pytest.raises(ProviderError) as err:
            await sim.client.run_eval(body)
        assert err.value.status == 429 and err.value.retry_after == 1.0
        assert (await sim.attempts("POST", "/eval/run"))[-2:] == [201, 429]


async def test_a_run_goes_from_queued_through_running_to_ended(tmp_path):
    async with simulator(tmp_path / "voice-sim", time_scale=0.2) as sim:
        assistant = await sim.client.create_assistant(ASSISTANT)
        run = await sim.client.run_eval({"type": "eval", "target": {"type": "assistant", "assistantId": assistant["id"]},
                                         "eval": {"type": "chat.mockConversation", "messages": [
                                             {"role": "user", "content": "hours?"},
                                             {"role": "assistant", "judgePlan": {"type": "regex", "content": "open"}},
                                             {"role": "user", "content": "refund?"},
                                             {"role": "assistant", "judgePlan": {"type": "regex", "content": "days"}}]}})
        assert run["status"] == "queued" and run["startedAt"] is None and run["results"] == []
        seen = [run]

        async def status() -> str:  # each change of status seen on the way
            current = await sim.client.get_eval_run(run["id"])
            if current["status"] != seen[-1]["status"]:
                seen.append(current)
            return current["status"]
        await wait_until(status, f"eval run {run['id']} to end", lambda s: s == "ended", interval=0.01)
        assert [r["status"] for r in seen] == ["queued", "running", "ended"]
        running, done = seen[1], seen[2]
        assert running["startedAt"] and running["endedAt"] is None and running["results"] == []
        assert done["endedAt"] >= done["startedAt"] == running["startedAt"]
        assert done["endedReason"] == "mockConversation.done" and done["results"][0]["status"] == "pass"
        page = await sim.client.list_eval_runs(limit=10)
        assert page["results"][0] == done and page["metadata"]["totalItems"] == 1


async def test_a_run_cut_short_by_a_stop_is_aborted_at_the_next_start(tmp_path):
    folder = tmp_path / "voice-sim"
    async with simulator(folder, time_scale=50) as sim:  # it stays queued
        assistant = await sim.client.create_assistant(ASSISTANT)
        run = await sim.client.run_eval({"type": "eval", "target": {"type": "assistant", "assistantId": assistant["id"]},
                                         "eval": {"type": "chat.mockConversation", "messages": [
                                             {"role": "user", "content": "hours?"},
                                             {"role": "assistant", "judgePlan": {"type": "regex", "content": "open"}}]}})
    async with simulator(folder) as sim:
        again = await sim.client.get_eval_run(run["id"])
    assert again["status"] == "ended" and again["endedReason"] == "aborted" and again["endedMessage"]
