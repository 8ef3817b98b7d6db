"""The calls pages in a real browser: a simulated call found in the list, read and its recording played (Range
requests through the gateway's signed link); the filters and pages of the list; a test call placed to the owner's
phone, or refused with its reason; another owner sees none of it."""
from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from playwright.async_api import expect

from contracts.calls import AUDIO_PATH
from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as
from tests.calling import our_call, place, ring, settled

PLAYED = """async audio => {
  await audio.play();
  await new Promise(done => { if (audio.ended || audio.currentTime >= 1) done(); else {
    audio.addEventListener('ended', done); audio.addEventListener('timeupdate', () => audio.currentTime >= 1 && done());
  } });
  return {ended: audio.ended, at: audio.currentTime};
}"""


async def calls_to(api, account, phone: str) -> list[dict]:
    status, body, _ = await api.request("GET", "/api/v1/calls", key=account["key"], params={"limit": "100"})
    assert status == 200, body
    return [c for c in body["calls"] if c["to"] == phone]


async def test_a_simulated_call_is_opened_from_the_list_read_and_played(api, account, calling_agent, page, browser):
    status, call, _ = await place(api, account["key"], agent_id=calling_agent["id"], to="+14155550161")
    assert status == 201, call
    await settled(api, account["key"], call["id"])
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/calls")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="Call to +14155550161"))
    await expect(row).to_contain_text("completed")
    await expect(row).to_contain_text("water heater")
    await accessible(page)
    await screenshots(page, "calls")

    audio_replies: list[int] = []
    page.on("response", lambda r: audio_replies.append(r.status) if AUDIO_PATH in r.url else None)
    await row.get_by_role("link").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Call to +14155550161")
    await expect(page.get_by_role("region", name="Summary")).to_contain_text("replace a water heater")
    await expect(page.get_by_role("region", name="Transcript")).to_contain_text("Agent:")
    await expect(page.get_by_role("region", name="Transcript")).to_contain_text("Caller:")
    await expect(page.get_by_role("region", name="Quality scores")).to_contain_text("professionalism9 / 10")
    await expect(page.get_by_role("region", name="Structured data")).to_contain_text("jordan@example.com")
    await expect(page.get_by_role("region", name="Timeline")).to_contain_text("the call ended")
    await page.get_by_role("heading", name="Recording").click()  # the user's gesture a player's play() needs
    played = await page.locator("audio").evaluate(PLAYED)
    assert played["ended"] or played["at"] >= 1, played
    assert 206 in audio_replies, audio_replies  # the browser asked for a range and got one
    await accessible(page)
    await screenshots(page, "call")

    async with another_owner(browser, api) as (other, _):
        reply = await other.goto(page.url)
        assert reply.status == 404
        await expect(other.get_by_role("alert")).to_contain_text("not found")


async def test_the_filters_narrow_the_list_and_it_pages(api, account, calling_agent, voice, page):
    key = account["key"]
    placed = await asyncio.gather(*(place(api, key, agent_id=calling_agent["id"], to=f"+1415555{n:04d}")
                                    for n in range(170, 181)))
    assert all(status == 201 for status, _, _ in placed)
    at_provider = await ring(voice, calling_agent["phone_number"], "+14155550169")
    await our_call(api, key, calling_agent["id"], at_provider["id"])
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/calls")
    links = page.get_by_role("table").get_by_role("link")
    await expect(links).to_have_count(12)

    await page.get_by_label("Direction").select_option("inbound")
    await page.get_by_role("button", name="Filter").click()
    await expect(links).to_have_text(["Call from +14155550169"])

    await page.get_by_label("Direction").select_option("outbound")
    await page.get_by_label("Calls per page").select_option("10")
    await page.get_by_role("button", name="Filter").click()
    await expect(links).to_have_count(10)
    first_page = await links.all_text_contents()
    await page.get_by_role("link", name="Next page").click()
    await expect(links).to_have_count(1)
    await expect(page.get_by_role("link", name="Next page")).to_have_count(0)
    assert sorted([*first_page, *await links.all_text_contents()]) == [f"Call to +1415555{n:04d}" for n in range(170, 181)]
    await expect(page.get_by_label("Direction")).to_have_value("outbound")  # the filters stay on the next page

    await page.get_by_label("To (UTC date)").fill(f"{datetime.now(UTC) - timedelta(days=1):%Y-%m-%d}")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("No calls match these filters.")).to_be_visible()


async def test_a_test_call_is_placed_or_refused_with_its_reason(api, account, calling_agent, page, browser):
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/calls")
    form = page.get_by_role("region", name="Place a test call")
    await form.get_by_label("Calling agent").select_option(label="Closer")
    await form.get_by_label("Your phone").fill("+14155550162")
    await form.get_by_role("button", name="Place the test call").click()
    await expect(page.get_by_role("status")).to_contain_text("Test call placed: call to +14155550162")
    [listed] = await calls_to(api, account, "+14155550162")
    await expect(page.get_by_role("status").get_by_role("link")).to_have_attribute(
        "href", f"/dashboard/calls/{listed['id']}")

    form = page.get_by_role("region", name="Place a test call")
    await form.get_by_label("Your phone").fill("+14155550163")
    await form.get_by_label("Check compliance first").check()
    await form.get_by_role("button", name="Place the test call").click()
    await expect(page.get_by_role("alert")).to_contain_text("The test call was not placed (number_opted_out)")
    await expect(page.get_by_role("alert")).to_contain_text("has not agreed to be called")
    await accessible(page)
    assert await calls_to(api, account, "+14155550163") == []

    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/calls", form={
            "business_id": account["business_id"], "agent_id": calling_agent["id"], "to": "+14155550164",
            "form_token": token})
        assert reply.status == 404  # not another owner's agent
    assert await calls_to(api, account, "+14155550164") == []
