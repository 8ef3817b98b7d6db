"""Calls for the tests: agents with a number of their own, placing calls, the voice simulator's inbound calls, and
waiting for a call's outcome and events."""
import aiohttp
import pytest

from tests.waiting import wait_until

# Pool area codes the calling tests draw from (deploy/local/number_pool.json); they give their numbers back.
CALLING_AREAS = ("206", "312", "617")
ENDED = ("completed", "no-answer", "busy", "voicemail", "failed", "canceled")  # a call's final statuses


async def agent_with_number(api, account) -> dict:
    """A new agent of the account with a pool number of the calling tests' area codes."""
    key, bid = account["key"], account["business_id"]
    status, agent, _ = await api.request("POST", "/api/v1/agents", key=key, json={
        "business_id": bid, "name": "Closer", "system_prompt": "Answer the phone."})
    assert status == 201, agent
    for area in CALLING_AREAS:
        status, pool, _ = await api.request("GET", "/api/v1/phone-numbers/available", key=key,
                                            params={"country": "US", "area_code": area, "limit": "100"})
        for candidate in pool["numbers"]:
            status, number, _ = await api.request("POST", "/api/v1/phone-numbers", key=key, json={
                "business_id": bid, "phone_number": candidate["phone_number"], "agent_id": agent["id"]})
            if status == 201:
                return {**agent, "phone_number": number["phone_number"],
                        "provider_number": number["provider_phone_number_id"]}
    pytest.fail("no free number in the calling tests' area codes")


async def place(api, key, **body):
    return await api.request("POST", "/api/v1/calls", key=key, json=body)


async def settled(api, key, call_id: str) -> dict:
    """The call once it has its outcome and its report (the simulator plays a call in about a second)."""
    async def call() -> dict:
        status, body, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call_id})
        assert status == 200, body
        return body
    return await wait_until(call, f"call {call_id} to settle",
                            lambda c: c["status"] in ENDED and c["ended_reason"] is not None, timeout=15)


async def call_events(api, key, call_id: str, expected: int) -> list[str]:
    """The types of the call's call.* events, sorted, once there are `expected` of them."""
    async def types() -> list[str]:
        found = []
        for kind in ("call.started", "call.completed", "call.failed"):
            status, body, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": kind})
            found += [e["type"] for e in body["events"] if e["data"]["call_id"] == call_id]
        return sorted(found)
    return await wait_until(types, f"{expected} events of call {call_id}", lambda found: len(found) >= expected)


async def ring(voice, to: str, caller: str, outcome: str | None = None, says: list[str] | None = None,
               **control) -> dict:
    """The voice simulator rings our number `to` from `caller` (who says `says`, if given); the call as the provider
    has it."""
    body = {"to": to, "from": caller, **({"outcome": outcome} if outcome else {}),
            **({"caller": says} if says else {}), **control}
    async with voice.session.post(f"{voice.url}/_simulator/inbound", json=body) as r:
        assert r.status == 201, await r.text()
        return await r.json()


async def our_call(api, key, agent_id: str, conversation_id: str) -> dict:
    """Our record of the provider's call `conversation_id`, once there is one."""
    async def found() -> list[dict]:
        status, page, _ = await api.request("GET", "/api/v1/calls", key=key, params={"agent_id": agent_id})
        return [c for c in page["calls"] if c["conversation_id"] == conversation_id]
    return (await wait_until(found, f"the inbound call {conversation_id} to be recorded", timeout=5))[0]


async def provider_calls_to(voice, to: str) -> list:
    """The calls the voice simulator took for `to`."""
    status, placed = await voice.request("GET", "/call")
    assert status == 200
    return [c for c in placed if c["customer"]["number"] == to]


class VoiceSimulator:
    """The voice-provider simulator (the stack's, or one a test serves): its API (with its key) and its control plane
    (faults, how the next calls play)."""

    def __init__(self, session: aiohttp.ClientSession, url: str, key: str):
        self.session, self.url, self.key = session, url, key

    async def request(self, method: str, path: str, json=None):
        async with self.session.request(method, self.url + path, json=json,
                                        headers={"Authorization": f"Bearer {self.key}"}) as r:
            return r.status, await r.json(content_type=None)

    async def fail_next(self, method: str, path: str, status: int, times: int = 1) -> None:
        async with self.session.post(f"{self.url}/_simulator/faults",
                                     json={"method": method, "path": path, "status": status, "times": times}) as r:
            assert r.status in (200, 201), await r.text()

    async def delay_next(self, method: str, path: str, seconds: float, times: int = 1, hold: str = "request") -> None:
        """The next `times` matching requests are served normally after `seconds` (hold "request"), or served at
        once with their answers held back `seconds` (hold "answer": done, though the client may give up)."""
        async with self.session.post(f"{self.url}/_simulator/faults", json={
                "method": method, "path": path, "status": 0, "delay_seconds": seconds, "times": times,
                "hold": hold}) as r:
            assert r.status == 201, await r.text()

    async def playback(self, **script) -> None:
        """How the next calls play (the simulator's Script: outcome, duplicate, reorder, silent, times)."""
        async with self.session.post(f"{self.url}/_simulator/playback", json=script) as r:
            assert r.status == 201, await r.text()

    async def clear_faults(self) -> None:
        async with self.session.delete(f"{self.url}/_simulator/faults") as r:
            assert r.status in (200, 204), await r.text()
