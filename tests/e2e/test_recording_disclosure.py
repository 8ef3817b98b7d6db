"""The recording disclosure through the public API with the voice simulator: spoken first on a call to a state that
needs every party's consent (California, a Pennsylvania caller), absent on a one-party one (New York) and for an
agent that turned it off, a callee who declines, the agent's setting and its validation, and another business."""
from core.compliance import recording_rules as recording
from tests.calling import place, ring, settled
from tests.waiting import wait_until

CALIFORNIA, NEW_YORK, PENNSYLVANIA = "+14155550161", "+12125550161", "+12155550161"
GREETING = "Hi, it's Acme Plumbing."
STAY_ON_LINE = recording.DEFAULT_MESSAGES[recording.STAY_ON_LINE]


async def set_disclosure(api, account, agent_id: str, **setting) -> dict:
    status, reply, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent_id, "recording_disclosure": setting})
    assert status == 200, reply
    return reply


async def agent_lines(api, key, agent_id: str, call_id: str) -> list[str]:
    """The call's transcript as our API gives it ("Agent: ..." and "Caller: ..." lines)."""
    status, page, _ = await api.request("GET", "/api/v1/transcripts", key=key, params={"agent_id": agent_id})
    assert status == 200, page
    return next(t for t in page["transcripts"] if t["call_id"] == call_id)["transcript"].split("\n")


def said_by_agent(lines: list[str]) -> list[str]:
    return [line.removeprefix("Agent: ") for line in lines if line.startswith("Agent: ")]


async def outbound(api, account, agent, to: str) -> tuple[dict, list[str]]:
    """A call placed (compliance skip, the default) to `to`, once settled, and its transcript."""
    key = account["key"]
    status, call, _ = await place(api, key, agent_id=agent["id"], to=to, first_message=GREETING)
    assert status == 201, call
    ended = await settled(api, key, call["id"])
    return ended, await agent_lines(api, key, agent["id"], call["id"])


async def test_a_california_call_opens_with_the_disclosure_and_a_new_york_one_without(api, account, calling_agent,
                                                                                       voice):
    ended, lines = await outbound(api, account, calling_agent, CALIFORNIA)
    assert said_by_agent(lines)[:2] == [STAY_ON_LINE, GREETING]  # a line of its own, then the first message
    assert lines[0] == "Caller: Hello?"  # on an outbound call it waits for the callee to speak (Vapi's advice)
    assert ended["recording_disclosure"] == {
        "spoken": True, "reason": "all_party_consent", "states": ["CA"],
        "rules": [{"state": "CA", "statute": "Cal. Penal Code §§ 632(a), 632.7(a)"}],
        "consent_type": "stay-on-line", "consent": "granted",
        "consent_granted_at": ended["recording_disclosure"]["consent_granted_at"]}
    assert ended["recording_disclosure"]["consent_granted_at"] is not None
    assert ended["status"] == "completed" and ended["recording_url"]  # recorded once they stayed on the line
    status, placed = await voice.request("GET", f"/call/{ended['conversation_id']}")
    plan = placed["assistantOverrides"]["compliancePlan"]["recordingConsentPlan"]
    assert plan == {"type": "stay-on-line", "message": STAY_ON_LINE, "firstMessageMode": "assistant-waits-for-user"}
    assert placed["assistantOverrides"]["firstMessage"] == GREETING

    ended, lines = await outbound(api, account, calling_agent, NEW_YORK)
    assert said_by_agent(lines)[0] == GREETING and STAY_ON_LINE not in "\n".join(lines)
    assert ended["recording_disclosure"] == {"spoken": False, "reason": "one_party_consent", "states": ["NY"],
                                             "rules": [], "consent_type": None, "consent": None,
                                             "consent_granted_at": None}
    status, placed = await voice.request("GET", f"/call/{ended['conversation_id']}")
    assert "compliancePlan" not in placed["assistantOverrides"] and ended["recording_url"]


async def test_a_new_york_number_of_a_lead_in_florida_hears_it(api, account, calling_agent):
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"], json={
        "business_id": account["business_id"], "name": "Ana Ruiz", "phone": "+12125550162", "state": "FL"})
    assert status == 201, lead
    ended, lines = await outbound(api, account, calling_agent, "+12125550162")
    assert said_by_agent(lines)[0] == STAY_ON_LINE
    assert ended["recording_disclosure"]["states"] == ["NY", "FL"]
    assert [r["state"] for r in ended["recording_disclosure"]["rules"]] == ["FL"]


async def test_an_inbound_call_from_pennsylvania_gets_it(api, account, calling_agent, voice):
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], PENNSYLVANIA)
    plan = at_provider["assistantOverrides"]["compliancePlan"]["recordingConsentPlan"]
    assert plan == {"type": "stay-on-line", "message": STAY_ON_LINE}  # the caller is on the line: spoken at once

    async def recorded() -> list[dict]:
        status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent["id"]})
        return [c for c in page["calls"] if c["conversation_id"] == at_provider["id"]]
    [call] = await wait_until(recorded, "the inbound call to be recorded")
    ended = await settled(api, key, call["id"])
    lines = await agent_lines(api, key, agent["id"], call["id"])
    assert lines[0] == f"Agent: {STAY_ON_LINE}" and said_by_agent(lines)[1] == "Hello! How can I help you today?"
    assert ended["recording_disclosure"]["reason"] == "all_party_consent"
    assert ended["recording_disclosure"]["rules"] == [{"state": "PA", "statute": "18 Pa.C.S. §§ 5703, 5704(4)"}]
    assert ended["recording_disclosure"]["consent"] == "granted"


async def test_an_agent_that_turned_it_off_has_none_and_the_record_says_which_law_it_skipped(api, account,
                                                                                              calling_agent):
    reply = await set_disclosure(api, account, calling_agent["id"], mode="off")
    assert reply["updated_fields"] == ["recording_disclosure"]
    ended, lines = await outbound(api, account, calling_agent, CALIFORNIA)
    assert said_by_agent(lines)[0] == GREETING and lines[0].startswith("Agent: ")
    disclosure = ended["recording_disclosure"]
    assert (disclosure["spoken"], disclosure["reason"], disclosure["consent"]) == (False, "off", None)
    assert [r["state"] for r in disclosure["rules"]] == ["CA"]


async def test_a_callee_who_declines_ends_the_call_and_nothing_is_recorded(api, account, calling_agent, voice):
    key = account["key"]
    await set_disclosure(api, account, calling_agent["id"], consent="verbal", message="We record calls. Is that OK?")
    await voice.playback(declines_recording=True)
    ended, lines = await outbound(api, account, calling_agent, CALIFORNIA)
    assert lines == ["Caller: Hello?", "Agent: We record calls. Is that OK?", "Caller: No, I don't want to be recorded."]
    assert (ended["status"], ended["ended_reason"]) == ("completed", "assistant-ended-call")
    disclosure = ended["recording_disclosure"]
    assert (disclosure["consent_type"], disclosure["consent"], disclosure["consent_granted_at"]) == (
        "verbal", "not_granted", None)
    # The provider records only once consent is given: the record keeps its recording field, with no audio.
    assert ended["recording_url"] is None and ended["summary"] is None
    status, rec, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": ended["id"]})
    assert status == 200 and (rec["recording_status"], rec["recording_url"]) == ("none", None)
    assert rec["transcript_status"] == "available"


async def test_the_setting_is_shown_changed_versioned_and_checked(api, account):
    key = account["key"]
    status, created, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Closer", "system_prompt": "Call back.",
        "recording_disclosure": {"consent": "verbal"}})
    assert status == 201, created
    status, agent, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": created["id"]})
    assert agent["recording_disclosure"] == {"mode": "auto", "consent": "verbal",
                                             "message": recording.DEFAULT_MESSAGES[recording.VERBAL]}
    reply = await set_disclosure(api, account, created["id"], message="This call is recorded.", mode="always")
    assert reply["version"] == 2
    status, agent, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": created["id"]})
    assert agent["recording_disclosure"] == {"mode": "always", "consent": "verbal", "message": "This call is recorded."}
    status, one, _ = await api.request("GET", "/api/v1/agents/versions", key=key,
                                       params={"agent_id": created["id"], "version": "2"})
    assert one["version"]["changed_fields"] == ["recording_disclosure"]
    assert one["version"]["config_snapshot"]["recording_disclosure"] == {
        "mode": "always", "consent": "verbal", "message": "This call is recorded."}
    await set_disclosure(api, account, created["id"], message=None)  # back to the default words
    status, agent, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": created["id"]})
    assert agent["recording_disclosure"]["message"] == recording.DEFAULT_MESSAGES[recording.VERBAL]

    for bad, field in (({"mode": "sometimes"}, "mode"), ({"consent": "implied"}, "consent"),
                       ({"message": "x" * 1001}, "message"), ({"message": "  "}, "message"),
                       ({"volume": 3}, "volume"), ("off", "recording_disclosure")):
        status, body, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
            "id": created["id"], "recording_disclosure": bad})
        assert status == 400 and body["error"]["code"] == "invalid_request", (bad, body)
        assert field in body["error"]["message"], body
    status, body, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Closer", "system_prompt": "Call back.",
        "recording_disclosure": {"mode": "never"}})
    assert status == 400 and "mode" in body["error"]["message"]


async def test_another_business_cannot_read_or_change_the_setting(api, account, other_key):
    key = account["key"]
    status, created, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Closer", "system_prompt": "Call back."})
    assert status == 201
    status, body, _ = await api.request("GET", "/api/v1/agents", key=other_key, params={"id": created["id"]})
    assert status == 404 and "recording_disclosure" not in body
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=other_key, json={
        "id": created["id"], "recording_disclosure": {"mode": "off"}})
    assert status == 404, body
    status, agent, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": created["id"]})
    assert agent["recording_disclosure"]["mode"] == "auto" and agent["version"] == 1
