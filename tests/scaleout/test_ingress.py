"""The scaled stack's ingress (deploy.local.ingress) in front of its two gateways: with the first gateway killed
(SIGKILL) and restarted by the launcher's supervision, the public URL answers requests and a provider's webhook
(an inbound text from the SMS simulator) through the other one, and sends to both again once the first is back."""
import asyncio
import uuid

import pytest

from core import costs
from tests import supervising
from tests.api import Api, new_account
from tests.calling import agent_with_number
from tests.conftest import SmsSimulator
from tests.texting import number
from tests.waiting import wait_until


@pytest.fixture
async def supervised(scaled):
    async with supervising.supervised(scaled, 120) as s:
        yield s


async def readyz(api: Api, url: str) -> int:
    try:
        async with api.session.get(f"{url}/readyz") as r:
            return r.status
    except OSError:  # refused: nothing listens there
        return 0


async def test_a_killed_gateway_leaves_the_public_url_and_the_webhooks_to_the_other(supervised, gateways):
    stack = supervised
    public = Api(gateways[0].session, stack.base_url, stack.database_url)
    account = await new_account(public)
    try:
        agent = await agent_with_number(public, account)
        sms = SmsSimulator(public.session, f"http://127.0.0.1:{stack.process('sms-simulator').port}")
        first, (first_url, second_url) = stack.process("gateway"), stack.gateway_urls
        killed, ingress_log = first.proc, stack.process("ingress").log
        logged_before = ingress_log.stat().st_size

        stack.kill("gateway")
        assert await asyncio.to_thread(killed.wait, 10) == -9
        for _ in range(6):  # round robin would send every other one to the killed gateway
            status, body, _ = await public.request("GET", "/api/v1/workspaces", key=account["key"])
            assert status == 200, body
        sender = number("0171")
        assert await sms.text_in(sender, agent["phone_number"], "Are you open on Sunday?") == []  # our webhook: 200

        async def received() -> list[str]:
            status, page, _ = await public.request("GET", "/api/v1/sms/messages", key=account["key"],
                                                   params={"direction": "inbound"})
            assert status == 200, page
            return [m["body"] for m in page["messages"] if m["from"] == sender]
        assert await wait_until(received, "the inbound text in the listing") == ["Are you open on Sunday?"]
        assert await readyz(public, first_url) != 200, "the first gateway was back before the requests were done"
        # the ingress took it out: at its poll, or at once when a request found it refusing connections
        logged = ingress_log.read_text()[logged_before:]
        assert f"gateway {first_url} not ready" in logged or f"gateway {first_url} did not take the" in logged

        # supervision starts it again; the stack is ready, and the ingress sends to both gateways again
        await wait_until(lambda: first.proc is not killed, "the supervisor to start the gateway again", timeout=15)
        await asyncio.to_thread(stack.wait_ready, 120)
        assert stack.restarts["gateway"] >= 1
        await wait_until(lambda: ingress_log.read_text()[logged_before:], "the ingress to see the gateway ready",
                         lambda logged: f"gateway {first_url} ready" in logged, timeout=10)
        tag = uuid.uuid4().hex
        for _ in range(6):
            status, body, _ = await public.request("GET", "/api/v1/workspaces", key=account["key"],
                                                   headers={costs.HEADER: tag})
            assert status == 200, body
        for url in (first_url, second_url):
            async with public.session.get(f"{url}/_costs/{tag}") as r:
                assert (await r.json()).get(costs.RPC), f"{url} served none of the requests through the ingress"
    finally:
        await account["dashboard"].close()
