"""The leads pages and the sales pipeline page in a real browser: filters narrow the list; a lead's status changed
and the lead paused and resumed on its page (as the API then shows them); the pipeline page's segment counts are
the API's and each leads to the leads list filtered by it, its config saved (or refused, saying why, with nothing
changed); another owner gets 404."""
from __future__ import annotations

from collections import Counter

from playwright.async_api import expect

from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as
from tests.leads import CONFIG, PIPELINE, new_lead


async def lead_of(api, account, lead_id: str) -> dict:
    status, lead, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params={"id": lead_id})
    assert status == 200, lead
    return lead


async def paused(api, account, lead_id: str) -> bool:
    status, pipeline, _ = await api.request("GET", PIPELINE, key=account["key"],
                                            params={"businessId": account["business_id"]})
    assert status == 200, pipeline
    return next(lead["paused"] for lead in pipeline["leads"] if lead["id"] == lead_id)


async def test_leads_are_filtered_and_a_leads_status_and_pipeline_pause_change_on_its_page(api, account, page,
                                                                                         browser):
    key, business = account["key"], account["business_id"]
    ada = await new_lead(api, key, business, name="Ada Web", source="web", phone="+14155550131",
                         email="ada@example.com")
    await new_lead(api, key, business, name="Ben Referral", source="referral", status="contacted")
    await new_lead(api, key, business, name="Cy Lost", source="web", status="lost")
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/leads")
    rows = page.locator("tbody tr")
    await expect(rows).to_have_count(3)
    await accessible(page)
    await screenshots(page, "leads")

    await page.get_by_label("Status").select_option("contacted")
    await page.get_by_role("button", name="Filter").click()
    await expect(rows).to_have_count(1)
    await expect(rows).to_contain_text("Ben Referral")
    await page.get_by_label("Status").select_option("")
    await page.get_by_label("Source").fill("web")
    await page.get_by_label("Lowest score").fill("1")  # a lost lead scores 0
    await page.get_by_role("button", name="Filter").click()
    await expect(rows).to_have_count(1)
    await expect(rows).to_contain_text("Ada Web")

    await page.get_by_role("link", name="Ada Web").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Ada Web")
    await expect(page.get_by_role("region", name="Details")).to_contain_text("ada@example.com")
    scored = await lead_of(api, account, ada["id"])
    assert scored["score_explanation"].startswith(f"score {scored['score']} from source web (+15)")
    score = page.get_by_role("region", name=f"Score {scored['score']}")
    await expect(score.locator(".explanation")).to_contain_text(scored["score_explanation"][1:])
    await expect(score.locator(".explanation")).to_contain_text(f"{scored['score_confidence']} confidence")
    await expect(score.get_by_role("list", name="What the score counted").get_by_role("listitem")).to_have_text(
        scored["score_factors"])
    await accessible(page)
    await page.get_by_label("New status").select_option("qualified")
    await page.get_by_role("button", name="Save status").click()
    await expect(page.get_by_role("status")).to_contain_text("Status is now qualified")
    assert (await lead_of(api, account, ada["id"]))["status"] == "qualified"

    await page.get_by_role("button", name="Pause in the pipeline").click()
    await expect(page.get_by_role("status")).to_contain_text("Pause:")
    assert await paused(api, account, ada["id"]) is True
    await expect(page.get_by_role("region", name="Pipeline activity")).to_contain_text("pause")
    await page.get_by_role("button", name="Resume in the pipeline").click()
    await expect(page.get_by_role("status")).to_contain_text("Resume:")
    assert await paused(api, account, ada["id"]) is False
    await accessible(page)
    await screenshots(page, "lead")

    async with another_owner(browser, api) as (other, token):
        opened = await other.goto(f"{api.base}/dashboard/leads/{ada['id']}")
        assert opened is not None and opened.status == 404
        reply = await other.request.post(f"{api.base}/dashboard/leads/{ada['id']}/status",
                                         form={"status": "lost", "form_token": token})
        assert reply.status == 404
        reply = await other.request.post(f"{api.base}/dashboard/leads/{ada['id']}/pipeline",
                                         form={"action": "pause", "form_token": token})
        assert reply.status == 404
    assert (await lead_of(api, account, ada["id"]))["status"] == "qualified"
    assert await paused(api, account, ada["id"]) is False


async def test_the_pipeline_page_counts_segments_and_saves_the_config(api, account, page):
    key, business = account["key"], account["business_id"]
    await new_lead(api, key, business, name="Fresh", email="fresh@example.com")
    await new_lead(api, key, business, name="Won", status="converted", phone="+14155550132")
    await new_lead(api, key, business, name="Trial", status="contacted", source="trial", email="trial@example.com")
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/pipeline")
    status, pipeline, _ = await api.request("GET", PIPELINE, key=key, params={"businessId": business})
    assert status == 200, pipeline
    expected = Counter(lead["segment"].replace("_", " ") for lead in pipeline["leads"])
    segments = page.locator("table.segments tbody tr")
    await expect(segments).to_have_count(len(expected))
    shown = dict(text.split("\t") for text in await segments.all_inner_texts())
    assert {name: int(count) for name, count in shown.items()} == expected
    waiting = page.get_by_role("region", name="Waiting for you")
    fresh = next(lead["id"] for lead in pipeline["leads"] if lead["name"] == "Fresh")
    await expect(waiting.get_by_role("link", name="Fresh")).to_have_attribute("href", f"/dashboard/leads/{fresh}")
    await accessible(page)

    await page.get_by_label("Pipeline on").check()
    await page.get_by_label("Sends emails").check()
    await page.get_by_label("Most touches per lead").fill("4")
    await page.get_by_role("button", name="Save config").click()
    await expect(page.get_by_role("status")).to_contain_text("The SDR config is saved.")
    status, config, _ = await api.request("GET", CONFIG, key=key, params={"businessId": business})
    assert (config["enabled"], config["auto_email"], config["auto_call"], config["max_touches"]) == \
        (True, True, False, 4), config
    # Emails now go out by themselves: the fresh lead is actionable.
    await expect(page.get_by_role("region", name="Actionable leads")).to_contain_text("Fresh")

    await page.get_by_label("Business hours start").fill("18")  # after the end (17)
    await page.get_by_label("Most touches per lead").fill("9")
    await page.get_by_role("button", name="Save config").click()
    await expect(page.get_by_role("alert")).to_contain_text("Nothing was saved")
    await expect(page.get_by_role("alert")).to_contain_text("business_hours")
    status, unchanged, _ = await api.request("GET", CONFIG, key=key, params={"businessId": business})
    assert (unchanged["business_hours_start"], unchanged["max_touches"]) == (9, 4), unchanged
    await accessible(page)
    await screenshots(page, "pipeline")

    # a segment's name leads to the leads list filtered by it (its leads as the API's pipeline has them)
    segment = next(lead["segment"] for lead in pipeline["leads"] if lead["name"] == "Trial")
    in_segment = sorted(lead["name"] for lead in pipeline["leads"] if lead["segment"] == segment)
    await page.locator("table.segments").get_by_role("link", name=segment.replace("_", " ")).click()
    await expect(page.get_by_label("Pipeline segment")).to_have_value(segment)
    rows = page.locator("tbody tr td:first-child")
    await expect(rows).to_have_count(len(in_segment))
    assert sorted(await rows.all_inner_texts()) == in_segment
    await page.get_by_label("Status").select_option("converted")  # none of this segment's leads
    await page.get_by_role("button", name="Filter").click()
    await expect(page.locator("main")).to_contain_text("No leads match these filters.")
