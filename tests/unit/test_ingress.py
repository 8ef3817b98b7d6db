"""The local stack's ingress (deploy.local.ingress) in front of two tiny aiohttp servers standing in for gateways:
round robin over the ready ones, a refused connection tried on the next, a POST a gateway dropped not sent again,
503 when none is ready, and a request and its answer passed on as they are."""
import asyncio
import contextlib
from collections import Counter

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from deploy.local.ingress import Balancer, ingress_app


class Gateway:
    """A stand-in gateway: /readyz 200 (or 503 when unready), every other path answered with its name, each request
    it was sent counted; `drops` closes the connection before answering."""

    def __init__(self, name: str):
        self.name, self.ready, self.drops = name, True, False
        self.seen: list[tuple[str, str]] = []
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.server = TestServer(app)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/readyz":
            return web.json_response({"ready": self.ready}, status=200 if self.ready else 503)
        self.seen.append((request.method, request.path_qs))
        if self.drops:
            assert request.transport is not None
            request.transport.abort()
            await asyncio.sleep(1)  # never answers: the connection is gone
        return web.json_response({"gateway": self.name})

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")


@contextlib.asynccontextmanager
async def ingress(*urls: str, interval: float = 0.05):
    """A client of an ingress in front of the gateways at `urls`, polled every `interval` seconds, with its
    balancer."""
    balancer = Balancer(list(urls), interval)
    async with TestClient(TestServer(ingress_app(balancer))) as client:
        yield client, balancer


async def answered_by(client: TestClient, method: str = "GET", path: str = "/api/v1/balance") -> tuple[int, dict]:
    async with client.request(method, path) as r:
        return r.status, await r.json()


@pytest.fixture
async def gateways():
    made = [Gateway("one"), Gateway("two")]
    for gateway in made:
        await gateway.server.start_server()
    yield made
    for gateway in made:
        await gateway.server.close()


async def wait_for(condition, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_requests_take_turns_over_the_ready_gateways_only(gateways):
    one, two = gateways
    async with ingress(one.url, two.url) as (client, balancer):
        answers = Counter([(await answered_by(client))[1]["gateway"] for _ in range(6)])
        assert answers == {"one": 3, "two": 3}
        two.ready = False
        await wait_for(lambda: not balancer.ready[two.url])
        assert {(await answered_by(client))[1]["gateway"] for _ in range(4)} == {"one"}
        two.ready = True
        await wait_for(lambda: balancer.ready[two.url])
        assert {(await answered_by(client))[1]["gateway"] for _ in range(4)} == {"one", "two"}


async def test_a_gateway_that_refuses_the_connection_is_skipped_for_the_next(gateways):
    one, two = gateways
    gone = one.url
    await one.server.close()  # its port refuses connections from now on
    async with ingress(gone, two.url, interval=3600) as (client, balancer):  # polled once, at the start
        await wait_for(lambda: not balancer.ready[gone])
        for method in ("GET", "POST"):  # refused: never sent, so a POST goes to the next as well
            balancer.ready[gone] = True  # as if its last poll were before it went down
            assert [await answered_by(client, method) for _ in range(2)] == [(200, {"gateway": "two"})] * 2
            assert not balancer.ready[gone]  # taken out until a poll finds it ready again


async def test_a_post_the_gateway_dropped_before_answering_is_not_sent_again(gateways):
    one, two = gateways
    async with ingress(one.url, two.url, interval=3600) as (client, _):
        one.drops = True
        status, body = await answered_by(client, "POST", "/api/v1/sms/send")  # the first turn is one's
        assert status == 502 and body["error"]["code"] == "unavailable", body
        assert "may have taken effect" in body["error"]["message"]
        assert one.seen == [("POST", "/api/v1/sms/send")] and two.seen == []  # not sent to the next
        # a GET is safe to send again: the one dropped at one (its turn is the second) is answered by two
        assert [await answered_by(client) for _ in range(2)] == [(200, {"gateway": "two"})] * 2
        assert ("GET", "/api/v1/balance") in one.seen and two.seen.count(("GET", "/api/v1/balance")) == 2


async def test_no_ready_gateway_is_503_in_the_error_envelope_with_retry_after(gateways):
    one, two = gateways
    one.ready = two.ready = False
    async with ingress(one.url, two.url) as (client, balancer):
        await wait_for(lambda: not any(balancer.ready.values()))
        async with client.get("/api/v1/balance") as r:
            assert r.status == 503 and r.headers["Retry-After"] == "1"
            body = await r.json()
        assert body["error"]["code"] == "unavailable" and "no gateway is ready" in body["error"]["message"]
        assert one.seen == two.seen == []


async def test_the_request_and_its_answer_pass_as_they_are():
    async def echo(request: web.Request) -> web.StreamResponse:
        if request.path == "/readyz":
            return web.Response()
        response = web.Response(status=201, body=await request.read(), headers={
            "X-Seen-Path": request.raw_path, "X-Seen-Host": request.host, "X-Seen-Type": request.content_type,
            "X-Seen-For": request.headers.get("X-Forwarded-For", ""), "X-Seen-Method": request.method,
            "X-Seen-Agent": request.headers.get("User-Agent", "none")})
        response.headers.add("Set-Cookie", "a=1")
        response.headers.add("Set-Cookie", "b=2")
        return response

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", echo)
    async with TestServer(app) as upstream:
        balancer = Balancer([str(upstream.make_url("")).rstrip("/")])
        async with TestClient(TestServer(ingress_app(balancer))) as client:
            body = b'{"to": "+14155550100", "message": "h\xc3\xa9"}'
            async with client.patch("/api/v1/agents/a%2Fb?x=1&y=%20z", data=body, headers={
                    "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.7", "Host": "sb.example"},
                    skip_auto_headers=("User-Agent",)) as r:
                assert r.status == 201 and await r.read() == body
                seen = r.headers
                assert r.headers.getall("Set-Cookie") == ["a=1", "b=2"]
            assert seen["X-Seen-Method"] == "PATCH" and seen["X-Seen-Path"] == "/api/v1/agents/a%2Fb?x=1&y=%20z"
            assert seen["X-Seen-Host"] == "sb.example" and seen["X-Seen-Type"] == "application/json"
            assert seen["X-Seen-For"] == "198.51.100.7, 127.0.0.1"  # the client's address appended
            assert seen["X-Seen-Agent"] == "none"  # nothing the client did not send
            async with client.head("/api/v1/agents") as r:
                assert r.status == 201 and r.headers["X-Seen-Method"] == "HEAD"
