"""Agents and their eval scenarios for the tests."""

PROMPT = "You are the front desk of Acme Plumbing. Qualify the caller and book a visit."
SCENARIO = [
    {"role": "user", "content": "Hi, are you open on Saturdays?"},
    {"role": "assistant", "judgePlan": {"type": "regex", "content": "(?i)saturday"}},
    {"role": "user", "content": "Can I book a cleaning?"},
    {"role": "assistant", "judgePlan": {"type": "ai", "model": {
        "provider": "openai", "model": "gpt-4o", "messages": [{"role": "system", "content":
            "Reply pass if {{messages[-1]}} offers to book a cleaning, otherwise reply fail."}]}}},
]
HOURS = "Yes, we are open on Saturday from 9 to 1."
# The simulator's stand-in assistant answers by the rules in its prompt (providers/voice/vapi/simulator/standin.py).
RULES = f'You answer for Bright Dental.\nWhen the caller says "saturday", answer "{HOURS}".'


async def create_agent(api, account, **fields) -> dict:
    body = {"business_id": account["business_id"], "name": "Front desk", "system_prompt": PROMPT, **fields}
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json=body)
    assert status == 201, agent
    return agent


async def read_agent(api, account, agent_id: str) -> dict:
    status, agent, _ = await api.request("GET", "/api/v1/agents", key=account["key"], params={"id": agent_id})
    assert status == 200, agent
    return agent


async def create_eval(api, account, agent_id: str, **fields) -> tuple[int, dict]:
    """POST /api/v1/evals: a scenario of the agent (SCENARIO unless `messages`); the status and the answer."""
    body = {"agent_id": agent_id, "business_id": account["business_id"], "name": "booking.saturday",
            "description": "Saturday hours and booking", "messages": SCENARIO, **fields}
    status, made, _ = await api.request("POST", "/api/v1/evals", key=account["key"], json=body)
    return status, made


def asked(judge_plan: dict) -> list[dict]:
    """A scenario asking about Saturday, its answer judged by `judge_plan`."""
    return [{"role": "user", "content": "Are you open on Saturday?"}, {"role": "assistant", "judgePlan": judge_plan}]
