"""The API keys page in a real browser: a key created with chosen scopes is shown once, works at the API with those
scopes only, is listed without its secret, and once revoked or expired is refused; another owner cannot revoke or
expire it."""
from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, sign_in


async def test_a_key_is_created_shown_once_used_and_revoked(api, page, browser):
    signup = await sign_in(api, page)
    await page.get_by_role("link", name="API keys").click()
    await page.wait_for_url("**/dashboard/keys")
    await accessible(page)
    await page.get_by_label("Name").fill("Reporting")
    await page.get_by_label("calls:read", exact=True).check()
    await page.get_by_label("Business").select_option(signup["business_id"])
    await page.get_by_role("button", name="Create key").click()
    key = await page.get_by_label("Key Reporting").input_value()
    assert key.startswith("svc_")
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=api.base)
    await page.get_by_role("button", name="Copy").click()
    await expect(page.get_by_role("status")).to_have_text("Copied.")
    assert await page.evaluate("navigator.clipboard.readText()") == key
    await accessible(page)
    await screenshots(page, "api-key-created")

    assert (await api.request("GET", "/api/v1/calls", key=key))[0] == 200
    status, body, _ = await api.request("GET", "/api/v1/agents", key=key)
    assert status == 403 and body["error"]["code"] == "forbidden"  # only the scope chosen

    await page.goto(f"{api.base}/dashboard/keys")
    assert key not in await page.content()  # shown once
    row = page.get_by_role("row").filter(has_text="Reporting")
    assert "calls:read" in await row.inner_text() and "Acme Plumbing" in await row.inner_text()
    await screenshots(page, "api-keys")

    key_id = await row.locator("input[name=id]").first.get_attribute("value")
    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/keys/revoke", form={"id": key_id, "form_token": token})
        assert reply.status == 404  # not another owner's key to revoke
    assert (await api.request("GET", "/api/v1/calls", key=key))[0] == 200

    await page.get_by_role("button", name="Revoke Reporting").click()
    await page.wait_for_url("**/dashboard/keys")
    assert "revoked" in await page.get_by_role("row").filter(has_text="Reporting").inner_text()
    status, body, _ = await api.request("GET", "/api/v1/calls", key=key)
    assert status == 401 and body["error"]["code"] == "unauthorized"


async def test_the_keys_page_needs_a_session(api, page):
    reply = await page.goto(f"{api.base}/dashboard/keys")
    assert reply is not None and reply.status == 401
    assert "Not signed in" in await page.inner_text("body")
    await accessible(page)


async def test_a_form_without_this_pages_token_changes_nothing(api, page):
    await sign_in(api, page)
    before = await page.context.request.get(f"{api.base}/api/v1/keys")
    reply = await page.context.request.post(f"{api.base}/dashboard/keys", form={"name": "Forged", "scopes": "*"})
    assert reply.status == 403 and "nothing was created" in await reply.text()
    after = await page.context.request.get(f"{api.base}/api/v1/keys")
    assert len((await after.json())["keys"]) == len((await before.json())["keys"])


async def test_a_key_created_with_an_expiry_shows_it_and_expiring_it_stops_it(api, page, browser):
    await sign_in(api, page)
    await page.goto(f"{api.base}/dashboard/keys")
    await page.get_by_label("Name").fill("Temporary")
    await page.get_by_label("calls:read", exact=True).check()
    await page.get_by_label("Expires on").fill("2099-01-31")
    await page.get_by_role("button", name="Create key").click()
    key = await page.get_by_label("Key Temporary").input_value()
    listed = await page.context.request.get(f"{api.base}/api/v1/keys")
    [made] = [k for k in (await listed.json())["keys"] if k["name"] == "Temporary"]
    assert made["expires_at"].startswith("2099-01-31T00:00:00")
    assert (await api.request("GET", "/api/v1/calls", key=key))[0] == 200

    await page.goto(f"{api.base}/dashboard/keys")
    row = page.get_by_role("row").filter(has_text="Temporary")
    await expect(row).to_contain_text("2099-01-31 00:00 UTC")
    async with another_owner(browser, api) as (other, token):
        reply = await other.request.post(f"{api.base}/dashboard/keys/expire", form={"id": made["id"], "form_token": token})
        assert reply.status == 404  # not another owner's key to expire
    assert (await api.request("GET", "/api/v1/calls", key=key))[0] == 200

    await row.get_by_role("button", name="Expire Temporary now").click()
    await expect(page.get_by_role("row").filter(has_text="Temporary")).to_contain_text("expired")
    status, body, _ = await api.request("GET", "/api/v1/calls", key=key)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    await accessible(page)


async def test_an_expiry_that_is_not_a_date_creates_nothing(api, page):
    await sign_in(api, page)
    await page.goto(f"{api.base}/dashboard/keys")
    token = await page.locator("input[name=form_token]").first.get_attribute("value")
    created = await page.context.request.post(f"{api.base}/dashboard/keys", form={
        "name": "Odd", "expires_on": "next tuesday", "form_token": token})
    assert created.status == 400 and "must be a date such as" in await created.text()
    keys = (await (await page.context.request.get(f"{api.base}/api/v1/keys")).json())["keys"]
    assert not [k for k in keys if k["name"] == "Odd"]


async def test_a_key_is_made_with_the_keyboard_alone_and_the_focus_is_visible(api, page):
    await sign_in(api, page)
    await page.goto(f"{api.base}/dashboard/keys")
    await page.get_by_label("Name").focus()
    await page.keyboard.type("Keyboard")
    outline = await page.evaluate("[getComputedStyle(document.activeElement).outlineStyle, "
                                  "getComputedStyle(document.activeElement).outlineWidth]")
    assert outline == ["solid", "3px"]  # the focused control is marked (dashboard.css: focus-visible)
    for _ in range(50):  # Tab on to the scope "*" (every scope), then tick it with the space bar
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.value") == "*":
            break
    assert await page.evaluate("document.activeElement.name") == "scopes"
    await page.keyboard.press("Space")
    for _ in range(50):  # on to the button, and press it
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.textContent") == "Create key":
            break
    await page.keyboard.press("Enter")
    key = await page.get_by_label("Key Keyboard").input_value()
    status, _, _ = await api.request("GET", "/api/v1/agents", key=key)
    assert status == 200  # every scope, as ticked
