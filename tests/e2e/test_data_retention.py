"""The retention a business sets, end to end (issue 56): the business keeps recordings one day through the API; a
call placed through the API ends at the voice simulator with a recording; the call is made two days old in the
database (the stack's clock is the real one: a day is not waited for) and the business's retention made due (the
day since its last round, passed); the stack's retention job (every second in the tests' stacks) deletes the
recording at the simulator and clears its link here, while a recent call keeps its recording. Also: the settings'
defaults and limits as the API answers them, and another business's key can neither read nor change them."""
from datetime import timedelta

from core.ids import utcnow
from tests.api import new_account
from tests.calling import place, settled
from tests.waiting import wait_until

PATH = "/api/v1/workspaces"
DEFAULTS = {"recordings_days": 365, "transcripts_days": 365, "message_bodies_days": 365, "webhook_events_days": 30,
            "evidence_days": 1461}


async def workspace(api, key, business_id):
    status, body, _ = await api.request("GET", PATH, key=key, params={"id": business_id})
    return status, (body["workspaces"][0] if status == 200 else body)


async def patch(api, key, business_id, retention):
    status, body, _ = await api.request("PATCH", PATH, key=key, json={"id": business_id, "retention": retention})
    return status, body


async def call_of(api, key, call_id):
    status, body, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call_id})
    assert status == 200, body
    return body


async def test_a_recording_past_the_retention_the_business_set_is_deleted_here_and_at_the_simulator(
        api, account, calling_agent, voice, db):
    key, business = account["key"], account["business_id"]
    status, shown = await workspace(api, key, business)
    assert status == 200 and shown["retention"] == DEFAULTS  # every kind answered, defaults unless set
    status, changed = await patch(api, key, business, {"recordings_days": 1})
    assert status == 200 and changed["retention"] == {**DEFAULTS, "recordings_days": 1}, changed

    calls = []
    for to in ("+14155550171", "+14155550172"):
        status, placed, _ = await place(api, key, agent_id=calling_agent["id"], to=to)
        assert status == 201, placed
        calls.append(await settled(api, key, placed["id"]))
    old, recent = calls
    assert old["recording_url"] and recent["recording_url"]
    _, at_provider = await voice.request("GET", f"/call/{old['conversation_id']}")
    assert at_provider["artifact"]["recording"]["mono"]["combinedUrl"]

    # Two days pass for the old call, and a day since the business's last round: the round its change started is
    # over (it is not due, nobody holds it), so none in flight moves its next round on past this.
    await db.execute("UPDATE calls.calls SET created_at = $1 WHERE id = $2", utcnow() - timedelta(days=2), old["id"])

    async def day_passed():
        return await db.fetchval(
            "UPDATE accounts.businesses SET retention_next_at = now() - interval '1 second' WHERE id = $1 "
            "AND retention_next_at > now() AND retention_lease_token IS NULL RETURNING id", business)
    await wait_until(day_passed, "the round the change started to be over", lambda marked: marked is not None)

    cleared = await wait_until(lambda: call_of(api, key, old["id"]), "the retention job to clear the recording",
                               lambda c: not c["recording_url"], timeout=30)
    assert cleared["status"] == old["status"] and cleared["duration"] == old["duration"]  # the call stays
    assert (await voice.request("GET", f"/call/{old['conversation_id']}"))[0] == 404  # deleted at the provider
    status, recording, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": old["id"]})
    assert status == 200 and recording["recording_url"] is None, recording
    # The recent call keeps its recording, here and at the provider.
    assert (await call_of(api, key, recent["id"]))["recording_url"] == recent["recording_url"]
    status, still = await voice.request("GET", f"/call/{recent['conversation_id']}")
    assert status == 200 and still["artifact"]["recording"]["mono"]["combinedUrl"]
    # Its round is over: due again about a day later.
    next_at = await db.fetchval("SELECT retention_next_at FROM accounts.businesses WHERE id = $1", business)
    assert next_at > utcnow() + timedelta(minutes=5)


async def test_the_settings_take_each_kind_within_its_limits_and_zero_sets_the_default_again(api, account):
    key, business = account["key"], account["business_id"]
    status, body = await patch(api, key, business, {"transcripts_days": 90, "evidence_days": 3650,
                                                    "webhook_events_days": 1})
    assert status == 200 and body["retention"] == {**DEFAULTS, "transcripts_days": 90, "evidence_days": 3650,
                                                   "webhook_events_days": 1}, body
    status, body = await patch(api, key, business, {"transcripts_days": 0})  # the others keep theirs
    assert status == 200 and body["retention"] == {**DEFAULTS, "evidence_days": 3650, "webhook_events_days": 1}
    assert (await workspace(api, key, business))[1]["retention"] == body["retention"]

    for retention, kind, range_text in (
            ({"recordings_days": 3651}, "recordings_days", "1 to 3650 days"),
            ({"recordings_days": -1}, "recordings_days", "1 to 3650 days"),
            ({"evidence_days": 365}, "evidence_days", "1461 to 3650 days"),
            ({"message_bodies_days": 1.5}, "message_bodies_days", "1 to 3650 days"),
            ({"message_bodies_days": "30"}, "message_bodies_days", "1 to 3650 days"),
            ({"webhook_events_days": None}, "webhook_events_days", "1 to 3650 days"),
            ({"webhook_events_days": 10**12}, "webhook_events_days", "1 to 3650 days")):
        status, refused = await patch(api, key, business, retention)
        assert status == 400 and refused["error"]["code"] == "validation_error", (retention, refused)
        assert f"retention.{kind}" in refused["error"]["message"] and range_text in refused["error"]["message"]
    status, refused = await patch(api, key, business, {"voicemails_days": 3})
    assert status == 400 and refused["error"]["code"] == "validation_error"
    assert "recordings_days" in refused["error"]["message"]
    status, refused = await patch(api, key, business, [1])  # not an object
    assert status == 400, refused
    assert (await workspace(api, key, business))[1]["retention"] == body["retention"]  # nothing refused was kept


async def test_another_business_cannot_read_or_change_the_retention_and_changing_it_needs_workspaces_write(
        api, account):
    key, business = account["key"], account["business_id"]
    other = await new_account(api)
    try:
        status, refused = await workspace(api, other["key"], business)
        assert status == 404, refused
        status, refused = await patch(api, other["key"], business, {"recordings_days": 1})
        assert status == 404 and refused["error"]["code"] == "not_found", refused
        reader = (await account["dashboard"].create_key(scopes=["workspaces:read"]))["key"]
        status, refused = await patch(api, reader, business, {"recordings_days": 1})
        assert status == 403 and refused["error"]["code"] == "forbidden", refused
        status, shown = await workspace(api, key, business)
        assert shown["retention"] == DEFAULTS
    finally:
        await other["dashboard"].close()
