"""The phone numbers page in a real browser: a number with the agent it routes to, its ring-first forwarding turned on
and off (as the API then shows it); another owner cannot change it."""
from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as


async def forwarding_of(api, account, number: str):
    status, body, _ = await api.request("GET", "/api/v1/phone-numbers", key=account["key"],
                                        params={"business_id": account["business_id"]})
    assert status == 200, body
    [found] = [n for n in body["phone_numbers"] if n["phone_number"] == number]
    return found["forwarding"]


async def test_forwarding_is_set_and_cleared_on_the_numbers_page(api, account, calling_agent, page, browser):
    number = calling_agent["phone_number"]
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/numbers")
    section = page.get_by_role("region", name=number)
    await expect(section).to_contain_text("Answered by Closer.")
    await accessible(page)
    await section.get_by_label("Ring first").fill("+14155550188")
    await section.get_by_label("for seconds").fill("15")
    await section.get_by_role("button", name=f"Save the forwarding of {number}").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Calls to {number} now ring +14155550188 first.")
    assert await forwarding_of(api, account, number) == {"to": "+14155550188", "ring_seconds": 15}
    await accessible(page)
    await screenshots(page, "numbers")

    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/numbers", form={
            "phone_number": number, "forward_to": "+14155550199", "form_token": token})
        assert reply.status == 404  # not another owner's number
    assert (await forwarding_of(api, account, number))["to"] == "+14155550188"

    section = page.get_by_role("region", name=number)
    await section.get_by_label("Ring first").fill("555-0100")
    await section.get_by_role("button", name=f"Save the forwarding of {number}").click()
    await expect(page.get_by_role("alert")).to_contain_text("Nothing was changed")
    assert (await forwarding_of(api, account, number))["to"] == "+14155550188"

    section = page.get_by_role("region", name=number)
    await section.get_by_label("Ring first").fill("")
    await section.get_by_role("button", name=f"Save the forwarding of {number}").click()
    await expect(page.get_by_role("status")).to_contain_text("now go straight to its agent")
    assert await forwarding_of(api, account, number) is None
