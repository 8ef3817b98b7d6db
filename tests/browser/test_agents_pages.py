"""The agents pages in a real browser: the list, and an agent's page where the owner edits a prompt (a new version, as
the API then shows it, which the eval gate checked and a persona may not replace without force), compares two versions
and rolls back, loads a persona, and a regression the eval gate refuses is not saved; another owner's session gets 404 and changes
nothing."""
from __future__ import annotations

from playwright.async_api import expect

from tests.agents import HOURS, RULES, asked, create_agent, create_eval, read_agent
from tests.browser.conftest import accessible, another_owner, screenshots, signed_in_as

ADDED = 'When the caller says "parking", answer "Free parking is behind the building."'
# A regression: the Saturday rule is gone, so the scenario fails and the eval gate refuses the change.
BAD = 'You answer for Bright Dental.\n' + ADDED
PERSONA = {"lead_name": "Dana Reyes", "scenario": "Her water heater is leaking."}


async def versions(api, account, agent_id: str) -> list[dict]:
    status, listed, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"],
                                          params={"agent_id": agent_id})
    assert status == 200, listed
    return listed["versions"]


async def test_edit_compare_and_roll_back_a_prompt_on_the_agent_page(api, account, page, browser):
    agent = await create_agent(api, account, name="Front desk", system_prompt=RULES, eval_gate=True)
    status, scenario = await create_eval(api, account, agent["id"], name="hours.saturday",
                                         messages=asked({"type": "exact", "content": HOURS}))
    assert status == 201, scenario
    await signed_in_as(page, api, account)
    await page.goto(f"{api.base}/dashboard/agents")
    await accessible(page)
    await screenshots(page, "agents")
    await page.get_by_role("link", name="Front desk").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("Front desk")

    # The owner's edit: a new version, the eval gate's verdict on it, the same prompt through the API.
    await page.get_by_label("Voice prompt (inbound calls)").fill(RULES + "\n" + ADDED)
    await page.get_by_role("button", name="Save the prompts").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved as version 2 (changed: inbound_prompt).")
    await expect(page.get_by_role("status")).to_contain_text("The eval gate passed: 2 of 2 eval runs passed.")
    await expect(page.get_by_text("The eval gate on the last change (version 2): passed")).to_be_visible()
    await expect(page.get_by_role("table", name="Recent eval runs")).to_contain_text("hours.saturday")
    assert (await read_agent(api, account, agent["id"]))["prompts"]["inbound"]["prompt"] == RULES + "\n" + ADDED
    [latest, first] = await versions(api, account, agent["id"])
    assert (latest["version"], latest["source"], latest["changed_fields"]) == (2, "dashboard", ["inbound_prompt"])
    assert latest["eval_gate"]["status"] == "passed" and first["version"] == 1

    # The owner-edit guard: a persona through the API does not replace the owner's prompt without force.
    status, refused, _ = await api.request("POST", "/api/v1/agents/persona", key=account["key"],
                                           json={"agent_id": agent["id"], "persona": PERSONA})
    assert status == 409 and "edited by the owner in the dashboard" in refused["error"]["message"], refused

    # The difference between versions 1 and 2: the added line, marked in words.
    await page.get_by_label("Compare version").select_option("1")
    await page.get_by_label("with version").select_option("2")
    await page.get_by_role("button", name="Compare").click()
    diff = page.get_by_role("table", name="From version 1 to version 2")
    await expect(diff.get_by_role("row", name=f"+ added {ADDED}")).to_be_visible()
    await expect(diff.get_by_role("row").filter(has_text="removed")).to_have_count(0)
    await accessible(page)
    await screenshots(page, "agent")

    # Another owner: the page is 404, and so is posting an edit to it; nothing changes.
    async with another_owner(browser, api) as (other, token):
        shown = await other.goto(f"{api.base}/dashboard/agents/{agent['id']}")
        assert shown is not None and shown.status == 404
        reply = await other.request.post(f"{api.base}/dashboard/agents/{agent['id']}", form={
            "inbound_prompt": "Hijacked.", "form_token": token})
        assert reply.status == 404
    assert (await read_agent(api, account, agent["id"]))["version"] == 2

    # Roll back to version 1: the API's prompt is the first one again.
    await page.get_by_role("button", name="Roll back to version 1").click()
    await expect(page.get_by_role("status")).to_contain_text("Rolled back to version 1: it is in force again as "
                                                             "version 3.")
    restored = await read_agent(api, account, agent["id"])
    assert restored["prompts"]["inbound"]["prompt"] == RULES and restored["version"] == 3
    assert (await versions(api, account, agent["id"]))[0]["rollback_of"] == 1
    await expect(page.get_by_label("Voice prompt (inbound calls)")).to_have_value(RULES)

    # A regression the eval gate refuses: nothing saved, the draft kept on the page to fix.
    await page.get_by_label("Voice prompt (inbound calls)").fill(BAD)
    await page.get_by_role("button", name="Save the prompts").click()
    await expect(page.get_by_role("alert")).to_contain_text("Nothing was saved: the eval gate refused")
    await expect(page.get_by_role("alert")).to_contain_text("hours.saturday")
    await expect(page.get_by_label("Voice prompt (inbound calls)")).to_have_value(BAD)
    assert (await read_agent(api, account, agent["id"]))["version"] == 3

    # A persona loaded here: forced past the eval gate (its role-play prompt does not give the hours), as the API shows.
    await page.get_by_label("Lead's name").fill(PERSONA["lead_name"])
    await page.get_by_label("Scenario").fill(PERSONA["scenario"])
    await page.get_by_label("Replace a voice prompt I edited here by hand").check()
    await page.get_by_role("button", name="Load the persona").click()
    await expect(page.get_by_role("status")).to_contain_text("Persona Dana Reyes loaded as version 4")
    await expect(page.get_by_role("status")).to_contain_text("The eval gate skipped: the change was forced past it.")
    persona = await read_agent(api, account, agent["id"])
    assert "Dana Reyes" in persona["prompts"]["inbound"]["prompt"] and persona["version"] == 4
    assert (await versions(api, account, agent["id"]))[0]["source"] == "persona"
