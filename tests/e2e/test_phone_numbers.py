"""/api/v1/phone-numbers* and the legacy /api/v1/numbers: the pool, assign, release, events, conflicts,
scopes and tenancy."""
import asyncio
import json

import nats

from tests.nats_admin import admin_connection


async def available(api, key, **params) -> list[dict]:
    status, body, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key, params=params)
    assert status == 200, body
    return body["numbers"]


async def new_agent(api, account) -> dict:
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
        "business_id": account["business_id"], "name": "Line", "system_prompt": "Answer the phone."})
    assert status == 201, agent
    return agent


async def release(api, key, number):
    return await api.request("DELETE", "/api/v1/phone-numbers", key=key, params={"phone_number": number})


async def test_pool_filters(api, account):
    key = account["read_key"]
    every = await available(api, key, limit="100")
    assert {n["country"] for n in every} >= {"US", "CA", "GB", "AU"}
    assert "+14152014133" not in [n["phone_number"] for n in every]  # blocked numbers are never offered
    sf = await available(api, key, country="US", area_code="415", capability="mms")
    assert sf and all(n["country"] == "US" and n["area_code"] == "415" and n["capabilities"]["mms"] for n in sf)
    assert "San Francisco, CA" in {n["locality"] for n in sf}
    sms = await available(api, key, country="GB", capability="sms")
    assert sms and all(n["capabilities"]["sms_inbound"] and n["capabilities"]["sms_outbound"] for n in sms)
    # the pool file's Manchester numbers are voice only (the stock job may have bought others there that text)
    offered = {n["phone_number"] for n in sms}
    assert "20" in {n["area_code"] for n in sms} and not offered & {"+441614960010", "+441614960011", "+441614960012"}
    status, page, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key, params={"limit": "2"})
    assert len(page["numbers"]) == 2 and page["has_more"] is True
    for params, fragment in (({"capability": "fax"}, "capability"), ({"country": "XX"}, "country"),
                             ({"country": "us"}, "upper-case ISO 3166"), ({"area_code": "4a"}, "area_code"),
                             ({"area_code": "٤١٥"}, "area_code"), ({"limit": "101"}, "limit"),
                             ({"after": "not-a-number"}, "after"), ({"after": "+15555555555"}, "not a valid phone")):
        status, body, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key, params=params)
        assert status == 400 and fragment in body["error"]["message"], params


async def test_assign_list_and_release_with_events(api, account, voice, stack):
    key, bid = account["key"], account["business_id"]
    agent = await new_agent(api, account)
    number = (await available(api, key, country="US", area_code="512", capability="sms"))[0]["phone_number"]
    nc = await admin_connection(stack)
    try:
        sub = await nc.jetstream().subscribe("events.phone_number.*", ordered_consumer=True,
                                             deliver_policy=nats.js.api.DeliverPolicy.NEW)
        status, assigned, _ = await api.request("POST", "/api/v1/phone-numbers", key=key,
                                                json={"phone_number": number, "agent_id": agent["id"]})
        assert status == 201, assigned
        assert assigned["phone_number"] == number and assigned["agent_id"] == agent["id"]
        assert assigned["business_id"] == bid and assigned["country"] == "US" and assigned["area_code"] == "512"
        assert assigned["compliance"] == {"a2p": {"status": "not_started"},
                                          "emergency_address": {"status": "not_set", "address": None}}
        assert assigned["blocked"] is False and assigned["created_at"].endswith("Z")
        # Imported at the provider with our server, which each inbound call asks who answers (no fixed assistant).
        status, at_provider = await voice.request("GET", f"/phone-number/{assigned['provider_phone_number_id']}")
        assert status == 200 and at_provider["number"] == number and "assistantId" not in at_provider
        assert at_provider["server"]["url"].endswith("/api/v1/providers/voice/messages")
        assert at_provider["server"]["credentialId"]
        assert number not in [n["phone_number"] for n in await available(api, key, country="US", area_code="512")]

        status, listing, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
        assert status == 200 and listing["business_id"] == bid and listing["phone_numbers"] == [assigned]
        status, one, _ = await api.request("GET", "/api/v1/phone-numbers", key=key, params={"phone_number": number})
        assert one["phone_numbers"] == [assigned]
        status, legacy, _ = await api.request("GET", "/api/v1/numbers", key=account["read_key"])
        assert legacy == {"numbers": [{"id": assigned["id"], "phone_number": number, "agent_id": agent["id"],
                                       "business_id": bid, "created_at": assigned["created_at"]}],
                          "has_more": False, "next_cursor": None}
        status, got, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": agent["id"]})
        assert got["phone_number"] == number
        status, agents, _ = await api.request("GET", "/api/v1/agents", key=key)
        assert agents["agents"][0]["phone_number"] == number
        status, balance, _ = await api.request("GET", "/api/v1/balance", key=key)
        assert balance["businesses"][0]["phone_numbers"] == 1

        # An unencoded '+' in the query string (curl '...?phone_number=+1...') arrives as a space: still understood.
        status, released, _ = await api.request("DELETE", f"/api/v1/phone-numbers?phone_number={number}", key=key)
        assert status == 200 and released == {"success": True, "phone_number": number, "business_id": bid}
        status, _ = await voice.request("GET", f"/phone-number/{assigned['provider_phone_number_id']}")
        assert status == 404
        assert number in [n["phone_number"] for n in await available(api, key, country="US", area_code="512")]
        status, listing, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
        assert listing["phone_numbers"] == []
        status, body, _ = await release(api, key, number)
        assert status == 404

        events = []
        while len(events) < 2:
            event = json.loads((await sub.next_msg(timeout=10)).data)
            if event["business_id"] == bid:
                events.append(event)
        assert [e["type"] for e in events] == ["phone_number.assigned", "phone_number.released"]
        assert events[0]["data"] == {"id": assigned["id"], "phone_number": number, "business_id": bid,
                                     "agent_id": agent["id"]}
    finally:
        await nc.close()


async def test_concurrent_assigns_give_one_success_and_one_conflict(api, account, other_key):
    number = (await available(api, account["key"], country="US", area_code="305"))[0]["phone_number"]
    results = await asyncio.gather(
        api.request("POST", "/api/v1/phone-numbers", key=account["key"], json={"phone_number": number}),
        api.request("POST", "/api/v1/phone-numbers", key=other_key, json={"phone_number": number}))
    statuses = sorted(r[0] for r in results)
    assert statuses == [201, 409], results
    winner = next(i for i, r in enumerate(results) if r[0] == 201)
    loser = results[1 - winner][1]
    assert loser["error"]["code"] == "conflict" and "not available" in loser["error"]["message"]
    winner_key = (account["key"], other_key)[winner]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=winner_key, json={"phone_number": number})
    assert status == 409 and "change the number's agent_id" in body["error"]["message"]
    assert (await release(api, winner_key, number))[0] == 200


async def test_bad_numbers_and_refusals(api, account):
    key = account["key"]
    for bad, code in (("4155550123", 400), ("+1 415 201 4100", 400), ("+1415201", 400), ("+14155550199", 404),
                      ("+14152014133", 409)):
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={"phone_number": bad})
        assert status == code, (bad, body)
        if code == 400:
            assert "phone_number" in body["error"]["message"]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={})
    assert status == 400 and body["error"]["message"] == "phone_number is required"
    status, body, _ = await release(api, key, "not-a-number")
    assert status == 400


async def test_a_key_spanning_several_businesses_must_name_one(api, account):
    key = account["key"]
    status, second, _ = await api.request("POST", "/api/v1/workspaces", key=key, json={"name": "Second branch"})
    assert status == 201
    status, body, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
    assert status == 400 and body["error"]["code"] == "bad_request" and "business_id" in body["error"]["message"]
    status, body, _ = await api.request("GET", "/api/v1/phone-numbers", key=key, params={"business_id": second["id"]})
    assert status == 200 and body == {"business_id": second["id"], "phone_numbers": [], "has_more": False,
                                        "next_cursor": None}
    # An agent of one business cannot be given a number of the other.
    agent = await new_agent(api, account)
    number = (await available(api, key, country="CA"))[0]["phone_number"]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={
        "business_id": second["id"], "phone_number": number, "agent_id": agent["id"]})
    assert status == 404 and "agent" in body["error"]["message"]
    assert number in [n["phone_number"] for n in await available(api, key, country="CA")]


async def test_scopes_and_another_account(api, account, other_key):
    key, bid = account["key"], account["business_id"]
    number = (await available(api, key, country="AU"))[0]["phone_number"]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=account["read_key"],
                                        json={"phone_number": number})
    assert status == 403 and "numbers:write" in body["error"]["message"]
    status, assigned, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={"phone_number": number})
    assert status == 201
    try:
        status, listing, _ = await api.request("GET", "/api/v1/phone-numbers", key=other_key)
        assert status == 200 and listing["phone_numbers"] == []
        status, legacy, _ = await api.request("GET", "/api/v1/numbers", key=other_key)
        assert legacy == {"numbers": [], "has_more": False, "next_cursor": None}
        status, body, _ = await api.request("GET", "/api/v1/phone-numbers", key=other_key, params={"business_id": bid})
        assert status == 403
        status, body, _ = await release(api, other_key, number)
        assert status == 404
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=other_key,
                                            json={"phone_number": number, "business_id": bid})
        assert status == 403
        agent = await new_agent(api, account)
        other_number = (await available(api, other_key, country="AU"))[0]["phone_number"]
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=other_key,
                                            json={"phone_number": other_number, "agent_id": agent["id"]})
        assert status == 404
        status, listing, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
        assert [n["phone_number"] for n in listing["phone_numbers"]] == [number]
    finally:
        assert (await release(api, key, number))[0] == 200


async def test_a_failed_assignment_leaves_nothing_at_the_provider(api, account, voice, db):
    number = (await available(api, account["key"], country="US", area_code="212"))[0]["phone_number"]
    fn = f"refuse_{number[1:]}"
    await db.execute(f"""
        CREATE FUNCTION agents.{fn}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.phone_number = '{number}' AND NEW.business_id IS NOT NULL THEN
            RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER {fn} BEFORE UPDATE ON agents.phone_numbers FOR EACH ROW EXECUTE FUNCTION agents.{fn}();""")
    try:
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=account["key"],
                                            json={"phone_number": number})
    finally:
        await db.execute(f"DROP TRIGGER {fn} ON agents.phone_numbers; DROP FUNCTION agents.{fn}()")
    assert status == 500 and body["error"]["code"] == "internal_error"
    status, at_provider = await voice.request("GET", "/phone-number?limit=1000")
    assert number not in [n["number"] for n in at_provider]  # the import was undone
    assert number in [n["phone_number"] for n in await available(api, account["key"], country="US", area_code="212")]
    status, assigned, _ = await api.request("POST", "/api/v1/phone-numbers", key=account["key"],
                                            json={"phone_number": number})
    assert status == 201
    assert (await release(api, account["key"], number))[0] == 200


async def test_a_number_moves_between_agents_of_its_business(api, account, voice, other_key):
    key = account["key"]
    first, second = await new_agent(api, account), await new_agent(api, account)
    number = (await available(api, key, country="CA", area_code="604"))[0]["phone_number"]
    status, assigned, _ = await api.request("POST", "/api/v1/phone-numbers", key=key,
                                            json={"phone_number": number, "agent_id": first["id"]})
    assert status == 201
    try:
        status, moved, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                             json={"phone_number": number, "agent_id": second["id"]})
        assert status == 200 and moved["agent_id"] == second["id"] and moved["id"] == assigned["id"]
        status, body, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": second["id"]})
        assert body["phone_number"] == number  # inbound calls now ask for, and get, the second agent
        status, body, _ = await api.request("GET", "/api/v1/agents", key=key, params={"id": first["id"]})
        assert body["phone_number"] is None
        status, unlinked, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                                json={"phone_number": number, "agent_id": None})
        assert status == 200 and unlinked["agent_id"] is None and unlinked["business_id"] == account["business_id"]
        status, at_provider = await voice.request("GET", f"/phone-number/{assigned['provider_phone_number_id']}")
        assert "assistantId" not in at_provider  # routing is ours: re-pointing never touched the provider
        status, body, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=key,
                                            json={"phone_number": number})
        assert status == 400 and body["error"]["message"] == "agent_id or forwarding is required"
        status, body, _ = await api.request("PATCH", "/api/v1/phone-numbers", key=other_key,
                                            json={"phone_number": number, "agent_id": None})
        assert status == 404
    finally:
        assert (await release(api, key, number))[0] == 200


async def test_the_pool_pages_with_the_last_number_as_cursor(api, account):
    key = account["read_key"]
    every = await available(api, key, country="US", limit="100")
    seen, after = [], None
    while True:
        params = {"country": "US", "limit": "3", **({"after": after} if after else {})}
        status, page, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key, params=params)
        assert status == 200, page
        seen += [n["phone_number"] for n in page["numbers"]]
        if not page["has_more"]:
            break
        after = page["numbers"][-1]["phone_number"]
    assert seen == [n["phone_number"] for n in every] and len(seen) > 3


async def test_a_business_numbers_page_newest_first(api, account, other_key):
    key = account["key"]
    numbers = [n["phone_number"] for n in (await available(api, key, country="GB", limit="3"))]
    for number in numbers:
        status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={"phone_number": number})
        assert status == 201, body
    try:
        pages, after = [], None
        while True:
            params = {"limit": "2", **({"after": after} if after else {})}
            status, page, _ = await api.request("GET", "/api/v1/phone-numbers", key=key, params=params)
            assert status == 200, page
            pages.append([n["phone_number"] for n in page["phone_numbers"]])
            if not page["has_more"]:
                break
            after = page["phone_numbers"][-1]["created_at"]
        assert pages == [numbers[::-1][:2], numbers[::-1][2:]]
        status, legacy, _ = await api.request("GET", "/api/v1/numbers", key=key, params={"limit": "1"})
        assert [n["phone_number"] for n in legacy["numbers"]] == numbers[-1:] and legacy["has_more"] is True
        status, body, _ = await api.request("GET", "/api/v1/numbers", key=other_key, params={"limit": "100"})
        assert not {n["phone_number"] for n in body["numbers"]} & set(numbers)
    finally:
        for number in numbers:
            await release(api, key, number)
