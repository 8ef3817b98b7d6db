"""The data export page in a real browser: an export started and shown under way (the page reloads itself while it
is, unless unticked), a completed one's archive downloaded through its link with the owner's session; another owner can neither
start an export of the business nor download its archive."""
from __future__ import annotations

import gzip

from playwright.async_api import expect

from tests.browser.conftest import WIDTHS, accessible, another_owner, screenshots, sign_in
from tests.exports import completed_export


async def test_an_export_is_started_followed_and_downloaded(api, page, browser, db):
    signup = await sign_in(api, page)
    await page.get_by_role("link", name="Data export").click()
    await page.wait_for_url("**/dashboard/exports")
    await expect(page.get_by_text("No exports yet.")).to_be_visible()
    await accessible(page)

    await page.get_by_role("button", name="Start an export").click()
    await expect(page.get_by_role("status").first).to_contain_text("Export started")
    row = page.get_by_role("row").filter(has_text="kinds done")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("of 16 kinds done")
    await expect(page.get_by_label("Update automatically")).to_be_checked()
    async with page.expect_navigation(timeout=15_000):  # it reloads itself while the export is under way
        pass
    assert page.url.endswith(f"/dashboard/exports?business_id={signup['business_id']}")
    await page.get_by_label("Update automatically").uncheck()  # and stops when told (axe reads a page that stays)
    await accessible(page)

    export_id, archive = await completed_export(db, signup["business_id"])
    await page.goto(f"{api.base}/dashboard/exports")
    await page.get_by_label("Update automatically").uncheck()  # the first export is still under way
    link = page.get_by_role("link", name="Download the archive of")
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
