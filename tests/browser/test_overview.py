"""The overview in a real browser: the business's subscription and trial as the API has them, the analytics figures
the API's dashboard report gives, the calls-per-day chart drawn for the chosen period, the lead funnel, and this
session's end."""
from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import accessible, screenshots, signed_in_as


async def test_the_overview_shows_the_subscription_and_the_reports_figures(api, account, page):
    for name in ("Ada", "Grace"):
        status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"],
                                            json={"business_id": account["business_id"], "name": name})
        assert status == 201, lead
    status, listed, _ = await api.request("GET", "/api/v1/workspaces", key=account["key"],
                                          params={"id": account["business_id"]})
    assert status == 200, listed
    [workspace] = listed["workspaces"]
    status, report, _ = await api.request("GET", "/api/v1/analytics/dashboard", key=account["key"])
    assert status == 200 and report["leads"]["total"] >= 2, report

    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard")
    trial_end = workspace["trial_ends_at"].replace("T", " ")[:16]  # 2026-12-04T17:05:41Z → 2026-12-04 17:05
    figures = page.get_by_role("region", name=workspace["name"])
    await expect(figures.locator("dt:text-is('Free trial') + dd")).to_have_text(f"ends {trial_end} UTC")
    await expect(figures.locator("dt:text-is('Subscription') + dd")).to_contain_text(workspace["subscription_status"])
    await expect(figures.locator("dt:text-is('Set-up') + dd")).to_contain_text("waiting for the card checkout")
    period = page.get_by_role("region", name="The last 30 days")
    await expect(period.locator("dt:text-is('Leads') + dd")).to_have_text(str(report["leads"]["total"]))
    await expect(period.locator("dt:text-is('Calls') + dd")).to_have_text(str(report["calls"]["total"]))
    await expect(period.locator("dt:text-is('Agents') + dd")).to_have_text(str(report["agents"]["total"]))
    await expect(page.locator("svg[aria-labelledby^='calls-chart'] rect.bar")).to_have_count(30)
    new_row = page.get_by_role("row", name="new")
    await expect(new_row.get_by_role("cell").nth(1)).to_have_text(str(report["leads"]["by_status"]["new"]))
    await expect(page.get_by_role("link", name="Grace")).to_have_attribute("href", f"/dashboard/leads/{lead['id']}")
    await expect(page.get_by_role("region", name="Your session")).to_contain_text("This session ends 20")
    await accessible(page)
    await screenshots(page, "overview")

    await page.get_by_label("Period", exact=True).select_option("7")
    await page.get_by_role("region", name="The last 30 days").get_by_role("button", name="Show").click()
    await expect(page.get_by_role("heading", name="The last 7 days")).to_be_visible()
    await expect(page.locator("svg[aria-labelledby^='calls-chart'] rect.bar")).to_have_count(7)


async def test_the_checkout_return_page_speaks_to_a_signed_out_owner(api, page):
    reply = await page.goto(f"{api.base}/dashboard?checkout=canceled")
    assert reply is not None and reply.status == 200
    await expect(page.locator("main")).to_contain_text("Checkout canceled: nothing was charged.")
