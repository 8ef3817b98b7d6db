"""The soak's webhook receiver (bench.soak.partner) on its own aiohttp server: signatures checked per path, dedup on
event_id with counts, seeded failures and slow answers, and down (connections refused) then up on the same port."""
import asyncio
import json
import time

import aiohttp
import pytest

from bench.soak.partner import Partner
from core.signing import SIGNATURE_HEADER, signature_header


def signed(event_id: str, secret: str, **fields) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"event_id": event_id, "event": "lead.created", **fields}).encode()
    return body, {SIGNATURE_HEADER: signature_header([secret], int(time.time()), body),
                  "Content-Type": "application/json"}


async def post(http: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str]) -> int:
    async with http.post(url, data=body, headers=headers) as r:
        return r.status


@pytest.fixture
async def partner():
    p = await Partner(seed=1, fail_rate=0, slow_rate=0).start()
    p.secret("biz-1", "whsec_one")
    yield p
    await p.stop()


async def test_a_signed_delivery_is_accepted_deduplicated_and_counted(partner):
    async with aiohttp.ClientSession() as http:
        url = partner.url_for("biz-1")
        assert await post(http, url, *signed("e1", "whsec_one", n=1)) == 200
        assert await post(http, url, *signed("e1", "whsec_one", n=2)) == 200  # redelivered: acknowledged again
        assert await post(http, url, *signed("e2", "whsec_one")) == 200
        partner.secret("biz-1", "whsec_rotated")  # a second secret of the path: either signs
        assert await post(http, url, *signed("e3", "whsec_rotated")) == 200

        assert await post(http, url, *signed("e4", "whsec_wrong")) == 401
        assert await post(http, partner.url_for("biz-2"), *signed("e5", "whsec_one")) == 401  # no secret there
        body, headers = signed("e6", "whsec_one")
        assert await post(http, url, body + b" ", headers) == 401  # the raw body is what is signed
        unsigned = b'["no event"]'
        assert await post(http, url, unsigned, {SIGNATURE_HEADER: signature_header(["whsec_one"], 1, unsigned)}) == 400

    assert partner.accepted == {("biz-1", "e1"): 2, ("biz-1", "e2"): 1, ("biz-1", "e3"): 1}
    assert partner.deliveries("e1") == {"biz-1": 2}
    assert partner.events("biz-1")["e1"]["n"] == 1  # the first body kept
    assert set(partner.events()) == {"e1", "e2", "e3"} and partner.events("biz-2") == {}
    assert partner.bad_signatures == {"biz-1": 2, "biz-2": 1} and partner.malformed == {"biz-1": 1}
    assert not partner.refused
    with pytest.raises(ValueError):
        partner.url_for("../admin")


async def test_failures_and_slow_answers_come_from_the_seed():
    async def statuses(seed: int) -> list[int]:
        p = await Partner(seed=seed, fail_rate=0.5, slow_rate=0).start()
        p.secret("b", "s")
        try:
            async with aiohttp.ClientSession() as http:
                return [await post(http, p.url_for("b"), *signed(f"e{n}", "s")) for n in range(20)]
        finally:
            await p.stop()

    first = await statuses(7)
    assert first == await statuses(7) and set(first) == {200, 500}
    assert first != await statuses(8)

    slow = await Partner(fail_rate=0, slow_rate=1, slow_seconds=(0.3, 0.3)).start()
    slow.secret("b", "s")
    try:
        async with aiohttp.ClientSession() as http:
            began = time.monotonic()
            assert await post(http, slow.url_for("b"), *signed("e", "s")) == 200
            assert time.monotonic() - began >= 0.3
    finally:
        await slow.stop()


async def test_refused_deliveries_are_counted_and_not_accepted():
    p = await Partner(fail_rate=1, slow_rate=0).start()
    p.secret("b", "s")
    try:
        async with aiohttp.ClientSession() as http:
            assert await post(http, p.url_for("b"), *signed("e", "s")) == 500
            assert await post(http, p.url_for("b"), *signed("e", "s")) == 500
    finally:
        await p.stop()
    assert p.refused == {("b", "e"): 2} and not p.accepted and p.events() == {}


async def test_down_refuses_connections_and_up_serves_on_the_same_port(partner):
    url = partner.url_for("biz-1")
    async with aiohttp.ClientSession() as kept_alive:
        assert await post(kept_alive, url, *signed("before", "whsec_one")) == 200  # a pooled connection stays open
        await partner.down(True)
        assert partner.is_down
        with pytest.raises(aiohttp.ClientError):  # the open connection was closed; a new one is refused
            await post(kept_alive, url, *signed("during", "whsec_one"))
        async with aiohttp.ClientSession() as fresh:
            with pytest.raises(aiohttp.ClientConnectorError):
                await post(fresh, url, *signed("during", "whsec_one"))
        await partner.down(False)
        assert not partner.is_down and partner.url_for("biz-1") == url
        assert await post(kept_alive, url, *signed("after", "whsec_one")) == 200
    assert set(partner.events()) == {"before", "after"}


async def test_a_slow_delivery_in_progress_is_answered_before_the_partner_goes_down():
    p = await Partner(fail_rate=0, slow_rate=1, slow_seconds=(0.5, 0.5)).start()
    p.secret("b", "s")
    try:
        async with aiohttp.ClientSession() as http:
            in_progress = asyncio.create_task(post(http, p.url_for("b"), *signed("slow", "s")))
            while not p._runner.server.requests_count:  # its handler has begun
                await asyncio.sleep(0.01)
            await p.down(True)  # returns once it has been answered
            assert in_progress.done() and await in_progress == 200
            with pytest.raises(aiohttp.ClientError):  # its connection closed after the answer, a new one refused
                await post(http, p.url_for("b"), *signed("refused", "s"))
    finally:
        await p.stop()
    assert set(p.events()) == {"slow"}
