"""The clients' balancer over a local stack's gateways: the local stack has no load balancer in front of them, so a
bench sends each request to a gateway whose `/readyz` answered 200 at its last poll, as an Ingress does with the
endpoints of the ready pods."""
from __future__ import annotations

import asyncio
import itertools

import aiohttp

POLL_SECONDS = 0.2


class Balancer:
    """The gateways whose /readyz answered 200 at their last poll, as endpoints list the ready pods."""

    def __init__(self, urls: list[str]):
        self.ready = {url: True for url in urls}
        self._turn = itertools.count()

    def pick(self) -> str | None:
        ready = [url for url, up in self.ready.items() if up]
        return ready[next(self._turn) % len(ready)] if ready else None

    async def poll(self, http: aiohttp.ClientSession, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for url in self.ready:
                try:
                    async with http.get(f"{url}/readyz", timeout=aiohttp.ClientTimeout(total=1)) as r:
                        self.ready[url] = r.status == 200
                except (aiohttp.ClientError, TimeoutError):
                    self.ready[url] = False
            await asyncio.sleep(POLL_SECONDS)
