"""Pages never skip or repeat a record, even when more records share one timestamp than a page holds."""
from datetime import UTC, datetime

import asyncpg
import pytest

from tests.billing import change_plan

SAME_MOMENT = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


async def stamp(stack, sql: str, *args) -> None:
    conn = await asyncpg.connect(stack.database_url)
    try:
        await conn.execute(sql, *args)
    finally:
        await conn.close()


async def walk(api, key, path, items_key, params, via="cursor") -> list[str]:
    seen, cursor, after = [], None, None
    while True:
        page_params = {**params, **({"cursor": cursor} if cursor else {}), **({"after": after} if after else {})}
        status, page, _ = await api.request("GET", path, key=key, params=page_params)
        assert status == 200, page
        seen += [item["id"] for item in page[items_key]]
        if not page["has_more"]:
            assert page["next_cursor"] is None
            return seen
        if via == "cursor":
            cursor = page["next_cursor"]
        else:
            after = page[items_key][-1]["created_at"]


async def test_leads_sharing_a_timestamp_page_exactly_once(api, account, stack):
    key, business_id = account["key"], account["business_id"]
    made = []
    for n in range(7):
        status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
            "business_id": business_id, "name": f"Tied {n}", "source": "pagination-test"})
        assert status == 201, lead
        made.append(lead["id"])
    await stamp(stack, "UPDATE sdr.leads SET created_at = $1 WHERE business_id = $2 AND source = "
                "'pagination-test'", SAME_MOMENT, business_id)
    seen = await walk(api, key, "/api/v1/leads", "leads", {"limit": "3", "source": "pagination-test"})
    assert sorted(seen) == sorted(made) and len(seen) == 7
    # The spec's `after` cursor cannot tell tied records apart: documented, and why next_cursor exists.
    by_after = await walk(api, key, "/api/v1/leads", "leads", {"limit": "3", "source": "pagination-test"},
                          via="after")
    assert len(by_after) == 3


async def test_workspaces_sharing_a_timestamp_page_exactly_once(api, account, stack):
    key = account["key"]
    await change_plan(api, key, account["business_id"], "growth")  # five workspaces: more than starter allows
    made = [account["business_id"]]
    for n in range(4):
        status, ws, _ = await api.request("POST", "/api/v1/workspaces", key=key, json={"name": f"Tied {n}"})
        made.append(ws["id"])
    await stamp(stack, "UPDATE accounts.businesses SET created_at = $1 WHERE id = ANY($2::uuid[])",
                SAME_MOMENT, made)
    assert sorted(await walk(api, key, "/api/v1/workspaces", "workspaces", {"limit": "2"})) == sorted(made)


@pytest.mark.parametrize("cursor", ["nonsense", "W10=", "WyJub3QgYSB0aW1lIiwgMV0", "WyIyMDI2LTAxLTAyVDAzOjA0OjA1KzAwOjAwIiwgMV0"])
async def test_a_cursor_we_did_not_give_is_400(api, account, cursor):
    status, body, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params={"cursor": cursor})
    assert status == 400 and body["error"]["code"] == "invalid_request" and "cursor" in body["error"]["message"], body
    status, body, _ = await api.request("GET", "/api/v1/agents", key=account["key"], params={"cursor": cursor})
    assert status == 400 and "cursor" in body["error"]["message"], body
