"""Per-workspace daily spend limits by plan (services.messaging.spend), counted in the database across every key and
replica: ten keys of one account together cannot place more calls than its plan allows in a UTC day (429 naming the
limit, Retry-After until the next UTC midnight), another account is unaffected; texts and call minutes the same;
the balance route and the dashboard show the limits and today's use.

A test does not place hundreds of calls to reach a limit: it sets the day's count (as a day of use would have left
it) in messaging.daily_spend, for today and tomorrow (UTC), so the test holds whatever the hour it runs at."""
import asyncio
from datetime import UTC, datetime, timedelta

from core import plans
from tests.calling import agent_with_number
from tests.compliance import answering_callee
from tests.texting import number, opt_in, send

STARTER = plans.DAILY_LIMITS["starter"]


async def spent_already(db, business_id: str, what: str, used: int) -> None:
    """The business's count of `what` today and tomorrow (UTC) set to `used`."""
    today = datetime.now(UTC).date()
    for day in (today, today + timedelta(days=1)):
        await db.execute("INSERT INTO messaging.daily_spend (business_id, day, what, used) VALUES ($1, $2, $3, $4) "
                         "ON CONFLICT (business_id, day, what) DO UPDATE SET used = excluded.used",
                         business_id, day, what, used)


def seconds_to_midnight() -> float:
    now = datetime.now(UTC)
    return (datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), tzinfo=UTC) - now).total_seconds()


def past_the_limit(status: int, body: dict, headers, limit: str, *words: str) -> None:
    assert status == 429 and body["error"]["code"] == "rate_limited", (status, body)
    assert body["error"]["limit"] == limit and all(w in body["error"]["message"] for w in words), body
    assert 0 < int(headers["Retry-After"]) <= seconds_to_midnight() + 2, headers.get("Retry-After")


async def balance_of(api, key, business_id: str) -> dict:
    status, body, _ = await api.request("GET", "/api/v1/balance", key=key)
    assert status == 200, body
    return next(b for b in body["businesses"] if b["business_id"] == business_id)


async def test_ten_keys_together_cannot_pass_the_accounts_daily_call_limit(api, db, account, calling_agent):
    business_id, agent = account["business_id"], calling_agent
    keys = [(await account["dashboard"].create_key(name=f"key {i}", scopes=["calls:write"]))["key"]
            for i in range(10)]
    room = 5
    await spent_already(db, business_id, "call", STARTER.calls - room)
    replies = await asyncio.gather(*(api.request("POST", "/api/v1/calls", key=keys[i % 10], json={
        "agent_id": agent["id"], "to": answering_callee()}) for i in range(20)))
    placed = [body for status, body, _ in replies if status == 201]
    assert len(placed) == room, [(s, b) for s, b, _ in replies]
    for status, body, headers in replies:
        if status != 201:
            past_the_limit(status, body, headers, "calls_per_day", f"{STARTER.calls} calls", "starter plan")
    entry = await balance_of(api, account["key"], business_id)
    assert entry["plan_id"] == "starter" and entry["resets_at"].endswith("T00:00:00Z"), entry
    assert entry["limits"] == {"calls_per_day": STARTER.calls, "call_minutes_per_day": STARTER.call_minutes,
                               "texts_per_day": STARTER.texts, "emails_per_day": STARTER.emails}
    assert entry["today"]["calls"] == STARTER.calls
    status, page, _ = await account["dashboard"].request("GET", "/dashboard", params={"business_id": business_id})
    assert status == 200 and 'id="spend"' in page, page
    assert f"<td>{STARTER.calls}</td><td>{STARTER.calls}</td>" in page  # calls placed: used and a day


async def test_another_account_is_unaffected(api, db, account, calling_agent, other_key):
    await spent_already(db, account["business_id"], "call", STARTER.calls)
    status, body, headers = await api.request("POST", "/api/v1/calls", key=account["key"], json={
        "agent_id": calling_agent["id"], "to": answering_callee()})
    past_the_limit(status, body, headers, "calls_per_day")
    status, listed, _ = await api.request("GET", "/api/v1/workspaces", key=other_key)
    other = {"key": other_key, "business_id": listed["workspaces"][0]["id"]}
    other_agent = await agent_with_number(api, other)
    try:
        status, body, _ = await api.request("POST", "/api/v1/calls", key=other_key, json={
            "agent_id": other_agent["id"], "to": answering_callee()})
        assert status == 201, body
        assert (await balance_of(api, other_key, other["business_id"]))["today"]["calls"] == 1
        status, balance, _ = await api.request("GET", "/api/v1/balance", key=other_key)
        assert account["business_id"] not in [b["business_id"] for b in balance["businesses"]]
    finally:
        await api.request("DELETE", "/api/v1/phone-numbers", key=other_key,
                          params={"phone_number": other_agent["phone_number"]})


async def test_the_day_s_call_minutes_stop_calls_too(api, db, account, calling_agent):
    await spent_already(db, account["business_id"], "call_seconds", STARTER.call_minutes * 60)
    status, body, headers = await api.request("POST", "/api/v1/calls", key=account["key"], json={
        "agent_id": calling_agent["id"], "to": answering_callee()})
    past_the_limit(status, body, headers, "call_minutes_per_day", f"{STARTER.call_minutes} call minutes")
    assert (await balance_of(api, account["key"], account["business_id"]))["today"]["call_minutes"] == \
        STARTER.call_minutes


async def test_texts_past_the_daily_limit_are_refused_whatever_key_sends_them(api, db, account, calling_agent):
    business_id = account["business_id"]
    other_key = (await account["dashboard"].create_key(name="texts", scopes=["sms:write"]))["key"]
    recipients = [number("0931"), number("0932")]
    for phone in recipients:
        await opt_in(api, account["key"], phone)
    await spent_already(db, business_id, "sms", STARTER.texts - 1)
    replies = await asyncio.gather(send(api, account["key"], calling_agent, recipients[0]),
                                   send(api, other_key, calling_agent, recipients[1]))
    assert sorted(status for status, _, _ in replies) == [200, 429], replies
    for status, body, headers in replies:
        if status == 429:
            past_the_limit(status, body, headers, "texts_per_day", f"{STARTER.texts} texts")
    assert (await balance_of(api, account["key"], business_id))["today"]["texts"] == STARTER.texts
