"""The dashboard in a real browser: Debian's Chromium (`apt-get install chromium`; Playwright cannot download
browsers here) driven by Playwright against the shared embedded stack, with axe-core (vendored by
axe-playwright-python) checking each page. Without a Chromium the browser tests are skipped, loudly: the run's
summary says so in capitals."""
from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, async_playwright, expect

ROOT = Path(__file__).resolve().parents[2]
# Screenshots of every page at a phone's width and a desktop's (BROWSER_ARTIFACTS, else under .switchboard/).
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS") or ROOT / ".switchboard" / "browser-artifacts")
WIDTHS = {"phone": 375, "desktop": 1280}
BLOCKING_IMPACTS = ("serious", "critical")
_missing: list[str] = []
expect.set_options(timeout=15_000)  # a page's assertions wait this long: the shared stack is busy under make test


def chromium_path() -> str | None:
    """CHROMIUM, else the system's chromium."""
    return os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
async def browser():
    path = chromium_path()
    if path is None:
        _missing.append("no chromium: install Debian's (apt-get install chromium) or set CHROMIUM")
        pytest.skip(_missing[0])
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.fixture
async def page(browser):
    """A page of its own browser context (its own cookies), at a desktop's width."""
    context = await browser.new_context(viewport={"width": WIDTHS["desktop"], "height": 900})
    opened = await context.new_page()
    yield opened
    await context.close()


async def sign_in(api, page: Page) -> dict:
    """A new business's signup, its owner signed in on `page` by the magic link's button."""
    signup = await api.signup()
    await page.goto(signup["dashboard_magic_link"])
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url("**/dashboard")
    return signup


@asynccontextmanager
async def another_owner(browser, api) -> AsyncIterator[tuple[Page, str]]:
    """A page of another business's owner, signed in in a browser context of its own, and its pages' form token."""
    context = await browser.new_context()
    try:
        other = await context.new_page()
        await sign_in(api, other)
        yield other, await other.locator("input[name=form_token]").first.get_attribute("value")
    finally:
        await context.close()


async def signed_in_as(page: Page, api, account: dict) -> None:
    """`page`'s browser signed in with the dashboard session of the `account` fixture (its magic link is spent)."""
    session = next(c for c in account["dashboard"].session.cookie_jar if c.key == "sb_session")
    await page.context.add_cookies([{"name": "sb_session", "value": session.value, "url": api.base}])


async def accessible(page: Page) -> None:
    """axe-core finds nothing of serious or critical impact on the page as it is now."""
    results = await Axe().run(page)
    blocking = [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
                for v in results.response["violations"] if v.get("impact") in BLOCKING_IMPACTS]
    assert not blocking, f"{page.url}: " + "; ".join(blocking)


async def screenshots(page: Page, name: str) -> None:
    """The page at each of WIDTHS, saved as an artifact; the page is left at a desktop's width."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for label, width in WIDTHS.items():
        await page.set_viewport_size({"width": width, "height": 900})
        await page.screenshot(path=str(ARTIFACTS / f"{name}-{label}.png"), full_page=True)


def pytest_terminal_summary(terminalreporter):
    if _missing:
        terminalreporter.write_sep("!", "BROWSER TESTS SKIPPED: " + _missing[0], red=True, bold=True)
