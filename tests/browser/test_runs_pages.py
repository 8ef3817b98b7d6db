"""The communication runs pages in a real browser: a run made through the API listed with its jobs counted, its page
with each job and the call attempt of the one executed, paused and resumed on the page as the API then shows it;
another owner's session reaches neither the run's page nor its pause."""
from __future__ import annotations

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as
from tests.browser.objects import checked_then_opened, not_found_to, read_one
from tests.compliance import answering_callee
from tests.runs import RUNS, create, jobs_of, run_of, touch
from tests.texting import opt_in
from tests.waiting import wait_until


async def run_status(api, account, run_id: str) -> dict:
    return await read_one(api, account, RUNS, id=run_id)


async def attempts_of(api, account, run_id: str) -> list[dict]:
    return (await read_one(api, account, "/api/v1/communication-attempts", sequence_id=run_id))["attempts"]


async def test_a_run_shows_its_jobs_and_attempts_and_is_paused_on_its_page(api, account, calling_agent, page,
                                                                          browser):
    key, now, later = account["key"], answering_callee(), answering_callee()
    for phone in (now, later):
        await opt_in(api, key, phone)
    body = run_of(account, calling_agent, touch("call-now", now), touch("call-later", later, seconds=3600))
    status, run, _ = await create(api, key, body)
    assert status == 201, run
    await wait_until(lambda: jobs_of(api, key, run["id"]), "the first touch's call to end",
                     lambda jobs: any(j["touch_id"] == "call-now" and j["status"] == "succeeded" for j in jobs),
                     timeout=20)
    [attempt] = await wait_until(lambda: attempts_of(api, account, run["id"]), "the call's outcome",
                                 lambda attempts: bool(attempts) and attempts[0]["status"] != "placed")

    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/runs")
    link = page.get_by_role("link", name=body["external_ref"])
    row = page.get_by_role("row").filter(has=link)
    await expect(row).to_contain_text("running")
    await expect(row).to_contain_text("1 pending, 1 succeeded")
    run_url = f"{api.base}/dashboard/runs/{run['id']}"
    await checked_then_opened(page, "runs", link, run_url)
    executed = page.get_by_role("row").filter(has_text="call-now")
    await expect(executed).to_contain_text(f"call {now}")
    await expect(executed).to_contain_text("succeeded")
    await expect(executed.get_by_role("listitem")).to_contain_text(attempt["status"])
    waiting = page.get_by_role("row").filter(has_text="call-later")
    await expect(waiting).to_contain_text("pending")
    await expect(waiting).to_contain_text("none")  # no attempt yet
    await accessible(page)
    await screenshots(page, "run")

    async with another_owner(browser, api) as (other, token):
        await not_found_to(other, run_url)
        reply = await other.request.post(f"{api.base}/dashboard/runs/change",
                                         form={"id": run["id"], "action": "pause", "form_token": token})
        assert reply.status == 404
        await other.goto(f"{api.base}/dashboard/runs")
        await expect(other.get_by_role("link", name=body["external_ref"])).to_have_count(0)
    assert (await run_status(api, account, run["id"]))["status"] == "running"

    await page.get_by_role("button", name=f"Pause the run {body['external_ref']}").click()
    await expect(page.get_by_role("status")).to_contain_text("The run is paused now.")
    paused = await run_status(api, account, run["id"])
    assert paused["status"] == "paused" and paused["jobs"]["paused"] == 1, paused
    await expect(page.get_by_role("row").filter(has_text="call-later")).to_contain_text("paused")
    await expect(page.get_by_role("button", name=f"Pause the run {body['external_ref']}")).to_have_count(0)
    await page.get_by_role("button", name=f"Resume the run {body['external_ref']}").click()
    await expect(page.get_by_role("status")).to_contain_text("The run is running now.")
    assert (await run_status(api, account, run["id"]))["status"] == "running"
    await accessible(page)
    token = await page.locator("input[name=form_token]").first.get_attribute("value")
    reply = await page.request.post(f"{api.base}/dashboard/runs/change",
                                    form={"id": run["id"], "action": "resume", "form_token": token or ""})
    assert reply.status == 409 and "Nothing was changed" in await reply.text()  # a move its state does not allow
    await not_found_to(page, f"{api.base}/dashboard/runs/not-a-run")
