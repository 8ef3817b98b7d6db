"""Texts for the tests: recipients whose quiet hours are over (or not), consent, sending, and waiting for a
message's outcome and events; what the messaging simulator took."""
from datetime import UTC, datetime

import aiohttp
import pytest

from core.compliance import decision as compliance
from core.compliance.rules import SMS
from tests.waiting import wait_until

# Numbers in one zone each (LA, New York, London, Berlin, Johannesburg, Tokyo, Sydney): at any hour some are
# inside the 08:00-21:00 window and some outside, so a test picks one that is open (or closed) right now.
ZONED = ("+1415555{}", "+1212555{}", "+44207946{}", "+4930123{}", "+2721123{}", "+8131234{}", "+6129374{}")


def number(suffix: str, open_now: bool = True) -> str:
    """A recipient whose quiet hours are (or are not) over right now, ending in `suffix` (each test its own: the
    messaging simulator delivers every text unless told otherwise, `SmsSimulator.delivery_fails`)."""
    now = datetime.now(UTC)
    for pattern in ZONED:
        candidate = pattern.format(suffix)
        if compliance.open_to(SMS, candidate, now) == open_now:
            return candidate
    pytest.fail("no zone fits the hour")


async def send(api, key, agent, to: str, message: str = "Your quote is ready.", **extra):
    return await api.request("POST", "/api/v1/sms/send", key=key,
                             json={"to": to, "from_agent_id": agent["id"], "message": message, **extra})


async def opt_in(api, key, phone: str) -> dict:
    """Record `phone`'s opt-in (a web form) through the API."""
    status, consent, _ = await api.request("POST", "/api/v1/sms/consent", key=key,
                                           json={"phone": phone, "state": "opted_in", "note": "web form"})
    assert status == 201, consent
    return consent


async def settled_message(api, key, message_sid: str, final=("delivered", "undelivered", "failed")) -> dict:
    """The message once its status is one of `final`."""
    async def found() -> list[dict]:
        status, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key, params={"limit": "100"})
        return [m for m in page["messages"] if m["message_sid"] == message_sid]
    listed = await wait_until(found, f"message {message_sid} to settle",
                              lambda messages: bool(messages) and messages[0]["status"] in final)
    return listed[0]


async def message_to(api, key, to: str) -> dict:
    """The one outbound text to `to`, as the API lists it."""
    status, page, _ = await api.request("GET", "/api/v1/sms/messages", key=key, params={"direction": "outbound"})
    [found] = [m for m in page["messages"] if m["to"] == to]
    return found


async def text_settled(api, key, to: str, statuses: tuple[str, ...], timeout: float = 15) -> dict:
    """The text to `to` once its status is one of `statuses`."""
    return await wait_until(lambda: message_to(api, key, to), f"the text to {to} to be {' or '.join(statuses)}",
                            lambda found: found["status"] in statuses, timeout=timeout)


async def events_of(api, key, kind: str, message_id: str, expected: int = 1) -> list:
    """The `kind` events of a message once there are `expected` of them (at once with 0)."""
    async def found() -> list[dict]:
        status, body, _ = await api.request("GET", "/api/v1/events", key=key, params={"type": kind})
        return [e for e in body["events"] if e["data"].get("message_id") == message_id]
    return await wait_until(found, f"{expected} {kind} events of message {message_id}",
                            lambda events: len(events) >= expected)


async def texts_to(stack, to: str) -> list[dict]:
    """The messages the messaging provider (the simulator) took for `to`."""
    env = stack.env()
    sid = env["SMS_ACCOUNT_SID"]
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{env['SMS_API_URL']}/2010-04-01/Accounts/{sid}/Messages.json", params={"To": to},
                               headers={"Authorization": aiohttp.encode_basic_auth(sid, env["SMS_AUTH_TOKEN"])}) as r:
            assert r.status == 200, await r.text()
            return (await r.json())["messages"]


class SmsSimulator:
    """The messaging-provider simulator the stack runs: its control plane (inbound texts, callback scripts,
    faults)."""

    def __init__(self, session: aiohttp.ClientSession, url: str):
        self.session, self.url = session, url

    async def control(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        async with self.session.request(method, f"{self.url}/_simulator{path}", json=body) as r:
            return r.status, await r.json(content_type=None)

    async def text_in(self, sender: str, to: str, body: str) -> list[str]:
        """A text from `sender` to one of our numbers; the replies our TwiML answer gave that reached them."""
        return (await self.answered(sender, to, body))["replies"]

    async def answered(self, sender: str, to: str, body: str, url: str | None = None) -> dict:
        """A text from `sender` to one of our numbers (at `url`, else the stack's inbound URL), as the simulator
        tells it: `auto_reply` (the provider's own answer to a keyword), `replies` (our TwiML's, delivered) and
        `refused` (our TwiML's, refused by the provider)."""
        status, answer = await self.control("POST", "/inbound", {"from": sender, "to": to, "body": body,
                                                                 **({"url": url} if url else {})})
        assert status == 201 and answer["status"] == 200, answer
        return answer

    async def delivery_fails(self, to: str, error_code: int) -> None:
        """Simulator-only: every text to `to` ends with the carrier error `error_code`."""
        status, body = await self.control("POST", "/delivery-outcomes", {"to": to, "error_code": error_code})
        assert status == 201, body
