"""The data export page in a real browser: an export started and run to completion, one under way followed (the page
reloads itself while it is, unless unticked), a completed one's archive downloaded through its link with the owner's
session; another owner can neither start an export of the business nor download its archive."""
from __future__ import annotations

import gzip

from playwright.async_api import expect

from tests.browser.conftest import WIDTHS, accessible, another_owner, screenshots, sign_in
from tests.exports import completed_export, under_way_export


async def test_an_export_is_started_followed_and_downloaded(api, page, browser, db):
    signup = await sign_in(api, page)
    await page.get_by_role("link", name="Data export").click()
    await page.wait_for_url("**/dashboard/exports")
    await expect(page.get_by_text("No exports yet.")).to_be_visible()
    await accessible(page)

    await page.get_by_role("button", name="Start an export").click()
    await expect(page.get_by_role("status").first).to_contain_text("Export started")
    # it runs to completion (the page reloading itself while it is under way) and offers its archive
    await expect(page.get_by_role("link", name="Download the archive of")).to_have_count(1, timeout=60_000)

    # An export under way (held by a runner) is followed: the page reloads itself until told not to.
    await under_way_export(db, signup["business_id"])
    export_id, archive = await completed_export(db, signup["business_id"])
    await page.goto(f"{api.base}/dashboard/exports")
    row = page.get_by_role("row").filter(has_text="1 of 2 kinds done")
    await expect(row).to_have_count(1)
    await expect(page.get_by_label("Update automatically")).to_be_checked()
    async with page.expect_navigation(timeout=15_000):  # it reloads itself while the export is under way
        pass
    assert page.url.endswith(f"/dashboard/exports?business_id={signup['business_id']}")
    await page.get_by_label("Update automatically").uncheck()  # and stops when told (axe reads a page that stays)
    await accessible(page)

    link = page.locator(f'a[href*="id={export_id}&"]')
    await expect(link).to_have_count(1)
    href = await link.get_attribute("href")
    assert href.startswith(f"/api/v1/exports/download?id={export_id}&expires=")
    async with page.expect_download() as downloading:
        await link.click()
    download = await downloading.value
    assert download.suggested_filename.startswith("switchboard-export-")
    with open(await download.path(), "rb") as saved:
        assert saved.read() == archive
    assert gzip.decompress(archive)  # a gzip stream
    for width in WIDTHS.values():
        await page.set_viewport_size({"width": width, "height": 900})
        await accessible(page)
    await screenshots(page, "exports")

    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/exports",
                                         form={"business_id": signup["business_id"], "form_token": token})
        assert reply.status == 403 and "Nothing was started" in await reply.text()
        reply = await other.request.get(f"{api.base}{href}")
        assert reply.status == 404  # the link with another owner's session
