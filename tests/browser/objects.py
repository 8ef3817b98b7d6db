"""Helpers of the browser tests of a list page and its objects' pages: one object as the API reads it, a list page
checked, kept as screenshots, then left by an object's link, and an object's page another owner may not see."""
from __future__ import annotations

from playwright.async_api import Locator, Page, expect

from tests.browser.conftest import accessible, screenshots


async def read_one(api, account, path: str, **params: str):
    """What GET `path` with `params` answers the account's key (200 expected)."""
    status, body, _ = await api.request("GET", path, key=account["key"], params=params)
    assert status == 200, body
    return body


async def checked_then_opened(page: Page, name: str, link: Locator, url: str) -> None:
    """The page as it is now: axe finds nothing blocking, its screenshots are kept as `name`; then `link` is
    followed to `url`."""
    await accessible(page)
    await screenshots(page, name)
    await link.click()
    await page.wait_for_url(url)


async def not_found_to(page: Page, url: str) -> None:
    """`url` is a 404 page to `page`'s owner, saying so."""
    shown = await page.goto(url)
    assert shown is not None and shown.status == 404
    await expect(page.get_by_role("alert")).to_contain_text("not found")
