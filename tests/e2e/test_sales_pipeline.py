"""The sales pipeline through the gateway: the SDR config (defaults, upsert, checks) and the pipeline's segments,
summary and next actions (the auto toggles, a channel the lead lacks, the compliance decision on the page's leads),
and another account's key."""
import uuid

from tests.e2e.test_calls import calling_agent  # noqa: F401 - a fixture
from tests.e2e.test_compliance import callee

CONFIG, PIPELINE = "/api/sdr/config", "/api/sdr/pipeline"


async def new_lead(api, key, business_id: str, **fields) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={"business_id": business_id,
                                                                              **fields})
    assert status == 201, lead
    return lead


async def put_config(api, key, business_id: str, **changes):
    return await api.request("PUT", CONFIG, key=key, json={"businessId": business_id, **changes})


async def test_the_config_starts_at_safe_defaults_and_is_upserted_and_checked(api, account, calling_agent):  # noqa: F811
    key, business = account["key"], account["business_id"]
    status, config, _ = await api.request("GET", CONFIG, key=key, params={"businessId": business})
    assert status == 200, config
    assert config == {"businessId": business, "enabled": False, "min_touch_gap_hours": 48, "max_touches": 6,
                      "auto_call": False, "auto_email": False, "auto_sms": False, "sdr_agent_id": None,
                      "business_hours_start": 9, "business_hours_end": 17, "email_from_account_id": None,
                      "saved": False, "updated_at": None}
    status, saved, _ = await put_config(api, key, business, enabled=True, max_touches=4,
                                        sdr_agent_id=calling_agent["id"])
    assert status == 200 and saved["saved"] and saved["enabled"] and saved["max_touches"] == 4, saved
    assert saved["sdr_agent_id"] == calling_agent["id"] and saved["min_touch_gap_hours"] == 48
    status, again, _ = await put_config(api, key, business, business_hours_start=8)
    assert status == 200 and again["max_touches"] == 4 and again["business_hours_start"] == 8
    for body, field in (({"business_hours_start": 18}, "business_hours_start"),
                        ({"business_hours_end": 24}, "business_hours_end"), ({"max_touches": 0}, "max_touches"),
                        ({"sdr_agent_id": str(uuid.uuid4())}, "agent"), ({"colour": "red"}, "colour"),
                        ({"email_from_account_id": str(uuid.uuid4())}, "email_from_account_id")):
        status, error, _ = await put_config(api, key, business, **body)
        assert status in (400, 404) and error["error"]["code"] in ("invalid_request", "not_found"), (body, error)
        assert field in error["error"]["message"], (body, error)
    status, unchanged, _ = await api.request("GET", CONFIG, key=key, params={"businessId": business})
    assert unchanged["business_hours_start"] == 8 and unchanged["max_touches"] == 4
    status, cleared, _ = await put_config(api, key, business, sdr_agent_id="")
    assert status == 200 and cleared["sdr_agent_id"] is None


async def test_an_agent_without_a_number_cannot_place_the_pipelines_calls(api, account):
    key, business = account["key"], account["business_id"]
    status, bare, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": business, "name": "No number", "system_prompt": "Hi."})
    assert status == 201
    status, error, _ = await put_config(api, key, business, sdr_agent_id=bare["id"])
    assert status == 400 and "without a phone number" in error["error"]["message"]


async def test_the_pipeline_segments_leads_and_explains_each_next_action(api, account):
    key, business = account["key"], account["business_id"]
    fresh = await new_lead(api, key, business, name="Fresh Phone", phone=callee(open_now=True),
                           email="fresh@example.com")
    emailless = await new_lead(api, key, business, name="Only Email", email="only@example.com")
    won = await new_lead(api, key, business, name="Won", status="converted", phone="+14155550123")
    stuck = await new_lead(api, key, business, name="Trial", status="contacted", source="trial",
                           email="trial@example.com")
    status, pipeline, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business})
    assert status == 200, pipeline
    assert pipeline["businessId"] == business and pipeline["enabled"] is False
    by_id = {lead["id"]: lead for lead in pipeline["leads"]}
    assert {i: by_id[i]["segment"] for i in (fresh["id"], emailless["id"], won["id"], stuck["id"])} == {
        fresh["id"]: "speed_to_lead", emailless["id"]: "speed_to_lead", won["id"]: "cold",
        stuck["id"]: "new_trial_stuck"}
    # Every automation is off by default: the owner acts.
    assert by_id[fresh["id"]]["next_action"] == "escalate" and "auto_call is off" in \
        by_id[fresh["id"]]["next_action_reason"]
    assert by_id[won["id"]]["next_action"] == "skip" and "converted" in by_id[won["id"]]["next_action_reason"]
    assert pipeline["summary"] == {"total_leads": 4, "actionable": 0, "needs_manual": 3}
    lead = by_id[fresh["id"]]
    assert (lead["touch_count"], lead["last_touch"], lead["paused"], lead["score"] >= 0) == (0, None, False, True)

    status, _, _ = await put_config(api, key, business, enabled=True, auto_call=True, auto_email=True)
    assert status == 200
    status, pipeline, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business,
                                                                               "segment": "speed_to_lead"})
    by_id = {lead["id"]: lead for lead in pipeline["leads"]}
    assert set(by_id) == {fresh["id"], emailless["id"]} and pipeline["summary"]["total_leads"] == 4
    # The call is refused by the compliance decision (no consent to call): its email goes instead.
    assert by_id[fresh["id"]]["next_action"] == "email", by_id[fresh["id"]]
    assert "no call" in by_id[fresh["id"]]["next_action_reason"]
    assert by_id[emailless["id"]]["next_action"] == "email"
    status, error, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business,
                                                                            "segment": "lukewarm"})
    assert status == 400 and error["error"]["code"] == "invalid_request"


async def test_another_accounts_key_reaches_no_pipeline(api, account, other_key):
    business = account["business_id"]
    for method, path, kwargs in (("GET", PIPELINE, {"params": {"businessId": business}}),
                                 ("GET", CONFIG, {"params": {"businessId": business}}),
                                 ("PUT", CONFIG, {"json": {"businessId": business, "enabled": True}})):
        status, error, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 403 and error["error"]["code"] == "forbidden", (path, error)
    status, config, _ = await api.request("GET", CONFIG, key=account["key"], params={"businessId": business})
    assert config["enabled"] is False and config["saved"] is False


async def test_a_dashboard_session_works_the_pipeline_without_scopes_and_only_its_own(api, account):
    dash, business = account["dashboard"], account["business_id"]
    status, config, _ = await dash.request("GET", CONFIG, params={"businessId": business})
    assert status == 200 and config["businessId"] == business, config
    status, saved, _ = await dash.request("PUT", CONFIG, json={"businessId": business, "max_touches": 3})
    assert status == 200 and saved["max_touches"] == 3, saved
    status, pipeline, _ = await dash.request("GET", PIPELINE, params={"businessId": business})
    assert status == 200 and pipeline["businessId"] == business
    # A key without the sdr scopes is refused where the session is not.
    status, limited, _ = await dash.request("POST", "/api/v1/keys", json={"scopes": ["leads:read"]})
    assert status == 201, limited
    status, error, _ = await api.request("GET", CONFIG, key=limited["key"], params={"businessId": business})
    assert status == 403 and "sdr:read" in error["error"]["message"]
    # The session reaches only its own account's businesses.
    other = await api.signup(business_name="Someone Else")
    status, error, _ = await dash.request("GET", PIPELINE, params={"businessId": other["business_id"]})
    assert status == 403 and error["error"]["code"] == "forbidden"
    # A body sent by a cross-site form (not JSON) is refused; so is a session that is gone.
    status, error, _ = await dash.request("PUT", CONFIG, data=f"businessId={business}",
                                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400, error
    status, error, _ = await api.request("GET", CONFIG, params={"businessId": business},
                                         cookies={"sb_session": "not-a-session"})
    assert status == 401 and error["error"]["code"] == "unauthorized"
