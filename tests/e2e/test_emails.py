"""The email queue end to end: queued and approved emails go out through SMTP (the stack's catch-all) as the
business, an email held for approval waits until approved, an email to a stranger waits for the owner in person
(a lead a key made for them among them: the relay attack of issue 51), a caller who gave their address on a call
is mailed at once, a business's daily quota, and an agent's prompt change notifies the owner once."""
import asyncio

import pytest

from tests.calling import our_call, ring, settled
from tests.emails import owner_notices
from tests.leads import leads_with
from tests.waiting import wait_until

QUOTA = 200  # EMAIL_DAILY_QUOTA's default


async def lead_with_email(api, account, email: str) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"], json={
        "business_id": account["business_id"], "name": "Dana Reyes", "email": email})
    assert status == 201, lead
    return lead


async def settled_email(api, key, email_id: str, final=("sent", "failed")) -> dict:
    """The email once its status is one of `final`."""
    async def email() -> dict:
        status, body, _ = await api.request("GET", "/api/v1/emails", key=key, params={"id": email_id})
        assert status == 200, body
        return body
    return await wait_until(email, f"email {email_id} to go out", lambda e: e["status"] in final)


async def test_a_lead_a_key_made_for_a_stranger_is_no_relay(api, account, mailbox, stack, other_key):
    """The attack: a key creates a lead for a stranger's address and queues an email to it with approve true. It is
    held for the owner; the owner's approval in person sends it and makes the address known to the business."""
    key = account["key"]
    await api.confirm_address(stack, account["email"])
    lead = await lead_with_email(api, account, "dana.reyes@example.com")
    assert lead["email_known_at"] is None
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "Dana.Reyes@Example.com", "subject": "Your quote", "body": "Hi Dana,\nYour quote is attached. – Acme",
        "approve": True})
    assert status == 201, email
    assert (email["status"], email["kind"], email["to"], email["attempts"], email["recipient"]) == (
        "pending_approval", "api", "dana.reyes@example.com", 0, "other")
    status, body, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 403 and body["error"]["code"] == "forbidden", body
    await asyncio.sleep(0.6)  # three delivery rounds
    assert await mailbox("dana.reyes@example.com") == []
    status, approved, _ = await account["dashboard"].request("POST", "/api/v1/emails/approve",
                                                             json={"id": email["id"]})
    assert status == 200 and approved["status"] == "approved", approved
    sent = await settled_email(api, key, email["id"])
    assert sent["status"] == "sent" and sent["attempts"] == 1 and sent["message_id"] and sent["sent_at"]
    [received] = await mailbox("dana.reyes@example.com")
    assert received["subject"] == "Your quote" and "– Acme" in received["body"]
    assert received["message_id"] == sent["message_id"]
    # Never indistinguishable from the platform's own mail: the business is named, answers go to its owner.
    assert received["from"].startswith("Acme Plumbing via Switchboard <"), received["from"]
    assert received["reply_to"] == account["email"].lower()
    # The owner approved the address: the key's next email to it goes out at once.
    status, again, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "dana.reyes@example.com", "subject": "Reminder", "body": "Your quote is still open."})
    assert (again["status"], again["recipient"]) == ("approved", "known"), again
    # Another business's owner approval is not this one's: the address is a stranger's to it.
    status, elsewhere, _ = await api.request("POST", "/api/v1/emails", key=other_key, json={
        "to": "dana.reyes@example.com", "subject": "Hi", "body": "Hello."})
    assert (elsewhere["status"], elsewhere["recipient"]) == ("pending_approval", "other"), elsewhere


async def test_a_caller_who_gave_their_address_on_a_call_is_mailed_at_once(api, account, calling_agent, voice,
                                                                          mailbox):
    """The person reached the business first: the agent collected their address on an inbound call."""
    key, agent = account["key"], calling_agent
    at_provider = await ring(voice, agent["phone_number"], "+14155550181")
    await settled(api, key, (await our_call(api, key, agent["id"], at_provider["id"]))["id"])
    [lead] = await wait_until(lambda: leads_with(api, key, "+14155550181"), "the caller's lead with their address",
                              lambda leads: bool(leads) and leads[0]["email_known_at"] is not None)
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": lead["email"], "subject": "Thanks for calling", "body": "Here is the price list."})
    assert status == 201 and (email["status"], email["recipient"]) == ("approved", "known"), email
    assert (await settled_email(api, key, email["id"]))["status"] == "sent"
    assert [m["subject"] for m in await mailbox(lead["email"])] == ["Thanks for calling"]
    # A key writing another address on the lead makes it a stranger's again.
    status, patched, _ = await api.request("PATCH", "/api/v1/leads", key=key, json={
        "id": lead["id"], "email": "someone.else@example.com"})
    assert status == 200 and patched["email_known_at"] is None, patched
    status, held, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "someone.else@example.com", "subject": "Hi", "body": "Hello."})
    assert (held["status"], held["recipient"]) == ("pending_approval", "other"), held


async def test_an_email_to_a_stranger_waits_for_the_owner_in_person(api, account, mailbox, stack):
    key = account["key"]
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "stranger@example.com", "subject": "Your sign-in link", "body": "Click here."})
    assert status == 201 and (email["status"], email["recipient"]) == ("pending_approval", "other"), email
    status, body, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 403 and body["error"]["code"] == "forbidden" and "signed in to the dashboard" in \
        body["error"]["message"], body
    await asyncio.sleep(0.6)  # three delivery rounds
    assert await mailbox("stranger@example.com") == []
    status, approved, _ = await account["dashboard"].request("POST", "/api/v1/emails/approve",
                                                             json={"id": email["id"]})
    assert status == 200 and approved["status"] == "approved", approved
    assert (await settled_email(api, key, email["id"]))["status"] == "sent"
    # The owner's own address needs no approval, once the owner confirmed it (before, it is anyone's).
    note = {"to": account["email"], "subject": "Note to self", "body": "Call Dana back."}
    status, to_owner, _ = await api.request("POST", "/api/v1/emails", key=key, json=note)
    assert (to_owner["status"], to_owner["recipient"]) == ("pending_approval", "other"), to_owner
    await api.confirm_address(stack, account["email"])
    status, to_owner, _ = await api.request("POST", "/api/v1/emails", key=key, json=note)
    assert (to_owner["status"], to_owner["recipient"]) == ("approved", "owner"), to_owner


async def test_a_business_may_queue_its_daily_quota_and_no_more(api, account):
    key = account["key"]

    async def queue(n: int):
        return await api.request("POST", "/api/v1/emails", key=key, json={
            "to": f"list-{n}@example.com", "subject": "Offer", "body": "Buy now.", "approve": False})

    for start in range(0, QUOTA, 25):
        replies = await asyncio.gather(*(queue(n) for n in range(start, start + 25)))
        assert all(status == 201 for status, _, _ in replies), [b for s, b, _ in replies if s != 201][:1]
    status, body, headers = await queue(QUOTA)
    assert status == 429 and body["error"]["code"] == "rate_limited" and "quota" in body["error"]["message"]
    assert 86_000 < int(headers["Retry-After"]) <= 86_401


async def test_an_email_held_for_approval_waits_until_approved(api, account, mailbox, stack):
    key, owner = account["key"], account["email"].lower()
    await api.confirm_address(stack, owner)
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": owner, "subject": "Follow-up", "body": "Checking in.", "approve": False})
    assert status == 201 and (email["status"], email["recipient"]) == ("pending_approval", "owner"), email
    await asyncio.sleep(0.6)  # three delivery rounds
    assert [m for m in await mailbox(owner) if m["subject"] == "Follow-up"] == []
    status, pending, _ = await api.request("GET", "/api/v1/emails", key=key, params={"status": "pending_approval"})
    assert [e["id"] for e in pending["emails"]] == [email["id"]]
    status, approved, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 200 and approved["status"] == "approved" and approved["approved_by"].startswith("api_key:")
    assert (await settled_email(api, key, email["id"]))["status"] == "sent"
    assert len([m for m in await mailbox(owner) if m["subject"] == "Follow-up"]) == 1
    status, body, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 400 and "only an email pending approval" in body["error"]["message"]


async def test_a_prompt_change_notifies_the_owner_once_the_address_is_confirmed(api, account, mailbox, stack):
    key, owner = account["key"], account["email"]
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Front desk", "system_prompt": "Answer the phone."})
    status, _, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "inbound_prompt": "Answer the phone politely."})
    assert status == 200
    # the address is not confirmed: the notification waits for the owner, not mailed
    held = await wait_until(lambda: owner_notices(api, key, status="pending_approval"),
                            "the owner's notification held for approval")
    assert held[0]["recipient"] == "other" and "version 2" in held[0]["body"], held
    await api.confirm_address(stack, owner)
    status, _, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "inbound_prompt": "Answer the phone and book visits."})
    assert status == 200
    [note] = await wait_until(lambda: owner_notices(api, key), "the owner's notification to be sent")
    assert note["to"] == owner.lower() and "Front desk" in note["subject"] and note["created_by"] == "platform"
    assert "version 3" in note["body"]  # the second change: the first came before the address was confirmed
    received = [m for m in await mailbox(owner.lower()) if m["message_id"] == note["message_id"]]
    assert len(received) == 1 and "rollback" in received[0]["body"]


@pytest.mark.parametrize("body, fix", [
    ({"to": "not-an-address", "subject": "Hi", "body": "x"}, "to"),
    ({"to": "a@example.com", "subject": "Two\nlines", "body": "x"}, "subject"),
    ({"to": "a@example.com", "subject": "Hi", "body": "   "}, "body")])
async def test_bad_emails_are_refused_with_what_to_fix(api, account, body, fix):
    status, reply, _ = await api.request("POST", "/api/v1/emails", key=account["key"], json=body)
    assert status == 400 and reply["error"]["message"].startswith(fix), reply


async def test_another_accounts_key_cannot_see_or_approve(api, account, other_key):
    status, email, _ = await api.request("POST", "/api/v1/emails", key=account["key"], json={
        "to": "private@example.com", "subject": "Private", "body": "Not yours.", "approve": False})
    for method, path, kwargs in (("GET", "/api/v1/emails", {"params": {"id": email["id"]}}),
                                 ("POST", "/api/v1/emails/approve", {"json": {"id": email["id"]}})):
        status, body, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 404 and body["error"]["code"] == "not_found", (path, body)
    status, listed, _ = await api.request("GET", "/api/v1/emails", key=other_key)
    assert email["id"] not in [e["id"] for e in listed["emails"]]
