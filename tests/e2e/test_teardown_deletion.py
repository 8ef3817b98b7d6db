"""A teardown that really deletes, end to end (issue 56): a business with an agent and a number, a call with its
recording and transcript at the voice simulator, a lead, texts both ways and webhook history, is canceled and torn
down through the API; its workspace says when its data will be deleted. Once the grace period has passed (backdated
here: TEARDOWN_GRACE_DAYS is 30 days), the stack's teardown deletion runner deletes it everywhere: its keys are
refused, the voice simulator has no assistant and no call of it, the SMS simulator has its texts redacted, our
databases hold nothing personal of it, and another business is untouched."""
import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.calling import our_call, ring, settled
from tests.leads import leads_with, new_lead
from tests.receiver import Receiver
from tests.texting import number, opt_in, send, texts_to
from tests.waiting import wait_until

SAID = ["Hi, this is Robin Vale, the boiler is leaking again.", "Call me back on this number please."]


@pytest.fixture
async def receiver():
    r = await Receiver().start()
    yield r
    await r.stop()


async def get(api, key, path, **params):
    status, body, _ = await api.request("GET", path, key=key, params=params or None)
    return status, body


async def patch(api, key, business_id, action):
    status, body, _ = await api.request("PATCH", "/api/v1/workspaces", key=key,
                                        json={"id": business_id, "action": action})
    assert status == 200, body
    return body


async def test_a_torn_down_business_past_its_grace_period_is_deleted_everywhere(
        api, account, calling_agent, other_key, voice, sms, stack, db, receiver):
    key, business, agent = account["key"], account["business_id"], calling_agent
    person = number("0561")
    status, hook, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
        "webhook_url": receiver.url, "events": ["call.completed", "sms.received", "lead.created"]})
    assert status == 201, hook

    # A call (recorded, transcribed), texts both ways, a lead; and another business with a lead of its own.
    at_provider = await ring(voice, agent["phone_number"], person, says=SAID)
    call = await settled(api, key, (await our_call(api, key, agent["id"], at_provider["id"]))["id"])
    status, provider_call = await voice.request("GET", f"/call/{at_provider['id']}")
    assert status == 200 and "Robin" in json.dumps(provider_call)
    assert await sms.text_in(person, agent["phone_number"], "Robin again: is Saturday fine?") == []
    await opt_in(api, key, person)
    status, sent, _ = await send(api, key, agent, person, "Saturday at 9 works, Robin.")
    assert status == 200, sent
    await wait_until(lambda: leads_with(api, key, person), f"a lead of {person}", timeout=20)
    await receiver.wait_for(1, "sms.received")
    status, other_workspaces = await get(api, other_key, "/api/v1/workspaces")
    other_business = other_workspaces["workspaces"][0]["id"]
    other_lead = await new_lead(api, other_key, other_business, name="Kept Person", phone=number("0562"))
    status, assistant = await voice.request("GET", f"/assistant/{agent['provider_assistant_id']}")
    assert status == 200

    # Canceled, then torn down: the workspace says when its data goes.
    await patch(api, key, business, "cancel")
    torn = await patch(api, key, business, "teardown")
    due = datetime.fromisoformat(torn["data_deletion_due_at"].replace("Z", "+00:00"))
    assert timedelta(days=29) < due - datetime.now(UTC) <= timedelta(days=30)
    assert "data_deleted_at" not in torn or torn["data_deleted_at"] is None
    status, read = await get(api, key, "/api/v1/workspaces", id=business)
    assert status == 200 and read["workspaces"][0]["data_deletion_due_at"] == torn["data_deletion_due_at"]
    # Within the grace period nothing is deleted: the calls are still there.
    status, read_call = await get(api, key, "/api/v1/calls", id=call["id"])
    assert status == 200 and read_call["id"] == call["id"]
    assert await db.fetchval("SELECT transcript IS NOT NULL AND recording_url IS NOT NULL FROM calls.calls "
                             "WHERE id = $1", call["id"])

    # The grace period passes (backdated); the stack's runner deletes it.
    await db.execute("UPDATE accounts.businesses SET data_deletion_due_at = now(), data_deletion_next_at = now() "
                     "WHERE id = $1", business)
    deleted = await wait_until(lambda: db.fetchrow(
        "SELECT data_deleted_at, data_deletion_steps, data_deletion_error FROM accounts.businesses WHERE id = $1",
        business), "the teardown deletion to finish", lambda r: r["data_deleted_at"] is not None, timeout=90)
    steps = json.loads(deleted["data_deletion_steps"])
    assert set(steps) == {"agents", "sdr", "calls", "messaging", "webhooks", "accounts"}
    counts = {(line["what"], line["action"]): line["count"] for step in steps.values() for line in step["lines"]}
    assert counts[("provider.assistant", "provider_deleted")] == 1 and counts[("agents.agent", "deleted")] == 1
    assert counts[("provider.call", "provider_deleted")] == 1 and counts[("calls.transcript", "redacted")] == 1
    assert counts[("sdr.lead", "deleted")] >= 1 and counts[("webhooks.subscription", "deleted")] == 1
    assert counts[("provider.message", "redacted")] >= 2
    # The account has no other workspace: its account-wide key and its dashboard session end too.
    assert counts[("accounts.api_key", "revoked_account_wide")] >= 1 and counts[("accounts.session", "ended")] >= 1

    # Its keys are refused: no public route shows anything of it.
    for path, params in (("/api/v1/calls", {"limit": "100"}), ("/api/v1/leads", {}), ("/api/v1/agents", {}),
                         ("/api/v1/sms/messages", {}), ("/api/v1/events", {}), ("/api/v1/workspaces", {})):
        status, body = await get(api, key, path, **params)
        assert status == 401 and body["error"]["code"] == "unauthorized", (path, body)

    # The providers: no assistant, no call of it at the voice simulator; its texts redacted at the SMS simulator.
    status, _ = await voice.request("GET", f"/assistant/{agent['provider_assistant_id']}")
    assert status == 404
    status, _ = await voice.request("GET", f"/call/{at_provider['id']}")
    assert status == 404
    texts = [m for m in await texts_to(stack, person)] + [
        m for m in await texts_to(stack, agent["phone_number"]) if m.get("from") == person]
    assert texts and all(m["body"] == "" for m in texts), texts

    # Our databases: nothing personal of it left.
    assert await db.fetchval("SELECT count(*) FROM sdr.leads WHERE business_id = $1", business) == 0
    assert await db.fetchval("SELECT count(*) FROM agents.agents WHERE business_id = $1", business) == 0
    assert await db.fetchval("SELECT count(*) FROM webhooks.events WHERE business_id = $1", business) == 0
    assert await db.fetchval("SELECT count(*) FROM webhooks.subscriptions WHERE business_id = $1", business) == 0
    assert await db.fetchval("SELECT count(*) FROM calls.calls WHERE business_id = $1 AND (transcript IS NOT NULL "
                             "OR recording_url IS NOT NULL OR erased_at IS NULL)", business) == 0
    assert await db.fetchval("SELECT count(*) FROM messaging.messages WHERE business_id = $1 AND body <> ''",
                             business) == 0
    # What is kept: the business's row (the tombstone) and its usage, for its invoices.
    assert await db.fetchval("SELECT count(*) FROM accounts.businesses WHERE id = $1", business) == 1
    assert await db.fetchval("SELECT count(*) FROM accounts.usage_log WHERE business_id = $1", business) >= 1

    # Another business is untouched.
    status, kept = await get(api, other_key, "/api/v1/leads", id=other_lead["id"])
    assert status == 200 and kept["name"] == "Kept Person", kept
