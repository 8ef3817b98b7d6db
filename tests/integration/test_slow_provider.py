"""A slow voice provider holds no database transaction: writes that wait on it stay serialized per record
(a write lease, core.leases) while unrelated requests go on. `make bench-slow-provider` measures the same."""
import asyncio

import asyncpg

DELAY = 3.0


async def long_open_transactions(stack) -> int:
    """Agents-service connections idle inside a transaction for over a second (held across a provider call)."""
    conn = await asyncpg.connect(stack.database_url)
    try:
        return await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'agents' AND "
                                   "state = 'idle in transaction' AND now() - state_change > interval '1 second'")
    finally:
        await conn.close()


async def create_agent(api, account, name: str) -> dict:
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=account["key"], json={
        "business_id": account["business_id"], "name": name, "system_prompt": "You answer the phone."})
    assert status == 201, agent
    return agent


async def test_slow_agent_updates_hold_no_transaction_and_stay_serialized(api, account, voice, stack):
    agents = [await create_agent(api, account, f"Slow {n}") for n in range(3)]
    await voice.delay_next("PATCH", "/assistant", DELAY, times=6)
    updates = [asyncio.create_task(api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agents[n % 3]["id"], "first_message": f"Hello from update {n}."})) for n in range(6)]
    # Every update is waiting on the provider or on its agent's lease, and the first ones have held their wait
    # for over a second (what an idle transaction would show) with a second to go before they finish.
    await asyncio.sleep(DELAY - 1.0)
    assert await long_open_transactions(stack) == 0
    status, listed, _ = await api.request("GET", "/api/v1/agents", key=account["key"], params={"limit": "5"})
    assert status == 200 and not any(u.done() for u in updates), "an unrelated read waited for the provider"
    results = await asyncio.gather(*updates)
    assert [r[0] for r in results] == [200] * 6, results
    for agent in agents:  # two writes each, applied one after the other: versions 2 and 3, no lost update
        status, body, _ = await api.request("GET", "/api/v1/agents/versions", key=account["key"],
                                            params={"agent_id": agent["id"]})
        assert [v["version"] for v in body["versions"]] == [3, 2, 1]
        status, live, _ = await api.request("GET", "/api/v1/agents", key=account["key"], params={"id": agent["id"]})
        last = max((r for n, r in enumerate(results) if n % 3 == agents.index(agent)), key=lambda r: r[1]["version"])
        assert last[1]["version"] == 3 and live["first_message"] in {
            f"Hello from update {n}." for n in range(6) if n % 3 == agents.index(agent)}


async def test_a_write_waiting_on_a_slow_one_sees_its_result(api, account, voice):
    agent = await create_agent(api, account, "Pinned")
    await voice.delay_next("PATCH", "/assistant", DELAY)
    first = asyncio.create_task(api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent["id"], "name": "Renamed slowly", "expected_version": 1}))
    await asyncio.sleep(0.5)
    # Pinned to the version the slow write is replacing: it waits for the lease, then finds version 2.
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent["id"], "name": "Renamed quickly", "expected_version": 1})
    assert status == 409 and body["error"]["code"] == "conflict", body
    status, done, _ = await first
    assert status == 200 and done["version"] == 2


async def test_a_provider_refusal_ends_the_lease(api, account, voice):
    agent = await create_agent(api, account, "Refused once")
    await voice.fail_next("PATCH", "/assistant", 400)
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent["id"], "name": "Not kept"})
    assert status != 200 and body["error"]["code"] in ("provider_error", "invalid_request"), body
    status, body, _ = await api.request("PATCH", "/api/v1/agents", key=account["key"], json={
        "id": agent["id"], "name": "Kept"})  # at once: the refused write left no lease behind
    assert status == 200 and body["version"] == 2, body


async def test_slow_number_import_holds_no_transaction_and_one_assign_wins(api, account, other_key, voice, stack):
    status, pool, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=account["key"],
                                        params={"country": "US", "limit": "3"})
    number = pool["numbers"][-1]["phone_number"]
    await voice.delay_next("POST", "/phone-number", DELAY)
    first = asyncio.create_task(api.request("POST", "/api/v1/phone-numbers", key=account["key"],
                                            json={"phone_number": number}))
    await asyncio.sleep(DELAY / 2 + 0.5)
    assert await long_open_transactions(stack) == 0
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=other_key, json={"phone_number": number})
    assert status == 409 and "not available" in body["error"]["message"], body
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=other_key,
                                          params={"country": "US", "limit": "100"})
    assert number not in [n["phone_number"] for n in listed["numbers"]]
    status, assigned, _ = await first
    assert status == 201, assigned
    status, _, _ = await api.request("DELETE", "/api/v1/phone-numbers", key=account["key"],
                                     params={"phone_number": number})
    assert status == 200


async def take_number(api, account) -> str:
    status, pool, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=account["key"],
                                        params={"country": "US", "limit": "1"})
    number = pool["numbers"][0]["phone_number"]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=account["key"],
                                        json={"phone_number": number})
    assert status == 201, body
    return number


async def test_slow_forwarding_changes_hold_no_transaction_and_stay_serialized(api, account, voice, stack):
    number = await take_number(api, account)
    await voice.delay_next("PATCH", "/phone-number", DELAY, times=3)
    changes = [asyncio.create_task(api.request("PATCH", "/api/v1/phone-numbers", key=account["key"], json={
        "phone_number": number, "forwarding": {"to": "+14155550177", "ring_seconds": 20 + n}})) for n in range(3)]
    # The first change waits on the provider and the others on the number's lease, none inside a transaction.
    await asyncio.sleep(DELAY - 1.0)
    assert await long_open_transactions(stack) == 0
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers", key=account["key"])
    assert status == 200 and not any(c.done() for c in changes), "an unrelated read waited for the provider"
    results = await asyncio.gather(*changes)
    assert [r[0] for r in results] == [200] * 3, results
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers", key=account["key"],
                                          params={"phone_number": number})
    kept = listed["phone_numbers"][0]["forwarding"]["ring_seconds"]
    assert kept in {20, 21, 22} and {r[1]["forwarding"]["ring_seconds"] for r in results} == {20, 21, 22}


async def test_a_slow_release_holds_no_transaction_and_a_concurrent_change_waits_for_it(api, account, voice, stack):
    number = await take_number(api, account)
    await voice.delay_next("DELETE", "/phone-number", DELAY)
    release = asyncio.create_task(api.request("DELETE", "/api/v1/phone-numbers", key=account["key"],
                                              params={"phone_number": number}))
    await asyncio.sleep(0.5)
    change = asyncio.create_task(api.request("PATCH", "/api/v1/phone-numbers", key=account["key"], json={
        "phone_number": number, "forwarding": {"to": "+14155550177"}}))
    await asyncio.sleep(DELAY - 1.5)
    assert await long_open_transactions(stack) == 0
    status, _, _ = await api.request("GET", "/api/v1/phone-numbers", key=account["key"])
    assert status == 200 and not release.done() and not change.done()
    status, body, _ = await release
    assert status == 200, body
    status, body, _ = await change  # it waited for the lease and found the number gone from the business
    assert status == 404 and body["error"]["code"] == "not_found", body
    status, listed, _ = await api.request("GET", "/api/v1/phone-numbers", key=account["key"],
                                          params={"phone_number": number})
    assert listed["phone_numbers"] == []
