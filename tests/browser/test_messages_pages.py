"""The messages pages in a real browser: a text conversation (a text in, a reply out) listed and read in its thread
(which reads it for the API too), and an email held for approval approved on the page, then sent; another owner
sees neither and cannot approve."""
from __future__ import annotations

import uuid

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as
from tests.browser.objects import checked_then_opened, not_found_to, read_one
from tests.texting import number, send
from tests.waiting import wait_until


async def email_of(api, account, email_id: str) -> dict:
    return await read_one(api, account, "/api/v1/emails", id=email_id)


async def test_a_conversation_is_listed_and_its_thread_shows_the_texts(api, account, calling_agent, sms, page,
                                                                       browser):
    agent, contact = calling_agent, number("0195")
    assert await sms.text_in(contact, agent["phone_number"], "Do you fix leaking taps?") == []
    status, sent, _ = await send(api, account["key"], agent, contact, "Yes, we can come on Tuesday.")
    assert status == 200, sent
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/messages")
    link = page.get_by_role("link", name=contact)
    row = page.get_by_role("row").filter(has=link)
    await expect(row).to_contain_text(agent["phone_number"])
    await expect(row).to_contain_text("outbound")
    await expect(row).to_contain_text("Yes, we can come on Tuesday.")
    thread_url = f"{api.base}/dashboard/messages/{sent['conversation_id']}"
    await checked_then_opened(page, "messages", link, thread_url)
    texts = page.get_by_role("list", name="Texts, oldest first").get_by_role("listitem")
    await expect(texts).to_have_count(2)
    await expect(texts.nth(0)).to_contain_text("Do you fix leaking taps?")
    await expect(texts.nth(0)).to_contain_text(f"From {contact} · inbound · received")
    await expect(texts.nth(1)).to_contain_text("Yes, we can come on Tuesday.")
    await expect(texts.nth(1)).to_contain_text(f"To {contact} · outbound")
    thread = await read_one(api, account, "/api/v1/sms/conversations", id=sent["conversation_id"])
    assert thread["unread_count"] == 0  # read here, as the API's listing of its texts does
    await accessible(page)
    await screenshots(page, "thread")

    async with another_owner(browser, api) as (other, _):
        await not_found_to(other, thread_url)
        await other.goto(f"{api.base}/dashboard/messages")
        await expect(other.get_by_role("heading", name="Text conversations")).to_be_visible()
        await expect(other.get_by_role("link", name=contact)).to_have_count(0)
    await not_found_to(page, f"{api.base}/dashboard/messages/not-an-id")


async def test_a_held_email_is_approved_on_the_page_and_goes_out(api, account, mailbox, page, browser):
    to, subject = f"neighbour-{uuid.uuid4().hex[:8]}@example.com", "Your estimate"
    status, email, _ = await api.request("POST", "/api/v1/emails", key=account["key"], json={
        "to": to, "subject": subject, "body": "Hi,\nthe estimate for the taps is attached."})
    assert status == 201 and (email["status"], email["recipient"]) == ("pending_approval", "other"), email
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/messages")
    held = page.get_by_role("region", name="Emails waiting for your approval")
    await expect(held.get_by_role("row").filter(has_text=to)).to_contain_text(subject)
    await accessible(page)

    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/messages/approve",
                                         form={"id": email["id"], "form_token": token})
        assert reply.status == 404 and "not found" in await reply.text()
        await other.goto(f"{api.base}/dashboard/messages")
        await expect(other.get_by_role("heading", name="Emails waiting for your approval")).to_be_visible()
        await expect(other.get_by_text(to)).to_have_count(0)
    assert (await email_of(api, account, email["id"]))["status"] == "pending_approval"
    assert await mailbox(to) == []

    await held.get_by_role("button", name=f"Approve the email to {to}: {subject}").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Approved the email to {to}")
    await expect(page.get_by_role("region", name="Emails waiting for your approval")).not_to_contain_text(to)
    approved = await email_of(api, account, email["id"])
    assert approved["status"] in ("approved", "sent") and approved["approved_by"], approved
    await wait_until(lambda: email_of(api, account, email["id"]), f"the email to {to} to be sent",
                     lambda e: e["status"] == "sent")
    [received] = await mailbox(to)
    assert received["subject"] == subject
    await page.goto(f"{api.base}/dashboard/messages")
    await expect(page.get_by_role("region", name="Latest emails").get_by_role("row").filter(has_text=to)) \
        .to_contain_text("sent")
    await accessible(page)
