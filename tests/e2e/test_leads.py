"""/api/v1/leads and /api/v1/leads/audit: create defaults, partial updates, every list filter,
pagination, validation, scoring and its events, the audit, scopes and tenancy."""
import asyncio
import json
from datetime import UTC, datetime, timedelta

import nats
import pytest
from jsonschema import Draft202012Validator

from tests.nats_admin import admin_connection


async def create(api, account, **fields) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"],
                                        json={"business_id": account["business_id"], **fields})
    assert status == 201, lead
    return lead


async def listing(api, account, **params) -> dict:
    status, body, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params=params)
    assert status == 200, body
    return body


async def test_create_defaults_read_and_partial_update(api, account):
    lead = await create(api, account, first_name="Dana", last_name="Reyes", email="Dana@Example.COM",
                        phone="+14155550123", zip="94110", notes="Leaky heater", event_type="demo")
    assert lead["status"] == "new" and lead["source"] == "api" and lead["business_id"] == account["business_id"]
    assert lead["name"] == "Dana Reyes" and lead["email"] == "dana@example.com" and lead["phone"] == "+14155550123"
    assert lead["source_url"] is None and lead["agent_name"] is None and 0 <= lead["score"] <= 100
    assert lead["created_at"] == lead["updated_at"]
    status, got, _ = await api.request("GET", "/api/v1/leads", key=account["key"],
                                       params={"id": lead["id"]})
    assert status == 200 and got == lead
    status, patched, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"],
                                           json={"id": lead["id"], "status": "contacted", "city": "Oakland"})
    assert status == 200 and patched["status"] == "contacted" and patched["city"] == "Oakland"
    assert patched["notes"] == "Leaky heater" and patched["updated_at"] > lead["updated_at"]
    status, same, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"],
                                        json={"id": lead["id"], "city": "Oakland"})
    assert same["updated_at"] == patched["updated_at"]  # nothing changed, nothing moves
    for status_value in ("unqualified", "spam", "won"):
        status, body, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"],
                                            json={"id": lead["id"], "status": status_value})
        assert status == 400 and body["error"]["code"] == "invalid_request" and "status" in body["error"]["message"]
    explicit = await create(api, account, name="Sam", status="qualified", source="inbound_call")
    assert explicit["status"] == "qualified" and explicit["source"] == "inbound_call"


@pytest.mark.parametrize("fields, fragment", [
    ({"phone": "415-555-0123"}, "phone"), ({"phone": "+1555"}, "phone"), ({"email": "not-an-email"}, "email"),
    ({"status": "won"}, "status"), ({"agent_id": "x"}, "agent_id"), ({"name": "x" * 201}, "name"),
    ({"agent_id": "11111111-1111-1111-1111-111111111111"}, "agent_id"),
])
async def test_bad_values_are_400s_naming_the_field(api, account, fields, fragment):
    status, body, _ = await api.request("POST", "/api/v1/leads", key=account["key"],
                                        json={"business_id": account["business_id"], **fields})
    assert status == 400 and body["error"]["code"] == "invalid_request" and fragment in body["error"]["message"]


async def test_every_list_filter(api, account):
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
        "business_id": account["business_id"], "name": "Intake", "system_prompt": "Qualify callers."})
    a = await create(api, account, name="A", phone="+14155550101", email="a@example.com", source="web")
    b = await create(api, account, name="B", phone="+14155550102", status="qualified", source="referral",
                     agent_id=agent["id"])
    assert b["agent_id"] == agent["id"] and b["agent_name"] == "Intake"
    c = await create(api, account, name="C", status="lost")

    def ids(body):
        return [lead["id"] for lead in body["leads"]]

    assert ids(await listing(api, account)) == [c["id"], b["id"], a["id"]]  # newest first
    assert ids(await listing(api, account, status="qualified,lost")) == [c["id"], b["id"]]
    status, body, _ = await api.request("GET", "/api/v1/leads", key=account["key"],
                                        params=[("status", "new"), ("status", "lost")])
    assert ids(body) == [c["id"], a["id"]]
    assert ids(await listing(api, account, source="referral")) == [b["id"]]
    assert ids(await listing(api, account, agent_id=agent["id"])) == [b["id"]]
    assert ids(await listing(api, account, phone="+14155550101")) == [a["id"]]
    assert ids(await listing(api, account, email="A@Example.com")) == [a["id"]]
    assert ids(await listing(api, account, created_after=a["created_at"])) == [c["id"], b["id"]]
    assert ids(await listing(api, account, created_before=b["created_at"])) == [a["id"]]
    assert ids(await listing(api, account, after=b["created_at"])) == [a["id"]]  # deprecated cursor
    assert ids(await listing(api, account, score_lte="0")) == [c["id"]]  # lost scores 0
    assert c["id"] not in ids(await listing(api, account, score_gte="1"))
    await asyncio.sleep(0.01)
    status, touched, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"], json={"id": a["id"], "zip": "1"})
    assert ids(await listing(api, account, updated_after=c["updated_at"])) == [a["id"]]
    assert a["id"] not in ids(await listing(api, account, updated_before=touched["updated_at"]))
    for params, fragment in (({"status": "won"}, "status"), ({"score_gte": "101"}, "score_gte"),
                             ({"limit": "101"}, "limit"), ({"created_after": "yesterday"}, "created_after"),
                             ({"phone": "555"}, "phone"), ({"agent_id": "x"}, "agent_id")):
        status, body, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params=params)
        assert status == 400 and fragment in body["error"]["message"], (params, body)


async def test_pages_follow_created_before(api, account):
    made = [(await create(api, account, name=f"L{i}"))["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        page = await listing(api, account, limit="2", **({"created_before": cursor} if cursor else {}))
        seen += [lead["id"] for lead in page["leads"]]
        if not page["has_more"]:
            break
        cursor = page["leads"][-1]["created_at"]
    assert seen == list(reversed(made))


async def test_scoring_and_its_events(api, account, stack):
    nc = await admin_connection(stack)
    try:
        sub = await nc.jetstream().subscribe("events.lead.*", ordered_consumer=True,
                                             deliver_policy=nats.js.api.DeliverPolicy.NEW)
        lead = await create(api, account, name="Hot", email="hot@example.com", phone="+14155550199",
                            source="inbound_call")
        # inbound_call 25 + active within a day 15 + email 5 + phone 5
        assert lead["score"] == 50
        status, qualified, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"],
                                                 json={"id": lead["id"], "status": "qualified"})
        assert qualified["score"] == 65
        status, won, _ = await api.request("PATCH", "/api/v1/leads", key=account["key"],
                                           json={"id": lead["id"], "status": "converted"})
        assert won["score"] == 100
        events = []
        while len(events) < 4:
            event = json.loads((await sub.next_msg(timeout=10)).data)
            if event["business_id"] == account["business_id"]:
                events.append(event)
        assert [e["type"] for e in events] == ["lead.created", "lead.scored", "lead.scored", "lead.scored"]
        assert events[0]["data"] == {"id": lead["id"], "name": "Hot", "email": "hot@example.com",
                                     "phone": "+14155550199", "source": "inbound_call"}
        scored = events[1]["data"]
        assert scored["lead_id"] == lead["id"] and scored["score"] == 50 and scored["confidence"] == "low"
        assert "source inbound_call: +25" in scored["factors"] and scored["explanation"].startswith("score 50")
        assert [e["data"]["score"] for e in events[1:]] == [50, 65, 100]
        # the lead itself carries what its last scoring said (the dashboard's lead page shows it)
        assert (won["score_confidence"], won["score_explanation"], won["score_factors"]) == (
            events[3]["data"]["confidence"], events[3]["data"]["explanation"], events[3]["data"]["factors"])
        assert lead["score_factors"] == scored["factors"] and lead["score_explanation"] == scored["explanation"]
        assert all(e["event_id"] and e["occurred_at"].endswith("Z") for e in events)
    finally:
        await nc.close()


async def test_audit(api, account, db, stack):
    hot = await create(api, account, name="Hot", email="h@example.com", phone="+14155550111", status="qualified",
                       source="inbound_call")  # 25 + 15 + 15 + 5 + 5 = 65
    stalled = await create(api, account, name="Quiet")
    old = datetime.now(UTC) - timedelta(days=5)
    await db.execute("UPDATE sdr.leads SET created_at = $2, updated_at = $2, last_activity_at = $2 WHERE id = $1",
                     stalled["id"], old)
    status, audit, _ = await api.request("GET", "/api/v1/leads/audit", key=account["key"],
                                         params={"hot_score": "60"})
    assert status == 200, audit
    assert audit["window_hours"] == 24 and audit["stalled_days"] == 3 and audit["hot_score"] == 60
    assert [lead["id"] for lead in audit["hot_leads"]["leads"]] == [hot["id"]] and audit["hot_leads"]["count"] == 1
    assert [lead["id"] for lead in audit["stalled_leads"]["leads"]] == [stalled["id"]]
    assert audit["signups_today"]["count"] == 1 and audit["signups_today"]["leads"][0]["id"] == hot["id"]
    assert audit["voicemails_unhandled"] == {"count": 0, "voicemails": []}
    status, default, _ = await api.request("GET", "/api/v1/leads/audit", key=account["key"])
    assert default["hot_score"] == 80 and default["hot_leads"]["count"] == 0
    # As of six days ago, neither lead existed yet.
    status, past, _ = await api.request("GET", "/api/v1/leads/audit", key=account["key"],
                                        params={"as_of": (old - timedelta(days=1)).isoformat()})
    assert past["hot_leads"]["count"] == 0 and past["signups_today"]["count"] == 0
    status, body, _ = await api.request("GET", "/api/v1/leads/audit", key=account["key"], params={"hot_score": "101"})
    assert status == 400 and "hot_score" in body["error"]["message"]


async def test_scopes_and_another_account(api, account, other_key):
    lead = await create(api, account, name="Mine", phone="+14155550122")
    status, body, _ = await api.request("POST", "/api/v1/leads", key=account["read_key"],
                                        json={"business_id": account["business_id"]})
    assert status == 403 and "leads:write" in body["error"]["message"]
    status, body, _ = await api.request("GET", "/api/v1/leads", key=account["read_key"])
    assert status == 403 and "leads:read" in body["error"]["message"]  # not a default scope
    status, body, _ = await api.request("GET", "/api/v1/leads", key=other_key)
    assert status == 200 and body["leads"] == []
    status, body, _ = await api.request("GET", "/api/v1/leads", key=other_key, params={"phone": "+14155550122"})
    assert body["leads"] == []
    status, body, _ = await api.request("GET", "/api/v1/leads", key=other_key, params={"id": lead["id"]})
    assert status == 404
    status, body, _ = await api.request("PATCH", "/api/v1/leads", key=other_key, json={"id": lead["id"], "name": "X"})
    assert status == 404
    status, body, _ = await api.request("POST", "/api/v1/leads", key=other_key,
                                        json={"business_id": account["business_id"], "name": "Sneaky"})
    assert status == 403
    # Another account's agent cannot be linked to a lead (nor its name learned).
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
        "business_id": account["business_id"], "name": "Secret name", "system_prompt": "x"})
    status, body, _ = await api.request("GET", "/api/v1/capabilities", key=other_key)
    status, body, _ = await api.request("POST", "/api/v1/leads", key=other_key, json={
        "business_id": body["workspaces"][0]["id"], "agent_id": agent["id"]})
    assert status == 400 and "agent_id" in body["error"]["message"] and "Secret" not in body["error"]["message"]
    status, audit, _ = await api.request("GET", "/api/v1/leads/audit", key=other_key, params={"hot_score": "0"})
    assert audit["hot_leads"]["count"] == 0 and audit["signups_today"]["count"] == 0
    status, mine, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params={"id": lead["id"]})
    assert mine["name"] == "Mine"


async def test_responses_match_their_published_schemas(api, account):
    lead = await create(api, account, name="Schema", phone="+14155550177")
    for name, body in (("Lead", lead), ("LeadList", await listing(api, account)),
                       ("LeadAudit", (await api.request("GET", "/api/v1/leads/audit", key=account["key"]))[1])):
        _, schema, _ = await api.request("GET", "/api/v1/schemas", params={"name": name})
        Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(body)
