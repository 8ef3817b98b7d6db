"""The webhooks page in a real browser: a subscription added with its secret shown once, the test event sent and seen
in the delivery log and at the receiver, the secret rotated; another owner cannot send to it."""
from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, sign_in
from tests.receiver import Receiver


async def test_a_subscription_is_added_tested_and_its_secret_rotated(api, page, browser):
    receiver = await Receiver().start()
    try:
        await sign_in(api, page)
        await page.get_by_role("link", name="Webhooks").click()
        await page.wait_for_url("**/dashboard/webhooks")
        await accessible(page)
        await page.get_by_label("URL").fill(receiver.url)
        await page.get_by_label("call.completed", exact=True).check()
        await page.get_by_role("button", name="Add subscription").click()
        secret = await page.get_by_role("textbox", name=f"Secret of {receiver.url}").input_value()
        assert secret.startswith("whsec_")
        await accessible(page)

        await page.get_by_role("button", name=f"Send a test event to {receiver.url}").click()
        await expect(page.get_by_role("status").first).to_contain_text("delivered (HTTP 200")
        [test] = (await receiver.wait_for(1, "webhook.test")).values()
        assert test["headers"]["X-Service-Signature"].startswith("t=")
        await page.goto(f"{api.base}/dashboard/webhooks")
        await expect(page.get_by_role("row").filter(has_text="webhook.test")).to_contain_text("delivered")
        await accessible(page)
        await screenshots(page, "webhooks")

        hook_id = await page.locator("form[action$='/test'] input[name=id]").first.get_attribute("value")
        async with another_owner(browser, api) as (other, token):
            reply = await other.request.post(f"{api.base}/dashboard/webhooks/test",
                                             form={"id": hook_id, "form_token": token})
            assert reply.status == 404  # not another owner's subscription
        assert len(receiver.events("webhook.test")) == 1

        await page.get_by_role("button", name=f"Rotate the secret of {receiver.url}").click()
        rotated = await page.get_by_role("textbox", name="Secret").input_value()
        assert rotated and rotated != secret
        assert "old secret too until" in await page.inner_text("main")
    finally:
        await receiver.stop()
