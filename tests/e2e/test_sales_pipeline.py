"""The sales pipeline through the gateway: the SDR config (defaults, upsert, checks) and the pipeline's segments,
summary and next actions (the auto toggles, a channel the lead lacks, the compliance decision on the page's leads),
and another account's key."""
import asyncio
import uuid
from datetime import UTC, datetime, timedelta

from tests.calling import provider_calls_to
from tests.compliance import callee
from tests.leads import ACTION, ACTIVITY, CONFIG, PIPELINE, new_lead, put_config
from tests.texting import opt_in, texts_to


async def test_the_config_starts_at_safe_defaults_and_is_upserted_and_checked(api, account, calling_agent):
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


async def act(api, key, business_id: str, lead_id: str, action: str):
    return await api.request("POST", ACTION, key=key, json={"businessId": business_id, "leadId": lead_id,
                                                           "action": action})


async def pipeline_lead(api, key, business_id: str, lead_id: str) -> dict:
    status, pipeline, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business_id,
                                                                               "limit": "500"})
    assert status == 200, pipeline
    return next(lead for lead in pipeline["leads"] if lead["id"] == lead_id)


async def test_a_text_touch_counts_once_and_the_cadence_names_the_next_instant(
        api, stack, account, calling_agent):
    key, business = account["key"], account["business_id"]
    phone = callee(open_now=True)
    await opt_in(api, key, phone)
    lead = await new_lead(api, key, business, first_name="Dana", phone=phone)
    status, done, _ = await act(api, key, business, lead["id"], "sms")
    assert status == 200 and done["success"] and done["replayed"] is False, done
    assert done["action"] == "sms" and done["leadId"] == lead["id"] and phone in done["detail"]
    [text] = await texts_to(stack, phone)
    assert text["body"].startswith("Hi Dana, it's ") and "STOP" in text["body"]
    # The same request again: the first result, nothing sent.
    status, again, _ = await act(api, key, business, lead["id"], "sms")
    assert status == 200 and again["replayed"] is True and again["detail"] == done["detail"]
    assert len(await texts_to(stack, phone)) == 1
    touched = await pipeline_lead(api, key, business, lead["id"])
    assert touched["touch_count"] == 1 and touched["last_touch"], touched
    # Another touch inside the 48-hour gap: 429 with the exact instant.
    status, error, headers = await act(api, key, business, lead["id"], "call")
    assert status == 429 and error["error"]["code"] == "rate_limited", error
    last = datetime.fromisoformat(touched["last_touch"])
    assert datetime.fromisoformat(error["error"]["nextAllowedAt"]) == last + timedelta(hours=48)
    assert 47 * 3600 < int(headers["Retry-After"]) <= 48 * 3600
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business,
                                                                          "leadId": lead["id"]})
    assert status == 200 and [(a["action"], a["status"], a["touch_number"]) for a in log["activity"]] == [
        ("sms", "done", 1)], log
    assert log["activity"][0]["reference"] and log["activity"][0]["origin"] == "api"


async def test_a_call_touch_goes_through_the_compliance_decision(api, account, voice, calling_agent):
    key, business = account["key"], account["business_id"]
    refused = await new_lead(api, key, business, name="No consent", phone=callee(open_now=True))
    status, error, _ = await act(api, key, business, refused["id"], "call")
    assert status == 400 and error["error"]["code"] == "number_opted_out", error
    assert (await pipeline_lead(api, key, business, refused["id"]))["touch_count"] == 0
    phone = callee(open_now=True)
    await opt_in(api, key, phone)
    lead = await new_lead(api, key, business, name="Consenting", phone=phone)
    status, done, _ = await act(api, key, business, lead["id"], "call")
    assert status == 200 and done["success"], done
    [placed] = await provider_calls_to(voice, phone)
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business})
    entries = {a["lead_id"]: a for a in log["activity"]}
    assert entries[refused["id"]]["status"] == "failed" and "consent" in entries[refused["id"]]["detail"]
    call_id = entries[lead["id"]]["reference"]
    status, call, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call_id})
    assert status == 200 and call["to"] == phone and call["lead_id"] == lead["id"] and placed["id"]
    status, page, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params={"phone": phone})
    assert [d["actor"] for d in page["decisions"]] == ["pipeline"]


async def test_email_skip_pause_resume_the_cap_and_closed_leads(api, account):
    key, business = account["key"], account["business_id"]
    await put_config(api, key, business, max_touches=1, min_touch_gap_hours=0)
    lead = await new_lead(api, key, business, first_name="Sam", email="sam@example.com")
    status, done, _ = await act(api, key, business, lead["id"], "email")
    assert status == 200 and "sam@example.com" in done["detail"], done
    status, emails, _ = await api.request("GET", "/api/v1/emails", key=key)
    assert any(e["to"] == "sam@example.com" and "Following up" in e["subject"] for e in emails["emails"])
    status, error, _ = await act(api, key, business, lead["id"], "sms")
    assert status == 400 and "no phone" in error["error"]["message"]
    # With no gap, a second email is a new touch: the cap of one refuses it, with no instant to wait for.
    status, error, headers = await act(api, key, business, lead["id"], "email")
    assert status == 429 and error["error"]["nextAllowedAt"] is None and "cap is 1" in error["error"]["message"]
    assert "Retry-After" not in headers
    capped = await pipeline_lead(api, key, business, lead["id"])
    assert capped["segment"] == "exhausted" and capped["next_action"] == "escalate"
    for action, paused in (("pause", True), ("pause", True), ("resume", False)):
        status, done, _ = await act(api, key, business, lead["id"], action)
        assert status == 200, done
        assert (await pipeline_lead(api, key, business, lead["id"]))["paused"] is paused
    await act(api, key, business, lead["id"], "pause")
    status, error, _ = await act(api, key, business, lead["id"], "email")
    assert status == 409 and "paused" in error["error"]["message"]
    status, skipped, _ = await act(api, key, business, lead["id"], "skip")
    assert status == 200 and skipped["action"] == "skip"
    won = await new_lead(api, key, business, name="Won", status="converted", email="won@example.com")
    status, error, _ = await act(api, key, business, won["id"], "email")
    assert status == 409 and "converted" in error["error"]["message"]
    status, error, _ = await act(api, key, business, str(uuid.uuid4()), "skip")
    assert status == 404, error


async def test_another_accounts_key_cannot_act_on_a_lead(api, account, other_key):
    key, business = account["key"], account["business_id"]
    lead = await new_lead(api, key, business, name="Mine", email="mine@example.com")
    status, error, _ = await act(api, other_key, business, lead["id"], "pause")
    assert status == 403
    status, error, _ = await api.request("GET", ACTIVITY, key=other_key, params={"businessId": business})
    assert status == 403
    assert (await pipeline_lead(api, key, business, lead["id"]))["paused"] is False


async def test_racing_requests_touch_once(api, stack, account, calling_agent):
    key, business, phone = account["key"], account["business_id"], callee(open_now=True)
    await opt_in(api, key, phone)
    lead = await new_lead(api, key, business, name="Raced", phone=phone)
    replies = await asyncio.gather(*(act(api, key, business, lead["id"], "sms") for _ in range(4)))
    statuses = sorted(status for status, _, _ in replies)
    assert statuses[0] == 200 and set(statuses) <= {200, 409}, replies
    assert len(await texts_to(stack, phone)) == 1
    assert (await pipeline_lead(api, key, business, lead["id"]))["touch_count"] == 1


RUN = "/api/sdr/run"


async def test_a_run_needs_sdr_enabled_a_dry_run_sends_nothing_and_a_run_works_the_leads(
        api, stack, account, voice, calling_agent):
    key, business = account["key"], account["business_id"]
    status, error, _ = await api.request("POST", RUN, key=key, json={"businessId": business})
    assert status == 400 and "not enabled" in error["error"]["message"], error
    # Business hours all day: the callees are picked by their legal window, open now.
    await put_config(api, key, business, enabled=True, auto_call=True, auto_sms=True, auto_email=True,
                     business_hours_start=0, business_hours_end=23)
    caller, texter = callee(open_now=True), callee(open_now=True)
    for phone in (caller, texter):
        await opt_in(api, key, phone)
    fresh = await new_lead(api, key, business, name="Fresh", phone=caller)  # speed_to_lead: a call
    quiet = await new_lead(api, key, business, name="Quiet", phone=texter, status="contacted")  # cold: skipped
    mailed = await new_lead(api, key, business, name="Mail", email="mail@example.com")  # speed_to_lead: an email
    nothing = await new_lead(api, key, business, name="Nobody")  # no phone, no email: escalate
    status, dry, _ = await api.request("POST", RUN, key=key, json={"businessId": business, "dryRun": True})
    assert status == 200 and dry["dryRun"] is True and dry["success"] is True, dry
    assert dry["summary"] == {"calls_queued": 1, "emails_queued": 1, "sms_sent": 0, "escalated": 1, "failed": 0}
    assert {(r["leadId"], r["action"]) for r in dry["results"]} == {
        (fresh["id"], "call"), (mailed["id"], "email"), (nothing["id"], "escalate")}
    assert dry["skipped"] == 1 and dry["errors"] == [] and all("would" in r["detail"] or "needs the owner" in
                                                                 r["detail"] for r in dry["results"])
    assert await provider_calls_to(voice, caller) == []  # nothing dispatched
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business})
    assert log["activity"] == []
    status, done, _ = await api.request("POST", RUN, key=key, json={"businessId": business})
    assert status == 200 and done["dryRun"] is False and done["success"] is True, done
    assert done["summary"] == {"calls_queued": 1, "emails_queued": 1, "sms_sent": 0, "escalated": 1, "failed": 0}
    assert len(await provider_calls_to(voice, caller)) == 1
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business})
    assert {(a["lead_id"], a["action"], a["status"]) for a in log["activity"]} == {
        (fresh["id"], "call", "done"), (mailed["id"], "email", "done")}
    assert quiet["id"] not in {a["lead_id"] for a in log["activity"]}
    # Run again at once: the touched leads wait for their cadence, nothing is touched twice.
    status, again, _ = await api.request("POST", RUN, key=key, json={"businessId": business})
    assert again["summary"]["calls_queued"] == 0 and again["summary"]["emails_queued"] == 0, again
    assert len(await provider_calls_to(voice, caller)) == 1


async def test_the_report_counts_the_period_and_lists_hot_and_stale_leads(api, account, calling_agent):
    key, business = account["key"], account["business_id"]
    await put_config(api, key, business, auto_email=True)
    touched = await new_lead(api, key, business, name="Touched", email="hot@example.com")
    stale = await new_lead(api, key, business, name="Stale")  # new and untouched (hot), no contact: the owner acts
    await act(api, key, business, touched["id"], "email")  # now contacted_no_reply, waiting for its cadence
    await act(api, key, business, touched["id"], "skip")
    status, report, _ = await api.request("GET", "/api/sdr/report", key=key, params={"businessId": business})
    assert status == 200 and report["businessId"] == business and report["period"] == "week", report
    assert report["actions"]["email"] == 1 and report["actions"]["skip"] == 1 and report["actions"]["call"] == 0
    assert report["outcomes"]["done"] == 2 and report["new_leads"] == 2
    assert [(lead["id"], lead["segment"]) for lead in report["hot_leads"]] == [(stale["id"], "speed_to_lead")]
    assert [lead["id"] for lead in report["stale_leads"]] == [stale["id"]]
    assert report["stale_leads"][0]["next_action"] == "escalate"
    status, today, _ = await api.request("GET", "/api/sdr/report", key=key, params={"businessId": business,
                                                                                   "period": "today"})
    since = datetime.fromisoformat(today["since"])
    assert status == 200 and (since.hour, since.minute, since.second) == (0, 0, 0)
    assert since <= datetime.fromisoformat(today["until"]) < since + timedelta(days=1)
    status, error, _ = await api.request("GET", "/api/sdr/report", key=key, params={"businessId": business,
                                                                                   "period": "year"})
    assert status == 400


async def test_a_touch_left_halfway_is_finished_by_the_next_request_and_made_once(
        api, stack, account, db, calling_agent):
    key, business, phone = account["key"], account["business_id"], callee(open_now=True)
    await opt_in(api, key, phone)
    lead = await new_lead(api, key, business, name="Halfway", phone=phone)
    # A process claimed a text of this lead eleven minutes ago and died before recording it.
    claim, then = uuid.uuid4(), datetime.now(UTC) - timedelta(minutes=11)
    await db.execute("INSERT INTO sdr.pipeline_activity (id, business_id, lead_id, action, status, detail, "
                     "touch_number, origin, created_at, updated_at) VALUES ($1, $2, $3, 'sms', 'pending', "
                     "'sms being made', 1, 'api', $4, $4)", claim, uuid.UUID(business), uuid.UUID(lead["id"]), then)
    status, error, _ = await act(api, key, business, lead["id"], "call")
    assert status == 409 and "earlier sms" in error["error"]["message"], error
    status, done, _ = await act(api, key, business, lead["id"], "sms")
    assert status == 200 and done["success"], done
    assert len(await texts_to(stack, phone)) == 1
    status, log, _ = await api.request("GET", ACTIVITY, key=key, params={"businessId": business,
                                                                          "leadId": lead["id"]})
    assert [(a["id"], a["status"], a["touch_number"]) for a in log["activity"]] == [(str(claim), "done", 1)]
    assert (await pipeline_lead(api, key, business, lead["id"]))["touch_count"] == 1
