"""The gateway's JSON API as the tests use it: a client (Api), a dashboard session (Dashboard) and the sign-in
links the platform mails."""
from __future__ import annotations

import html
import itertools
import re
import uuid
from urllib.parse import urlsplit

import aiohttp

from services.accounts.identity.sign_in import SIGN_IN_SUBJECT, WELCOME_SUBJECT
from tests.standing import PaymentsAccess, start_trial
from tests.waiting import wait_until

# The shared gateway's per-key limit stays out of the way of the fuzzing guard; the rate-limit test
# runs its own replica with KEY_RATE_LIMIT (the `limited_api` fixture).
KEY_RATE_LIMIT = 200

_ips = itertools.count(1)


def next_client_ip() -> str:
    """A distinct client address per signup (the gateway trusts X-Forwarded-For from 127.0.0.1 in tests)."""
    n = next(_ips)
    return f"198.51.{n // 250}.{n % 250 + 1}"


class Api:
    """A thin JSON client for the gateway."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, database_url: str = "",
                 payments: PaymentsAccess | None = None):
        self.session = session
        self.base = base_url
        self.database_url = database_url  # where signup's businesses are put in their trial (tests.standing)
        self.payments = payments  # where that trial's subscription is made

    async def request(self, method: str, path: str, *, key: str | None = None, json=None, data=None,
                      headers: dict | None = None, params=None, cookies=None):
        hdrs = dict(headers or {})
        if key is not None:
            hdrs["Authorization"] = f"Bearer {key}"
        async with self.session.request(method, self.base + path, json=json, data=data, headers=hdrs, params=params,
                                        cookies=cookies, allow_redirects=False) as r:
            text = await r.text()
            try:
                body = await r.json(content_type=None) if text else None
            except ValueError:
                body = text
            return r.status, body, r.headers

    async def signup(self, paid: bool = True, **fields) -> dict:
        """A card-checkout signup; `paid`: in its trial as once the checkout completed (tests.standing), else
        unpaid."""
        payload = {"business_name": "Acme Plumbing", "email": f"owner-{uuid.uuid4().hex[:10]}@example.com", **fields}
        status, body, _ = await self.request("POST", "/api/v1/signup", json=payload,
                                             headers={"X-Forwarded-For": next_client_ip()})
        assert status == 200, body
        if paid and self.database_url:
            await start_trial(self.database_url, body["business_id"], payments=self.payments)
        return body

    async def dashboard(self, signup: dict) -> Dashboard:
        """Open the magic link in a fresh cookie jar and return a client holding the session."""
        browser = Dashboard(aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)), self.base)
        status, body, _ = await browser.open_link(signup["dashboard_magic_link"])
        assert status == 303, body
        return browser

    async def open_link(self, link: str):
        """Open a sign-in link as a browser does: its page, then its button (a POST); the button's answer. The link
        is opened at this client's gateway (on a scaled stack it names the ingress: PUBLIC_BASE_URL)."""
        _, _, path, query, _ = urlsplit(link)
        status, page, _ = await self.request("GET", f"{path}?{query}" if query else path)
        assert status == 200 and "<form" in page, page
        return await self.request("POST", html.unescape(re.search(r'<form method="post" action="([^"]+)"',
                                                                  page).group(1)))

    async def sign_in_by_mail(self, stack, email: str) -> Dashboard:
        """Another dashboard session of the account with this address: the sign-in form, then the link it mails."""
        before = len(await self.mails(stack, email, SIGN_IN_SUBJECT))
        browser = Dashboard(aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)), self.base)
        status, page, _ = await browser.request("POST", "/dashboard/sign-in", data={"email": email})
        assert status == 200, page
        received = await self.mails(stack, email, SIGN_IN_SUBJECT, at_least=before + 1)
        status, body, _ = await browser.open_link(mailed_link(received[-1]))
        assert status == 303, body
        return browser

    async def confirm_address(self, stack, email: str) -> None:
        """Use the link of the signup's welcome mail, which confirms the owner's address (the platform mails
        nothing else to it before)."""
        [welcome] = await self.mails(stack, email, WELCOME_SUBJECT, at_least=1)
        browser = Dashboard(aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)), self.base)
        try:
            status, body, _ = await browser.open_link(mailed_link(welcome))
            assert status == 303, body
        finally:
            await browser.close()

    async def mails(self, stack, email: str, subject: str, at_least: int = 0) -> list[dict]:
        """The catch-all's mails to `email` with this subject, waiting (5 s at most) until there are `at_least`."""
        url = f"http://127.0.0.1:{stack.process('mail-catchall').port}/messages"

        async def received() -> list[dict]:
            async with self.session.get(url, params={"to": email.lower()}) as r:
                return [m for m in (await r.json())["messages"] if m["subject"] == subject]
        return await wait_until(received, f"{at_least} mails {subject!r} to {email}", lambda m: len(m) >= at_least,
                                timeout=5, interval=0.05)


async def new_account(api: Api) -> dict:
    """A new account: its signup reply, a dashboard session (close it), and a key with every scope."""
    email = f"owner-{uuid.uuid4().hex[:10]}@example.com"
    signup = await api.signup(email=email)
    dash = await api.dashboard(signup)
    full = await dash.create_key(name="all", scopes=["*"])
    return {"signup": signup, "dashboard": dash, "key": full["key"], "read_key": signup["api_key"],
            "business_id": signup["business_id"], "email": email}


def mailed_link(mail: dict) -> str:
    return re.search(r"(http://\S+/dashboard/login\?\S+)", mail["body"]).group(1)


class Dashboard(Api):
    async def create_key(self, **fields) -> dict:
        status, body, _ = await self.request("POST", "/api/v1/keys", json=fields)
        assert status == 201, body
        return body

    async def close(self):
        await self.session.close()
