"""The six analytics reports against seeded calls and leads in three businesses on three time zones: every
figure of every report is computed here, independently of the production queries, from the seeded rows (local
dates with zoneinfo, plain Python counting) and compared field by field. Also: no data, a key bound to one
business, another account's key, and the scopes."""
import json
import random
import uuid
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.agents import create_agent

ZONES = {"signup": "UTC", "West": "America/Los_Angeles", "East": "Asia/Tokyo"}
CALL_STATUSES = ("completed", "completed", "completed", "no-answer", "busy", "voicemail", "failed", "in-progress")
LEAD_STATUSES = ("new", "contacted", "qualified", "converted", "lost", "spam")
SOURCES = ("web", "phone_call", "referral")


def r2(x: float) -> float:
    return round(x, 2)


class Seeded:
    """The seeded world and the figures the reports must show, worked out from it."""

    def __init__(self, businesses: dict, agents: list[dict], calls: list[dict], leads: list[dict]):
        self.businesses, self.agents, self.calls, self.leads = businesses, agents, calls, leads
        self.zone = {b["id"]: b["timezone"] for b in businesses.values()}

    def local(self, row) -> date:
        return row["created_at"].astimezone(ZoneInfo(self.zone[row["business_id"]])).date()

    def today(self, business_id: str) -> date:
        return datetime.now(ZoneInfo(self.zone[business_id])).date()

    def within(self, rows, days: int, businesses=None) -> list[dict]:
        return [r for r in rows if (businesses is None or r["business_id"] in businesses)
                and self.local(r) >= self.today(r["business_id"]) - timedelta(days=days - 1)]

    def period_dates(self, days: int, businesses) -> list[date]:
        return sorted({self.today(b) - timedelta(days=n) for b in businesses for n in range(days)})


async def insert_calls(db, rows):
    await db.executemany(
        "INSERT INTO calls.calls (id, business_id, agent_id, agent_name, direction, status, to_number, max_duration, "
        "compliance, variables, duration, created_at, updated_at) VALUES ($1, $2, $3, 'seeded', 'outbound', $4, "
        "'+14155550100', 600, 'skip', '{}'::jsonb, $5, $6, $6)",
        [(r["id"], r["business_id"], r["agent_id"], r["status"], r["duration"], r["created_at"]) for r in rows])


async def insert_leads(db, rows):
    await db.executemany(
        "INSERT INTO sdr.leads (id, business_id, agent_id, name, status, source, score, score_confidence, "
        "score_explanation, score_factors, last_activity_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, "
        "50, 'low', 'seeded', '{}', $7, $7, $7)",
        [(r["id"], r["business_id"], r["agent_id"], r["name"], r["status"], r["source"], r["created_at"])
         for r in rows])


@pytest.fixture
async def seeded(api, account, db) -> Seeded:
    key, rng = account["key"], random.Random(20261123)
    status, signup_ws, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"id": account["business_id"]})
    assert status == 200, signup_ws
    businesses = {"signup": {"id": account["business_id"], "name": signup_ws["workspaces"][0]["name"],
                             "timezone": "UTC"}}
    for name in ("West", "East"):
        status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=key,
                                          json={"name": name, "timezone": ZONES[name]})
        assert status == 201 and ws["timezone"] == ZONES[name], ws
        businesses[name] = {"id": ws["id"], "name": name, "timezone": ZONES[name]}
    agents = []
    for business, name in (("West", "Ava"), ("West", "Ben"), ("East", "Cho"), ("signup", "Dee"), ("East", "Eve")):
        made = await create_agent(api, {**account, "business_id": businesses[business]["id"]}, name=name)
        agents.append({"id": made["id"], "name": name, "business_id": businesses[business]["id"]})
    now = datetime.now(UTC)
    calls, leads = [], []
    for _ in range(160):
        agent = rng.choice(agents[:4])  # Eve has no calls: she shows with zeros
        calls.append({"id": str(uuid.uuid4()), "business_id": agent["business_id"], "agent_id": agent["id"],
                      "status": rng.choice(CALL_STATUSES), "duration": rng.randrange(0, 600),
                      "created_at": now - timedelta(minutes=call_age(rng))})
    for n in range(90):
        agent = rng.choice(agents + [None])
        business = agent["business_id"] if agent else businesses["West"]["id"]
        leads.append({"id": str(uuid.uuid4()), "business_id": business, "agent_id": agent["id"] if agent else None,
                      "name": f"Lead {n}", "status": rng.choice(LEAD_STATUSES), "source": rng.choice(SOURCES),
                      "created_at": now - timedelta(minutes=rng.randrange(5, 40 * 24 * 60))})
    await insert_calls(db, calls)
    await insert_leads(db, leads)
    return Seeded(businesses, agents, calls, leads)


def call_age(rng: random.Random) -> int:
    """A seeded call's age in minutes, up to 40 days, never 10 to 13 days: three days without calls leave a whole
    local day empty in every zone, so a timeline always shows a gap (whatever the time of day the test runs at)."""
    while True:
        minutes = rng.randrange(5, 40 * 24 * 60)
        if not 10 * 24 * 60 <= minutes < 13 * 24 * 60:
            return minutes


async def report(api, key, name: str, **params) -> dict:
    status, body, _ = await api.request("GET", f"/api/v1/analytics/{name}", key=key, params=params)
    assert status == 200, body
    return body


def call_figures(rows) -> dict:
    total, duration = len(rows), sum(r["duration"] for r in rows)
    return {"total": total, "completed": sum(r["status"] == "completed" for r in rows),
            "total_duration_seconds": duration, "avg_duration_seconds": r2(duration / total) if total else 0.0}


def lead_figures(rows) -> dict:
    total, converted = len(rows), sum(r["status"] == "converted" for r in rows)
    return {"total": total, "converted": converted, "conversion_rate": r2(converted * 100 / total) if total else 0.0}


@pytest.mark.parametrize("days", [30, 7])
async def test_dashboard(api, account, seeded, days):
    s, everyone = seeded, set(seeded.zone)
    body = await report(api, account["key"], "dashboard", days=days)
    calls, leads = s.within(s.calls, days), s.within(s.leads, days)
    dates = s.period_dates(days, everyone)
    assert body["period"] == {"days": days, "since": dates[0].isoformat()}
    assert body["calls"] == call_figures(calls)
    figures = lead_figures(leads)
    assert body["leads"]["total"] == figures["total"]
    assert body["leads"]["conversion_rate"] == figures["conversion_rate"]
    assert body["leads"]["by_status"] == dict(sorted(Counter(r["status"] for r in leads).items()))
    newest = sorted(s.leads, key=lambda r: (r["created_at"], r["id"]), reverse=True)[:5]
    assert [lead["id"] for lead in body["leads"]["recent"]] == [r["id"] for r in newest if r in leads]
    assert body["agents"]["total"] == len(s.agents)
    by_agent = Counter(r["agent_id"] for r in calls)
    top = sorted(by_agent, key=lambda a: (-by_agent[a], a))[:5]
    names = {a["id"]: a["name"] for a in s.agents}
    assert body["agents"]["top_by_calls"] == [
        {"agent_id": a, "name": names[a], "count": by_agent[a],
         "total_duration": sum(r["duration"] for r in calls if r["agent_id"] == a),
         "avg_duration": r2(sum(r["duration"] for r in calls if r["agent_id"] == a) / by_agent[a])} for a in top]


@pytest.mark.parametrize("group_by", ["day", "week"])
async def test_calls_timeline_has_every_bucket(api, account, seeded, group_by):
    s = seeded
    body = await report(api, account["key"], "calls", days=30, group_by=group_by)
    calls = s.within(s.calls, 30)
    dates = s.period_dates(30, set(s.zone))
    assert body["period"] == {"days": 30, "since": dates[0].isoformat(), "group_by": group_by}
    figures = call_figures(calls)
    assert body["summary"] == {"total_calls": figures["total"], "total_duration_seconds":
                               figures["total_duration_seconds"], "avg_duration_seconds": figures["avg_duration_seconds"]}

    def bucket(d: date) -> date:
        return d if group_by == "day" else d - timedelta(days=d.weekday())
    buckets = sorted({bucket(d) for d in dates})
    expected = []
    for b in buckets:
        rows = [r for r in calls if bucket(s.local(r)) == b]
        f = call_figures(rows)
        expected.append({"date": b.isoformat(), "total": f["total"], "completed": f["completed"],
                         "total_duration": f["total_duration_seconds"],
                         "avg_duration_seconds": f["avg_duration_seconds"],
                         "statuses": dict(sorted(Counter(r["status"] for r in rows).items()))})
    assert body["timeline"] == expected
    assert any(entry["total"] == 0 for entry in body["timeline"]) or group_by == "week"  # a gap is still there


async def test_calls_of_one_agent(api, account, seeded, other_key):
    s, agent = seeded, seeded.agents[0]
    body = await report(api, account["key"], "calls", days=14, agent_id=agent["id"])
    mine = [r for r in s.within(s.calls, 14) if r["agent_id"] == agent["id"]]
    assert body["summary"]["total_calls"] == len(mine)
    assert sum(e["total"] for e in body["timeline"]) == len(mine)
    status, answer, _ = await api.request("GET", "/api/v1/analytics/calls", key=other_key,
                                          params={"agent_id": agent["id"]})
    assert status == 404 and answer["error"]["code"] == "not_found", answer


@pytest.mark.parametrize("source", [None, "web"])
async def test_funnel(api, account, seeded, source):
    s = seeded
    body = await report(api, account["key"], "funnel", days=30, **({"source": source} if source else {}))
    leads = [r for r in s.within(s.leads, 30) if source is None or r["source"] == source]
    rank = {"new": 0, "contacted": 1, "qualified": 2, "converted": 3}
    reached = [sum(1 for r in leads if stage == 0 or rank.get(r["status"], -1) >= stage) for stage in range(4)]
    assert body["total_leads"] == len(leads) and body["lost"] == sum(r["status"] == "lost" for r in leads)
    assert body["funnel"] == [
        {"stage": stage, "count": reached[i], "rate_from_top": r2(reached[i] * 100 / len(leads)) if leads else 0.0,
         "dropoff_rate": 0.0 if i == 0 else (r2((reached[i - 1] - reached[i]) * 100 / reached[i - 1])
                                             if reached[i - 1] else 0.0)}
        for i, stage in enumerate(("new", "contacted", "qualified", "converted"))]


async def test_agents(api, account, seeded):
    s = seeded
    body = await report(api, account["key"], "agents", days=30)
    calls, leads = s.within(s.calls, 30), s.within(s.leads, 30)
    expected = []
    for a in s.agents:
        f = call_figures([r for r in calls if r["agent_id"] == a["id"]])
        expected.append({"agent_id": a["id"], "agent_name": a["name"],
                         "calls": {k: f[k] for k in ("total", "completed", "avg_duration_seconds",
                                                     "total_duration_seconds")},
                         "leads": lead_figures([r for r in leads if r["agent_id"] == a["id"]])})
    expected.sort(key=lambda e: (-e["calls"]["total"], e["agent_name"], e["agent_id"]))
    assert body["agents"] == expected
    assert expected[-1]["agent_name"] == "Eve" and expected[-1]["calls"]["total"] == 0  # listed with zeros
    one = await report(api, account["key"], "agents", days=30, agent_id=s.agents[1]["id"])
    assert one["agents"] == [e for e in expected if e["agent_id"] == s.agents[1]["id"]]


async def test_weekly(api, account, seeded):
    s = seeded
    body = await report(api, account["key"], "weekly")

    def week_of(row) -> int:  # 0: this week, 1: last week, in the row's business's zone
        today = s.today(row["business_id"])
        return ((today - timedelta(days=today.weekday())) - (s.local(row) - timedelta(days=s.local(row).weekday()))).days // 7

    def change(this, last):
        return (None if this else 0.0) if last == 0 else r2((this - last) * 100 / last)
    for name, rows in (("calls", s.calls), ("leads", s.leads)):
        this, last = sum(week_of(r) == 0 for r in rows), sum(week_of(r) == 1 for r in rows)
        assert body[name] == {"this_week": this, "last_week": last, "change": change(this, last)}, name
    monday = datetime.now(UTC).date() - timedelta(days=datetime.now(UTC).date().weekday())
    assert body["period"]["this_week"] == {"start": monday.isoformat(), "end": (monday + timedelta(6)).isoformat()}
    counts = Counter(r["agent_id"] for r in s.calls if week_of(r) == 0)
    names = {a["id"]: a["name"] for a in s.agents}
    assert body["top_agents"] == [
        {"agent_id": a, "agent_name": names[a], "total_calls": counts[a],
         "total_duration_seconds": sum(r["duration"] for r in s.calls if r["agent_id"] == a and week_of(r) == 0)}
        for a in sorted(counts, key=lambda a: (-counts[a], a))[:5]]


async def test_businesses_and_a_key_bound_to_one(api, account, seeded):
    s = seeded
    body = await report(api, account["key"], "businesses", days=30)
    calls, leads = s.within(s.calls, 30), s.within(s.leads, 30)
    expected = []
    for b in s.businesses.values():
        f = call_figures([r for r in calls if r["business_id"] == b["id"]])
        expected.append({"business_id": b["id"], "business_name": b["name"],
                         "calls": {k: f[k] for k in ("total", "completed", "avg_duration_seconds")},
                         "leads": lead_figures([r for r in leads if r["business_id"] == b["id"]])})
    assert body["businesses"] == expected

    west = s.businesses["West"]["id"]
    bound = (await account["dashboard"].create_key(name="west", scopes=["*"], business_id=west))["key"]
    only = await report(api, bound, "businesses", days=30)
    assert only["businesses"] == [e for e in expected if e["business_id"] == west]
    dash = await report(api, bound, "dashboard", days=30)
    assert dash["calls"] == call_figures([r for r in calls if r["business_id"] == west])
    assert dash["agents"]["total"] == sum(a["business_id"] == west for a in s.agents)


async def test_another_account_sees_nothing_and_no_data_reads_as_zeros(api, account, seeded, other_key):
    for name in ("dashboard", "calls", "funnel", "agents", "weekly", "businesses"):
        body = await report(api, other_key, name)
        assert seeded.agents[0]["id"] not in json.dumps(body), name
    dash = await report(api, other_key, "dashboard")
    assert dash["calls"] == {"total": 0, "completed": 0, "total_duration_seconds": 0, "avg_duration_seconds": 0.0}
    assert dash["leads"]["conversion_rate"] == 0.0 and dash["leads"]["by_status"] == {}
    funnel = await report(api, other_key, "funnel")
    assert [f["rate_from_top"] for f in funnel["funnel"]] == [0.0] * 4
    weekly = await report(api, other_key, "weekly")
    assert weekly["calls"] == {"this_week": 0, "last_week": 0, "change": 0.0}
    timeline = (await report(api, other_key, "calls", days=7))["timeline"]
    assert len(timeline) == 7 and all(e["total"] == 0 and e["statuses"] == {} for e in timeline)


async def test_refusals(api, account, seeded):
    key = account["key"]
    for name, params in (("dashboard", {"days": 91}), ("dashboard", {"days": 0}), ("calls", {"group_by": "month"}),
                         ("agents", {"agent_id": "not-a-uuid"})):
        status, body, _ = await api.request("GET", f"/api/v1/analytics/{name}", key=key, params=params)
        assert status == 400, (name, params, body)
    status, body, _ = await api.request("GET", "/api/v1/analytics/funnel", key=account["read_key"])
    assert status == 403 and body["error"]["code"] == "forbidden"  # funnel needs leads:read
    assert (await api.request("GET", "/api/v1/analytics/dashboard", key=account["read_key"]))[0] == 200
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key, json={
        "id": account["business_id"], "timezone": "EST"})
    assert status == 400 and "timezone" in body["error"]["message"], body
