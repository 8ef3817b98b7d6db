"""The export of a business's data end to end (issue 56): a business with an agent and its number, a call (with its
transcript), a text, a lead with its audit, a booking, an eval scenario and its run, a communication run with its
touch, an email, a webhook subscription and API usage exports them all (every kind); the archive downloaded through
its link (no key) holds a file of every kind, each record as the API shows it, the manifest's counts, its SHA-256,
no webhook secret, and nothing of another business seeded alike."""
import json
from datetime import UTC, datetime, timedelta

import pytest

from contracts.exports import KINDS
from tests.agents import create_eval
from tests.api import new_account
from tests.calling import agent_with_number, our_call, ring, settled
from tests.exports import exported
from tests.leads import leads_with
from tests.runs import create, run_of, touch
from tests.texting import number
from tests.waiting import wait_until


@pytest.fixture
async def second_account(api):
    made = await new_account(api)
    yield made
    await made["dashboard"].close()


async def seed(api, account, voice, sms, suffix: str, marker: str) -> dict:
    """A business's records of every kind a test can make quickly; `marker` is in its webhook URL and lead notes."""
    key = account["key"]
    agent = await agent_with_number(api, account)
    person = number(suffix)
    at_provider = await ring(voice, agent["phone_number"], person, says=[f"Hi, this is {marker}."])
    call = await settled(api, key, (await our_call(api, key, agent["id"], at_provider["id"]))["id"])
    assert await sms.text_in(person, agent["phone_number"], f"{marker} texting") == []
    [lead] = await wait_until(lambda: leads_with(api, key, person), f"a lead of {person}", timeout=20)
    status, lead, _ = await api.request("PATCH", "/api/v1/leads", key=key, json={"id": lead["id"], "notes": marker})
    assert status == 200, lead
    status, skipped, _ = await api.request("POST", "/api/sdr/action", key=key, json={  # an entry of the lead's audit
        "businessId": account["business_id"], "leadId": lead["id"], "action": "skip"})
    assert status == 200, skipped
    status, _, _ = await api.request("PUT", "/api/v1/availability", key=key, json={
        "weekly_hours": {d: [["09:00", "17:00"]] for d in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")},
        "slot_minutes": 60})
    assert status == 200
    day = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    status, free, _ = await api.request("GET", "/api/v1/availability/slots", key=key, params={"date": day})
    status, booking, _ = await api.request("POST", "/api/v1/bookings", key=key, json={
        "starts_at": free["slots"][0]["starts_at"], "name": marker, "phone_number": person})
    assert status == 201, booking
    status, scenario = await create_eval(api, account, agent["id"])
    assert status == 201, scenario
    status, ran, _ = await api.request("POST", "/api/v1/evals/run", key=key, json={"eval_id": scenario["id"],
                                                                                  "wait": False})
    assert status in (200, 202), ran
    status, run, _ = await create(api, key, run_of(account, agent, touch("t1", person, seconds=86_400)))
    assert status == 201, run
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": f"{marker}@example.com", "subject": "Your quote", "body": f"Hi {marker}", "approve": True})
    assert status == 201, email
    status, hook, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
        "webhook_url": f"http://127.0.0.1:9/hooks/{marker}", "events": ["call.completed"]})
    assert status == 201, hook
    return {"agent": agent, "call": call, "lead": lead, "booking": booking, "hook": hook, "person": person}


async def test_an_export_holds_every_kind_of_the_business_and_nothing_of_another(
        api, account, voice, sms, second_account):
    ours = await seed(api, account, voice, sms, "0291", "export-ours")
    await seed(api, second_account, voice, sms, "0292", "export-theirs")
    export, files = await exported(api, account["key"])
    assert [k["kind"] for k in export["kinds"]] == [kind.name for kind in KINDS]
    counts = {k["kind"]: k["records"] for k in export["kinds"]}
    assert [kind for kind in counts if not counts[kind]] == [], counts  # every kind seeded
    manifest = json.loads(files.pop("manifest.json"))
    assert {k["kind"]: k["records"] for k in manifest["kinds"]} == counts
    records = {kind: [json.loads(line) for name, text in files.items() if name.startswith(f"{kind}/")
                      for line in text.splitlines()] for kind in counts}
    assert {kind: len(found) for kind, found in records.items()} == counts
    assert records["workspace"][0]["id"] == account["business_id"]
    assert ours["call"]["id"] in {c["id"] for c in records["calls"]}
    assert ours["lead"]["id"] in {lead["id"] for lead in records["leads"]}
    assert ours["booking"]["id"] in {b["id"] for b in records["bookings"]}
    archive = "".join(files.values())
    assert "export-ours" in archive and "export-theirs" not in archive
    assert second_account["business_id"] not in archive
    secret = ours["hook"]["webhook_secret"]
    assert secret.startswith("whsec_") and secret not in archive and secret[6:-4] not in archive  # masked alone
