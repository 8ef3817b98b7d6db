"""An agent's tools in a real browser: the call page's timeline lists the tools the agent called (arguments shown
escaped, a long result cut with the whole of it a click away), and the agent page turns a built-in tool on, saves
send_link's links, refuses an http custom tool with the service's reason, adds a custom tool (its secret shown once),
rotates that secret and removes the tool, as the API then reads the agent; axe finds nothing blocking at a phone's
width or a desktop's; another owner's session gets 404 and changes nothing."""
from __future__ import annotations

import json
import time

import aiohttp
from playwright.async_api import Page, expect

from tests.agents import create_agent, read_agent
from tests.browser.conftest import WIDTHS, accessible, another_owner, screenshots, signed_in_as
from tests.calling import place, settled
from tests.e2e.test_call_lifecycle import MESSAGES, signed
from tests.receiver import Receiver

LONG_ANSWER = "Order A-17 shipped on Monday. " + "It is on its way to the caller. " * 20
ARGUMENTS = {"order": "<b>A-17</b>"}  # the owner's data, shown as text: never markup


async def accessible_at_each_width(page: Page) -> None:
    for width in WIDTHS.values():
        await page.set_viewport_size({"width": width, "height": 900})
        await accessible(page)


async def tool_calls(stack, provider_call_id: str, call_id: str) -> dict:
    """The voice provider's signed tool-calls message about the call, posted to the gateway; its answer."""
    body = json.dumps({"message": {
        "type": "tool-calls", "timestamp": int(time.time() * 1000),
        "call": {"id": provider_call_id, "assistantOverrides": {"metadata": {"switchboard_call_id": call_id}}},
        "toolCallList": [
            {"id": "call_lookup", "type": "function",
             "function": {"name": "lookup_order", "arguments": json.dumps(ARGUMENTS)}},
            {"id": "call_end", "type": "function", "function": {"name": "end_call", "arguments": "{}"}},
            {"id": "call_book", "type": "function",
             "function": {"name": "book_appointment", "arguments": json.dumps({"name": "Dana"})}}]}}).encode()
    async with aiohttp.ClientSession() as session, session.post(stack.base_url + MESSAGES, data=body, headers=signed(
            body, stack.env()["VOICE_WEBHOOK_SECRET"], time.time())) as reply:
        assert reply.status == 200, await reply.text()
        return await reply.json()


async def test_the_call_page_lists_the_tools_the_agent_called(api, stack, account, calling_agent, page, browser):
    receiver = await Receiver(answer=LONG_ANSWER).start()
    try:
        lookup = {"type": "custom", "name": "lookup_order", "description": "Find an order by its number",
                  "parameters": {"type": "object", "properties": {"order": {"type": "string"}}},
                  "url": receiver.url}  # loopback: the stack is local
        status, patched, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
            "id": calling_agent["id"], "tools": [{"type": "end_call"}, lookup]})
        assert status == 200, patched
        status, call, _ = await place(api, account["key"], agent_id=calling_agent["id"], to="+14155550191")
        assert status == 201, call
        ended = await settled(api, account["key"], call["id"])
        answer = await tool_calls(stack, ended["conversation_id"], call["id"])
        assert [r["toolCallId"] for r in answer["results"]] == ["call_lookup", "call_end", "call_book"]
    finally:
        await receiver.stop()

    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/calls/{call['id']}")
    timeline = page.get_by_role("region", name="Timeline")
    listed = timeline.locator("li.tool-call")
    await expect(listed).to_have_count(3)
    await expect(listed.nth(0)).to_contain_text("the agent called lookup_order: ok in")
    await expect(listed.nth(0)).to_contain_text('Arguments{"order": "<b>A-17</b>"}')
    await expect(timeline.locator("b")).to_have_count(0)  # the arguments are text, not markup
    await expect(listed.nth(0)).to_contain_text(LONG_ANSWER[:300] + "…")
    whole = listed.nth(0).get_by_text(LONG_ANSWER.strip())
    await expect(whole).to_be_hidden()
    await listed.nth(0).get_by_text(f"The whole result ({len(LONG_ANSWER)} characters)").click()
    await expect(whole).to_be_visible()
    await expect(listed.nth(1)).to_contain_text("the agent called end_call: ok in")
    await expect(listed.nth(1)).to_contain_text("Argumentsnone")
    await expect(listed.nth(2)).to_contain_text("the agent called book_appointment: refused in")
    await expect(listed.nth(2)).to_contain_text("not available to this agent")
    await accessible_at_each_width(page)
    await screenshots(page, "call-tools")

    async with another_owner(browser, api) as (other, _):
        shown = await other.goto(page.url)
        assert shown is not None and shown.status == 404
        await expect(other.get_by_text("lookup_order")).to_have_count(0)


async def test_the_agent_page_turns_tools_on_saves_links_and_keeps_custom_tools_to_https(api, account, page,
                                                                                        browser):
    agent = await create_agent(api, account, name="Tool desk")
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/agents/{agent['id']}")
    tools = page.get_by_role("region", name="Tools", exact=True)
    await expect(tools.get_by_text("No custom tools yet.")).to_be_visible()
    await accessible_at_each_width(page)

    # A built-in tool turned on, with a link: a new version, as the API reads it.
    await tools.get_by_label("send_link").check()
    await tools.get_by_label("Link 1 name").fill("menu")
    await tools.get_by_label("Link 1 URL").fill("https://bright.example.com/menu")
    await tools.get_by_role("button", name="Save the tools").click()
    await expect(page.locator("p[role=status]")).to_contain_text("The tools are saved as version 2.")
    assert (await read_agent(api, account, agent["id"]))["tools"] == [
        {"type": "send_link", "links": [{"name": "menu", "url": "https://bright.example.com/menu"}]}]
    await expect(tools.get_by_label("send_link")).to_be_checked()
    await expect(tools.get_by_label("Link 1 URL")).to_have_value("https://bright.example.com/menu")

    # A custom tool at an http URL: the service's reason, a 400, nothing saved, the form as typed.
    custom = page.get_by_role("form", name="Add a tool of your own")
    await custom.get_by_label("Name").fill("lookup_order")
    await custom.get_by_label("Description").fill("Find an order by its number")
    await custom.get_by_label("URL (https)").fill("http://tools.example.com/lookup")
    async with page.expect_response(f"**/dashboard/agents/{agent['id']}/tools/custom") as posted:
        await custom.get_by_role("button", name="Add the tool").click()
    assert (await posted.value).status == 400
    await expect(page.get_by_role("alert")).to_contain_text("Nothing was saved: tools[1].url must be an https URL")
    await expect(custom.get_by_label("URL (https)")).to_have_value("http://tools.example.com/lookup")
    await expect(custom.get_by_label("Name")).to_have_value("lookup_order")
    assert (await read_agent(api, account, agent["id"]))["version"] == 2
    await accessible_at_each_width(page)
    await screenshots(page, "agent-tools")

    # Parameters that are not JSON: said so, nothing saved.
    await custom.get_by_label("URL (https)").fill("http://127.0.0.1:9/lookup")  # loopback: the stack is local
    await custom.get_by_label("Parameters").fill('{"type": "object",')
    await custom.get_by_role("button", name="Add the tool").click()
    await expect(page.get_by_role("alert")).to_contain_text("the parameters must be JSON")

    # The custom tool added: its secret shown once, then rotated (another one, once), then the tool removed.
    await custom.get_by_label("Parameters").fill('{"type": "object", "properties": {"order": {"type": "string"}}}')
    await custom.get_by_role("button", name="Add the tool").click()
    await expect(page.locator("p[role=status]")).to_contain_text("The tools are saved as version 3.")
    first = await page.get_by_label("Tool secret of Tool desk").input_value()
    assert first.startswith("tsec_")
    saved = await read_agent(api, account, agent["id"])
    assert [t["type"] for t in saved["tools"]] == ["send_link", "custom"]
    assert saved["tool_secret_masked"] == f"tsec_...{first[-4:]}"
    await expect(tools.get_by_role("table", name="Custom tools of the agent")).to_contain_text("lookup_order")
    await accessible_at_each_width(page)
    await page.reload()
    await expect(page.get_by_label("Tool secret of Tool desk")).to_have_count(0)
    await tools.get_by_role("button", name="Rotate the tool secret").click()
    second = await page.get_by_label("Tool secret of Tool desk").input_value()
    assert second.startswith("tsec_") and second != first
    await expect(page.get_by_role("region", name="The custom tools' secret")).to_contain_text(
        "signed with the old secret too until")
    assert (await read_agent(api, account, agent["id"]))["tool_secret_masked"] == f"tsec_...{second[-4:]}"

    # Another owner: the page, saving tools, removing one and rotating the secret are 404; nothing changes.
    async with another_owner(browser, api) as (other, token):
        here = f"{api.base}/dashboard/agents/{agent['id']}"
        shown = await other.goto(here)
        assert shown is not None and shown.status == 404
        for path, form in (("/tools", {"tools_form": "builtins", "tool": "send_sms"}),
                           ("/tools/remove", {"name": "lookup_order"}), ("/tools/rotate-secret", {})):
            reply = await other.request.post(here + path, form={**form, "form_token": token, "expected_version": "3"})
            assert reply.status == 404, path
    assert (await read_agent(api, account, agent["id"]))["version"] == 3
    assert (await read_agent(api, account, agent["id"]))["tool_secret_masked"] == f"tsec_...{second[-4:]}"

    # A form without the page's token (another site's): 403, nothing removed.
    reply = await page.request.post(f"{api.base}/dashboard/agents/{agent['id']}/tools/remove",
                                    form={"name": "lookup_order", "expected_version": "3"})
    assert reply.status == 403 and "nothing was removed" in await reply.text()
    assert (await read_agent(api, account, agent["id"]))["version"] == 3

    await tools.get_by_role("button", name="Remove the tool lookup_order").click()
    await expect(page.locator("p[role=status]")).to_contain_text("The tools are saved as version 4.")
    assert [t["type"] for t in (await read_agent(api, account, agent["id"]))["tools"]] == ["send_link"]
