"""Every touch counted, whatever path placed it (issue 50): calls placed with compliance skip (the API's default,
the connector's make_call) and texts sent through the API go into the touch ledger, and the frequency caps count
them, a state's cap counting the channels its law covers together (Florida: 3 calls and texts per 24 hours).

Hour-independent: a cap reached is the deferral's rule whatever the hour (the release comes first, then the next
legal window), and a run's preview judges its touches at the times they ask for, picked inside Florida's window."""
import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from core.compliance import decision as compliance
from core.compliance.rules import SMS
from core.settings import Settings
from tests.calling import place
from tests.compliance import decisions, enforced
from tests.runs import RUNS, run_of
from tests.texting import number, opt_in, send

FLORIDA_STATUTE = "Fla. Stat. § 501.616(6)"
MIAMI = ZoneInfo("America/New_York")
_suffixes = itertools.count(3100)


def florida() -> str:
    """A fresh Miami number (area code 305: Florida's row, 08:00-20:00 and at most 3 calls and texts a day)."""
    return f"+1305555{next(_suffixes):04d}"


def miami_hours_within_a_day(n: int) -> list[datetime]:
    """`n` instants an hour apart, all inside Florida's window and within the next 20 hours."""
    start = datetime.now(UTC) + timedelta(minutes=5)
    local = start.astimezone(MIAMI)
    if not 9 <= local.hour < 19 - n:
        opening = local.replace(hour=9, minute=0, second=0, microsecond=0)
        start = (opening if opening > local else opening + timedelta(days=1)).astimezone(UTC)
    return [start + timedelta(hours=i) for i in range(n)]


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


async def test_calls_placed_with_compliance_skip_count_against_floridas_cap_for_calls_and_texts(
        api, account, other_key, voice, calling_agent):
    key, to = account["key"], florida()
    await opt_in(api, key, to)
    for _ in range(3):  # skip mode: counted, not checked (placed at any hour, as the spec says)
        status, call, _ = await place(api, key, agent_id=calling_agent["id"], to=to)
        assert status == 201, call
    skipped = await decisions(api, key, phone=to)
    assert [(d["outcome"], d["rule"], d["actor"]) for d in skipped] == [("allow", "not_checked", "unchecked_call")] * 3
    assert skipped[0]["inputs"]["touches_24h"] == {"call": 2, "sms": 0}  # the two before it
    assert "checks" in skipped[0]["inputs"] and "compliance skip" in skipped[0]["source"]
    # The fourth touch, a call with compliance enforce or a text, waits for Florida's cap.
    status, body, _ = await enforced(api, key, calling_agent, to)
    assert status == 400 and body["error"]["code"] == "tcpa_violation", body
    assert body["error"]["message"].startswith(f"frequency: 3 calls to {to} in the last 24 hours; FL")
    status, text, _ = await send(api, key, calling_agent, to)
    assert status == 400 and text["error"]["code"] == "tcpa_violation", text
    assert "allows at most 3 calls and texts per 24 hours" in text["error"]["message"]
    capped = [d for d in await decisions(api, key, phone=to) if d["outcome"] == "defer"]
    assert sorted(d["channel"] for d in capped) == ["call", "sms"]
    for d in capped:
        assert (d["rule"], d["source"]) == ("frequency", FLORIDA_STATUTE)
        assert d["inputs"]["touches_24h"] == {"call": 3, "sms": 0}
        assert {"limit": 3, "channels": ["call", "sms"], "counted": 3, "source": FLORIDA_STATUTE} in d["inputs"]["caps"]
        assert d["not_before"] >= skipped[-1]["decided_at"][:16]  # a day after the oldest call, at the earliest
    # A run's call and text within the day are previewed as deferred by the cap, not allowed.
    first, second = miami_hours_within_a_day(2)
    body = run_of(account, calling_agent,
                  {"touch_id": "call", "channel": "call", "target": {"phone": to}, "scheduled_at": iso(first)},
                  {"touch_id": "text", "channel": "sms", "target": {"phone": to}, "scheduled_at": iso(second),
                   "context": {"body": "See you soon"}})
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=body)
    assert status == 200, plan
    assert {(p["touch_id"], p["outcome"], p["rule"]) for p in plan["planned"]} == {
        ("call", "defer", "frequency"), ("text", "defer", "frequency")}
    # Another business's key sees none of this callee's log.
    status, other, _ = await api.request("GET", "/api/v1/compliance/decisions", key=other_key, params={"phone": to})
    assert status == 200 and other["decisions"] == []


async def test_a_runs_planned_texts_count_with_its_calls_against_floridas_cap(api, account, calling_agent):
    key, to = account["key"], florida()
    await opt_in(api, key, to)
    times = miami_hours_within_a_day(4)
    touches = [{"touch_id": f"text-{i}", "channel": "sms", "target": {"phone": to}, "scheduled_at": iso(at),
                "context": {"body": "A reminder"}} for i, at in enumerate(times[:3])]
    touches.append({"touch_id": "call", "channel": "call", "target": {"phone": to}, "scheduled_at": iso(times[3])})
    status, plan, _ = await api.request("POST", f"{RUNS}/preview", key=key, json=run_of(account, calling_agent,
                                                                                        *touches))
    assert status == 200, plan
    by_id = {p["touch_id"]: p for p in plan["planned"]}
    assert [by_id[f"text-{i}"]["outcome"] for i in range(3)] == ["allow"] * 3
    assert (by_id["call"]["outcome"], by_id["call"]["rule"]) == ("defer", "frequency")
    assert by_id["call"]["planned_at"] >= iso(times[0] + compliance.DAY)[:16]


async def test_racing_texts_sent_through_the_api_never_pass_the_platforms_cap(api, account, calling_agent):
    key, to = account["key"], number(f"{next(_suffixes):04d}")
    await opt_in(api, key, to)
    cap = Settings.model_fields["compliance_texts_per_24h"].default  # the tests' stack keeps the default
    results = await asyncio.gather(*(send(api, key, calling_agent, to, message=f"Update {i}") for i in range(cap + 2)))
    assert sorted(status for status, _, _ in results) == [200] * cap + [400] * 2, results
    for status, body, _ in results:
        if status == 400:
            assert body["error"]["code"] == "tcpa_violation", body
            assert body["error"]["message"].startswith(f"frequency: {cap} texts to {to} in the last 24 hours; the "
                                                       "platform")
    deferred = [d for d in await decisions(api, key, phone=to) if d["outcome"] == "defer"]
    assert len(deferred) == 2 and {d["source"] for d in deferred} == {compliance.PLATFORM_CAP_SOURCES[SMS]}
    # Calls have their own platform cap: a call to the same person is not held back by the texts.
    status, call, _ = await enforced(api, key, calling_agent, to)
    assert status == 201 or call["error"]["message"].startswith("quiet hours"), call
