"""Signups that pay for the tests: the payment simulator's checkout page (as a browser) and its control plane,
signups from addresses of their own, and waiting for the workspace they get."""
import uuid
from html.parser import HTMLParser

import aiohttp
import asyncpg

from core.plans import LOCAL_CHECKOUT_PRICES, parse_checkout_prices
from providers.payments.adapter import invoice_subscription_id
from tests.api import next_client_ip
from tests.waiting import wait_until

GOOD_CARD, DECLINED_CARD, FAILS_LATER_CARD = "4242 4242 4242 4242", "4000000000000002", "4000000000000341"
CHALLENGE = "3D Secure"  # the bank's challenge page (a card that asks for 3-D Secure)


class FormReader(HTMLParser):
    """The checkout page's form as a browser sees it: its action, its fields with their values, its button."""

    def __init__(self):
        super().__init__()
        self.action, self.fields, self.button, self.buttons = None, {}, None, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.action = a.get("action", "")
        elif tag == "input" and a.get("name"):
            self.fields[a["name"]] = a.get("value", "")
        elif tag == "button" and a.get("type", "submit") == "submit":
            self.button = self.button or a.get("id")
            self.buttons[a.get("id")] = (a.get("name"), a.get("value"))


class Payments:
    """The payment-provider simulator: its checkout page (as a browser) and its control plane."""

    def __init__(self, session: aiohttp.ClientSession, url: str):
        self.session, self.url = session, url

    async def check_out(self, checkout_url: str, card: str | None = None,
                        authentication: str = "complete") -> tuple[int, str]:
        """Open the page and click its submit button (the prefilled test card unless `card`); when the bank asks
        for 3-D Secure, click `authentication` ("complete" or "fail") on its challenge. The last answer's status,
        and its text or, for a redirect, where it sends the browser."""
        async with self.session.get(checkout_url) as r:
            assert r.status == 200 and r.content_type == "text/html"
            page = FormReader()
            page.feed(await r.text())
        assert page.button == "submit" and page.fields["cardNumber"].replace(" ", "") == GOOD_CARD.replace(" ", "")
        fields = {**page.fields, **({"cardNumber": card} if card else {})}
        status, answer = await self._submit(checkout_url, page.action, fields)
        if status == 200 and CHALLENGE in answer:
            challenge = FormReader()
            challenge.feed(answer)
            name, value = challenge.buttons[authentication]
            status, answer = await self._submit(checkout_url, challenge.action, {**challenge.fields, name: value})
        return status, answer

    async def _submit(self, page_url: str, action: str, fields: dict) -> tuple[int, str]:
        async with self.session.post(str(aiohttp.helpers.URL(page_url).join(aiohttp.helpers.URL(action))),
                                     data=fields, allow_redirects=False) as r:
            return r.status, r.headers.get("Location") or await r.text()

    async def control(self, method: str, path: str, body: dict | None = None):
        async with self.session.request(method, f"{self.url}/_simulator{path}", json=body) as r:
            return r.status, await r.json(content_type=None)

    async def advance(self, subscription_id: str, until: str | None = None) -> list[str]:
        """Play the subscription's next billing moment now (`until`: the moments up to this one, e.g. "payment":
        the period's end, then its invoice charged an hour later); the moments played."""
        played: list[str] = []
        while len(played) < 3:
            status, step = await self.control("POST", f"/subscriptions/{subscription_id}/advance")
            assert status == 200, step
            played.append(step["moment"])
            if until is None or step["moment"] == until:
                return played
        raise AssertionError(f"no {until} among the moments played: {played}")

    async def events(self, **match) -> list[dict]:
        status, body = await self.control("GET", "/events")
        assert status == 200
        records = body["events"] if isinstance(body, dict) else body
        return [e for e in records if all(_dig(e["event"]["data"]["object"], k) == v for k, v in match.items())]


def _dig(obj: dict, key: str):
    for part in key.split("."):
        obj = (obj or {}).get(part)
    return obj


async def signup(api, headers: dict | None = None, **fields):
    """POST /api/v1/signup from an address of its own; a 200 body also carries the email used, as `_email`."""
    payload = {"business_name": "Acme Plumbing", "email": f"owner-{uuid.uuid4().hex[:10]}@example.com", **fields}
    status, body, reply_headers = await api.request("POST", "/api/v1/signup", json=payload,
                                                    headers={"X-Forwarded-For": next_client_ip(), **(headers or {})})
    if status == 200:
        body["_email"] = payload["email"]
    return status, body, reply_headers


async def workspace(api, key: str, business_id: str) -> dict:
    """The workspace as GET /api/v1/workspaces shows it."""
    status, body, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"id": business_id})
    assert status == 200, body
    return body["workspaces"][0]


async def provisioned(api, key: str, business_id: str) -> dict:
    """The workspace once its provisioning is done."""
    return await wait_until(lambda: workspace(api, key, business_id), "provisioning to finish",
                            lambda ws: ws["provisioning"]["status"] == "done", timeout=20)


async def subscription(api, key: str, business_id: str, status: str, lifecycle: str | None = None) -> dict:
    """The workspace once its subscription has this status (and the workspace this lifecycle state)."""
    def reached(ws: dict) -> bool:
        return ws["subscription_status"] == status and lifecycle in (None, ws["lifecycle_state"])
    return await wait_until(lambda: workspace(api, key, business_id), f"subscription {status} / workspace {lifecycle}",
                            reached, timeout=20)


async def release_numbers(api, account_key: str, numbers: list[str]):
    """Give the numbers back to the pool."""
    for number in numbers:
        status, body, _ = await api.request("DELETE", "/api/v1/phone-numbers", key=account_key,
                                            params={"phone_number": number})
        assert status == 200, body


async def full_key(api, signup_body: dict) -> str:
    """A key with every scope of the signup's account (made in its dashboard)."""
    dash = await api.dashboard(signup_body)
    try:
        return (await dash.create_key(name="all", scopes=["*"]))["key"]
    finally:
        await dash.close()


async def provider(api, method: str, path: str, form: dict | None = None) -> dict:
    """A request to the payment provider's API (the simulator), with the stack's key: its JSON answer."""
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {api.payments.key}"}) as http:
        async with http.request(method, f"{api.payments.url}{path}", data=form) as r:
            body = await r.json()
            assert r.status == 200, body
            return body


async def subscription_of(api, business_id: str) -> str:
    """The provider's id of the subscription a business pays with (not shown by the API)."""
    conn = await asyncpg.connect(api.database_url)
    try:
        return await conn.fetchval("SELECT subscription_id FROM accounts.businesses WHERE id = $1::uuid", business_id)
    finally:
        await conn.close()


async def provider_events_applied(api, payer_business_id: str) -> None:
    """Wait until every event the payment simulator has made about the business's subscription is delivered to our
    webhook and applied by accounts (recorded in accounts.payment_events, in the transaction that applies it). A
    request that changes the subscription (a workspace added to it, a plan changed) has its events sent afterwards;
    each copies the subscription's standing onto every workspace billed on it and bumps their `updated_at`, so a
    test that then needs the account's records quiet (or sets a workspace's standing itself) waits here first."""
    sub_id = await subscription_of(api, payer_business_id)
    conn = await asyncpg.connect(api.database_url)

    async def unapplied() -> list[tuple[str, str, str]]:
        records = await provider(api, "GET", "/_simulator/events")
        about = [r for r in records if sub_id in (r["object_id"], invoice_subscription_id(r["event"]["data"]["object"]))]
        applied = set(await conn.fetchval("SELECT coalesce(array_agg(event_id), '{}') FROM accounts.payment_events "
                                          "WHERE event_id = ANY($1::text[])", [r["id"] for r in about]))
        return [(r["id"], r["type"], r["status"]) for r in about if r["id"] not in applied]

    try:
        await wait_until(unapplied, f"subscription {sub_id}'s provider events to be applied", lambda left: not left,
                         timeout=20)
    finally:
        await conn.close()


async def change_plan(api, key: str, business_id: str, plan: str) -> dict:
    """Move the account's subscription to another plan at the provider, as the owner would at the provider's
    portal: the provider's event changes the workspace's plan (and so its limits); the workspace after."""
    sub_id = await subscription_of(api, business_id)
    sub = await provider(api, "GET", f"/v1/subscriptions/{sub_id}")
    price = next(p for p, offered in parse_checkout_prices(LOCAL_CHECKOUT_PRICES).items() if offered == plan)
    await provider(api, "POST", f"/v1/subscriptions/{sub_id}",
                   {"items[0][id]": sub["items"]["data"][0]["id"], "items[0][price]": price})
    return await wait_until(lambda: workspace(api, key, business_id), f"the {plan} plan",
                            lambda ws: ws["plan_id"] == plan, timeout=20)
