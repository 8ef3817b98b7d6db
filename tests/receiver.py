"""A webhook receiver on this machine for the tests: records requests, can refuse or stall the first ones."""
import asyncio
import json

from aiohttp import web

from deploy.local.servers import free_port
from tests.waiting import wait_until


class Receiver:
    """A partner's endpoint on this machine: records every request; may fail the first ones; answers the others
    with `answer`."""

    def __init__(self, fail_first: int = 0, status: int = 500, delay_first: float = 0.0, answer: str = "ok"):
        self.fail_first, self.status, self.delay_first, self.answer = fail_first, status, delay_first, answer
        self.arrived = asyncio.Event()
        self.requests: list[dict] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        self.runner = None

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        record = {"headers": dict(request.headers), "body": body, "json": json.loads(body), "accepted": False}
        self.requests.append(record)
        self.arrived.set()
        if len(self.requests) == 1 and self.delay_first:
            await asyncio.sleep(self.delay_first)
        if len(self.requests) <= self.fail_first:
            # A 3xx points back here: a sender that followed redirects would deliver on the same attempt.
            headers = {"Location": self.url} if 300 <= self.status < 400 else None
            return web.Response(status=self.status, text="not now", headers=headers)
        record["accepted"] = True
        return web.Response(text=self.answer)

    async def start(self) -> "Receiver":
        app = web.Application()
        app.router.add_post("/hooks", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        await self.runner.cleanup()

    def events(self, event_type: str | None = None) -> dict[str, dict]:
        """Accepted (2xx) events deduplicated on event_id, as a receiver should."""
        return {r["json"]["event_id"]: r for r in self.requests
                if r["accepted"] and (event_type is None or r["json"]["event"] == event_type)}

    async def wait_for(self, count: int, event_type: str | None = None, timeout: float = 20) -> dict[str, dict]:
        return await wait_until(lambda: self.events(event_type), f"{count} accepted {event_type or 'any'} events",
                                lambda events: len(events) >= count, timeout=timeout, interval=0.05)


async def settled_deliveries(api, key: str, count: int, **params) -> list[dict]:
    """The deliveries listed for `params` once `count` of them are delivered (the dispatcher records an
    outcome just after the receiver answers)."""
    async def deliveries() -> list[dict]:
        status, body, _ = await api.request("GET", "/api/v1/webhooks/deliveries", key=key, params=params)
        assert status == 200, body
        return body["deliveries"]
    return await wait_until(deliveries, f"{count} deliveries delivered",
                            lambda listed: sum(d["status"] == "delivered" for d in listed) >= count, interval=0.05)
