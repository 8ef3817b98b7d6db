"""The email queue end to end: queued and approved emails go out through SMTP (the stack's catch-all), an
email held for approval waits until approved, and an agent's prompt change notifies the owner once."""
import asyncio

import pytest


async def settled_email(api, key, email_id: str, final=("sent", "failed")) -> dict:
    for _ in range(100):
        status, email, _ = await api.request("GET", "/api/v1/emails", key=key, params={"id": email_id})
        assert status == 200, email
        if email["status"] in final:
            return email
        await asyncio.sleep(0.1)
    pytest.fail(f"email {email_id} did not go out: {email}")


async def test_an_approved_email_goes_out_through_smtp(api, account, mailbox):
    key = account["key"]
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "Dana.Reyes@Example.com", "subject": "Your quote", "body": "Hi Dana,\nYour quote is attached. – Acme"})
    assert status == 201, email
    assert (email["status"], email["kind"], email["to"], email["attempts"]) == ("approved", "api",
                                                                                "dana.reyes@example.com", 0)
    sent = await settled_email(api, key, email["id"])
    assert sent["status"] == "sent" and sent["attempts"] == 1 and sent["message_id"] and sent["sent_at"]
    [received] = await mailbox("dana.reyes@example.com")
    assert received["subject"] == "Your quote" and "– Acme" in received["body"]
    assert received["message_id"] == sent["message_id"]


async def test_an_email_held_for_approval_waits_until_approved(api, account, mailbox):
    key = account["key"]
    status, email, _ = await api.request("POST", "/api/v1/emails", key=key, json={
        "to": "held@example.com", "subject": "Follow-up", "body": "Checking in.", "approve": False})
    assert status == 201 and email["status"] == "pending_approval"
    await asyncio.sleep(0.6)  # three delivery rounds
    assert await mailbox("held@example.com") == []
    status, pending, _ = await api.request("GET", "/api/v1/emails", key=key, params={"status": "pending_approval"})
    assert [e["id"] for e in pending["emails"]] == [email["id"]]
    status, approved, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 200 and approved["status"] == "approved" and approved["approved_by"].startswith("api_key:")
    assert (await settled_email(api, key, email["id"]))["status"] == "sent"
    assert len(await mailbox("held@example.com")) == 1
    status, body, _ = await api.request("POST", "/api/v1/emails/approve", key=key, json={"id": email["id"]})
    assert status == 400 and "only an email pending approval" in body["error"]["message"]


async def test_a_prompt_change_notifies_the_owner_once(api, account, mailbox):
    key, owner = account["key"], account["email"]
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": account["business_id"], "name": "Front desk", "system_prompt": "Answer the phone."})
    status, _, _ = await api.request("PATCH", "/api/v1/agents", key=key, json={
        "id": agent["id"], "inbound_prompt": "Answer the phone and book visits."})
    assert status == 200
    for _ in range(100):
        status, queue, _ = await api.request("GET", "/api/v1/emails", key=key, params={"status": "sent"})
        notes = [e for e in queue["emails"] if e["kind"] == "owner_notification"]
        if notes:
            break
        await asyncio.sleep(0.1)
    [note] = notes
    assert note["to"] == owner.lower() and "Front desk" in note["subject"] and note["created_by"] == "platform"
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
