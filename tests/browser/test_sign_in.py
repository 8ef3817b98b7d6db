"""Signing in to the dashboard in a real browser: the magic link's page and its button, the signed-in page, signing
out; each page accessible (axe) and photographed at a phone's and a desktop's width."""
from __future__ import annotations

from tests.browser.conftest import accessible, screenshots, sign_in


async def test_the_magic_link_signs_the_owner_in_and_out(api, page):
    signup = await api.signup()
    await page.goto(signup["dashboard_magic_link"])
    confirm = page.get_by_role("button", name="Sign in")
    await accessible(page)
    await screenshots(page, "sign-in-confirm")
    await confirm.click()
    await page.wait_for_url("**/dashboard")
    assert "Signed in" in await page.inner_text("body")
    assert any(c["name"] == "sb_session" and c["httpOnly"] for c in await page.context.cookies())
    await accessible(page)
    await screenshots(page, "home")

    await page.get_by_role("button", name="Sign out", exact=True).click()
    assert "You are signed out" in await page.inner_text("body")
    reply = await page.goto(f"{api.base}/dashboard")
    assert reply is not None and reply.status == 401
    assert "Not signed in" in await page.inner_text("body")
    await accessible(page)


async def test_a_used_magic_link_signs_no_one_in(api, page):
    signup = await sign_in(api, page)
    other = await page.context.browser.new_context()
    try:
        second = await other.new_page()
        await second.goto(signup["dashboard_magic_link"])
        await second.get_by_role("button", name="Sign in").click()
        assert "Sign-in failed" in await second.inner_text("body")
        assert not [c for c in await other.cookies() if c["name"] == "sb_session"]
        await accessible(second)
    finally:
        await other.close()
