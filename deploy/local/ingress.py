"""The local stack's entrance when it runs several gateways (`Stack(replicas=2)`, `REPLICAS=2 make run`), as an
Ingress controller is on Kubernetes: `python -m deploy.local.ingress` listens on the stack's public port (PORT, on
HOST) and forwards every request, round robin, to a gateway of INGRESS_UPSTREAMS (their URLs, comma-separated)
whose /readyz answered 200 at its last poll (every POLL_SECONDS).

A gateway that refuses the connection, or does not take it in time, is skipped for the next ready one, as nginx's
`proxy_next_upstream error timeout` does. One that drops the connection before answering is skipped only for a
request that is safe to send again: a POST or PATCH may have taken effect, so, as nginx does, it is answered 502
instead. Once a gateway began answering, its answer is the client's, streamed as it comes (a recording's audio),
and a failure part-way cuts the client's connection short. With no gateway ready the answer is 503 in the
platform's error envelope with Retry-After. The client's address is appended to X-Forwarded-For, which a gateway
believes only from peers in its TRUSTED_PROXIES (gateway.clientip), as behind a real ingress.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from core.logs import configure_simulator_logs
from gateway.errors import error_response

log = logging.getLogger("deploy.local.ingress")  # its name when run as __main__ too
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

UPSTREAMS_ENV = "INGRESS_UPSTREAMS"
POLL_SECONDS = 0.2
BODY_LIMIT = 4 * 1024 * 1024  # the Kubernetes Ingress's proxy-body-size (deploy/k8s/base/gateway.yaml)
# The Ingress's proxy-read-timeout: the longest a gateway may be silent, answering or streaming.
READ_TIMEOUT_SECONDS = 120
CONNECT_TIMEOUT_SECONDS = 2
# A connection's own headers (RFC 9110, 7.6.1), never passed on; the body's length is set again by whoever sends it.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
                        "te", "trailer", "transfer-encoding", "upgrade"})
# Methods a gateway that dropped the connection before answering may be sent again (RFC 9110, 9.2.2).
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
# Failures after which the gateway has not seen the request: the next one is tried whatever the method.
NOT_SENT = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)


class Balancer:
    """The gateways whose /readyz answered 200 at their last poll, as a Service's endpoints list the ready pods."""

    def __init__(self, urls: list[str], interval: float = POLL_SECONDS):
        self.ready = dict.fromkeys(urls, True)
        self.interval = interval
        self._turn = itertools.count()

    def in_turn(self) -> list[str]:
        """The ready gateways, starting at the next one in turn (round robin): where one request is tried, in order."""
        ready = [url for url, up in self.ready.items() if up]
        if not ready:
            return []
        start = next(self._turn) % len(ready)
        return ready[start:] + ready[:start]

    def pick(self) -> str | None:
        return next(iter(self.in_turn()), None)

    async def poll(self, http: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.gather(*(self._check(http, url) for url in self.ready))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.interval)

    async def _check(self, http: aiohttp.ClientSession, url: str) -> None:
        try:
            async with http.get(f"{url}/readyz", timeout=aiohttp.ClientTimeout(total=1)) as r:
                up = r.status == 200
        except (aiohttp.ClientError, TimeoutError):
            up = False
        if up != self.ready[url]:
            log.info("gateway %s %s", url, "ready" if up else "not ready")
        self.ready[url] = up


def sent_on(request: web.Request) -> CIMultiDict[str]:
    """The request's headers as a gateway is sent them: the client's address appended to X-Forwarded-For."""
    headers = CIMultiDict((name, value) for name, value in request.headers.items() if name.lower() not in HOP_BY_HOP)
    forwarded = [*headers.popall("X-Forwarded-For", []), request.remote or ""]
    headers["X-Forwarded-For"] = ", ".join(hop for hop in forwarded if hop)
    return headers


HTTP = web.AppKey("http", aiohttp.ClientSession)


def forwarding(balancer: Balancer) -> Handler:
    """The handler of every path: the request to the ready gateways in turn, until one takes it."""

    async def forward(request: web.Request) -> web.StreamResponse:
        body = await request.read()  # whole, so that it can go to the next gateway
        headers = sent_on(request)
        for url in balancer.in_turn():
            try:
                answer = await request.app[HTTP].request(request.method, URL(url + request.raw_path, encoded=True),
                                                         headers=headers, data=body or None, allow_redirects=False)
            except NOT_SENT as exc:
                log.warning("gateway %s did not take the connection (%s); trying the next", url, exc)
                balancer.ready[url] = False  # until its next poll says otherwise
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.warning("gateway %s failed before answering %s %s (%r)", url, request.method, request.path, exc)
                if request.method in IDEMPOTENT:
                    continue
                return lost(exc)
            return await relay(request, answer)
        return error_response("unavailable", "no gateway is ready to answer; try again in a moment",
                              headers={"Retry-After": "1"})

    return forward


def lost(exc: Exception) -> web.Response:
    """The answer to a request a gateway was sent and failed before answering: 502, or 504 when it fell silent."""
    silent = isinstance(exc, TimeoutError)
    return error_response("timeout" if silent else "unavailable", "the gateway failed before answering; the request "
                          "may have taken effect: read the result back, or repeat it with the same Idempotency-Key "
                          "where the route takes one", 504 if silent else 502)


async def relay(request: web.Request, answer: aiohttp.ClientResponse) -> web.StreamResponse:
    """The gateway's answer, streamed to the client as it comes."""
    async with answer:
        response = web.StreamResponse(status=answer.status, reason=answer.reason, headers=CIMultiDict(
            (name, value) for name, value in answer.headers.items() if name.lower() not in HOP_BY_HOP))
        await response.prepare(request)
        # A failure from here on propagates: aiohttp then closes the client's connection, the answer visibly cut.
        async for chunk in answer.content.iter_any():
            await response.write(chunk)
        await response.write_eof()
    return response


def ingress_app(balancer: Balancer) -> web.Application:
    """The ingress forwarding every path to `balancer`'s gateways, polling them while it runs."""
    app = web.Application(client_max_size=BODY_LIMIT)
    app.router.add_route("*", "/{tail:.*}", forwarding(balancer))

    async def polling(app: web.Application) -> AsyncIterator[None]:
        # the bytes as they come (no decompression), and no cookie kept from one client's answer for another
        async with aiohttp.ClientSession(
                auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(), connector=aiohttp.TCPConnector(limit=0),
                skip_auto_headers=("Accept", "Accept-Encoding", "Content-Type", "User-Agent"),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT_SECONDS,
                                              sock_read=READ_TIMEOUT_SECONDS)) as http:
            app[HTTP] = http
            stop = asyncio.Event()
            poller = asyncio.create_task(balancer.poll(http, stop))
            yield
            stop.set()
            await poller

    app.cleanup_ctx.append(polling)
    return app


def main() -> None:
    configure_simulator_logs("ingress")
    upstreams = [url for url in os.environ.get(UPSTREAMS_ENV, "").split(",") if url]
    if not upstreams:
        raise SystemExit(f"{UPSTREAMS_ENV} must name the gateways (their URLs, comma-separated)")
    host, port = os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8080"))
    web.run_app(ingress_app(Balancer(upstreams)), host=host, port=port, access_log=None,
                print=lambda _: log.info("ingress on http://%s:%d to %s", host, port, ", ".join(upstreams)))


if __name__ == "__main__":
    main()
