"""Dashboard sessions as a browser meets them (security review, issue 36): sign-in links used only by their button,
sign-in that never leads off the site, the cookie's attributes from the public URL, signing out (here and
everywhere), the idle timeout, CSRF on session writes and dashboard forms, and the security headers."""
from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from html import unescape
from urllib.parse import urlsplit

import pytest

from services.accounts.identity.sign_in import SIGN_IN_SUBJECT

XRW = {"X-Requested-With": "fetch"}
CROSS_SITE = {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}


def cookie_value(client, name: str = "sb_session") -> str:
    return next(c.value for c in client.session.cookie_jar if c.key == name)


def form_token_of(page: str) -> str:
    return re.search(r'name="form_token" value="([^"]+)"', page).group(1)


async def account_of(db, signup: dict) -> str:
    return str(await db.fetchval("SELECT account_id FROM accounts.businesses WHERE id = $1", signup["business_id"]))


async def signed_in(api, stack):
    """A new account's email and two dashboard sessions of it (the signup's link, then the sign-in form's)."""
    email = f"owner-{uuid.uuid4().hex[:10]}@example.com"
    signup = await api.signup(email=email)
    return signup, email, await api.dashboard(signup), await api.sign_in_by_mail(stack, email)


async def test_opening_a_sign_in_link_uses_it_only_by_its_button(api):
    signup = await api.signup()
    link = signup["dashboard_magic_link"].removeprefix(api.base)
    for _ in range(2):  # a mail scanner, a preview, a second click: the link stays unused
        status, page, headers = await api.request("GET", link)
        assert status == 200 and "Set-Cookie" not in headers
        assert unescape(re.search(r'<form method="post" action="([^"]+)"', page).group(1)) == link
    status, page, _ = await api.request("POST", link, headers=CROSS_SITE)  # login CSRF: another site's form
    assert status == 403 and "another site" in page
    status, _, headers = await api.request("POST", link, headers={"Sec-Fetch-Site": "same-origin"})
    assert status == 303 and headers["Location"] == "/dashboard" and "sb_session=" in headers["Set-Cookie"]
    status, page, _ = await api.request("POST", link)
    assert status == 401 and "already used" in page


@pytest.mark.parametrize("next_path", ["/%09/evil.example", "//evil.example", "/\\evil.example", "https://evil.example",
                                       "/api/v1/keys", "/dashboard/../api/v1/keys", "/dashboardx", "/dashboard%0a"])
async def test_a_sign_in_never_leads_off_the_dashboards_pages(api, next_path):
    signup = await api.signup()
    status, _, headers = await api.request("POST", signup["dashboard_magic_link"].removeprefix(api.base)
                                           + f"&next={next_path}")
    assert status == 303 and headers["Location"] == "/dashboard"


async def test_a_sign_in_goes_back_to_the_dashboard_page_that_asked(api):
    signup = await api.signup()
    status, _, headers = await api.request("POST", signup["dashboard_magic_link"].removeprefix(api.base)
                                           + "&next=/dashboard/connections")
    assert status == 303 and headers["Location"] == "/dashboard/connections"


async def test_behind_an_https_public_url_the_cookie_is_secure_and_host_only(api, stack):
    replica = stack.add_gateway(f"gateway-https-{uuid.uuid4().hex[:6]}",
                                {"PUBLIC_BASE_URL": "https://switchboard.example"})
    base = f"http://127.0.0.1:{replica.port}"  # the ingress's side: plain http on the socket
    try:
        signup = await api.signup()
        link = urlsplit(signup["dashboard_magic_link"])
        async with api.session.post(f"{base}{link.path}?{link.query}", allow_redirects=False) as r:
            assert r.status == 303
            cookie = r.headers["Set-Cookie"]
            assert r.headers["Strict-Transport-Security"].startswith("max-age=")
        assert cookie.startswith("__Host-sb_session=") and "Secure" in cookie and "Path=/" in cookie
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Domain" not in cookie
        token = cookie.split(";")[0].split("=", 1)[1]
        async with api.session.get(f"{base}/api/v1/keys", headers={"Cookie": f"__Host-sb_session={token}"}) as r:
            assert r.status == 200
        # The plain name is not read there: a sibling subdomain or a plain-http answer could have planted it.
        async with api.session.get(f"{base}/api/v1/keys", headers={"Cookie": f"sb_session={token}"}) as r:
            assert r.status == 401
        async with api.session.post(f"{base}/api/v1/sessions/logout", json={},
                                    headers={"Cookie": f"__Host-sb_session={token}"}) as r:
            assert r.status == 200
            cleared = r.headers["Set-Cookie"]
        assert cleared.startswith('__Host-sb_session=""') and "Max-Age=0" in cleared and "Secure" in cleared
    finally:
        stack.stop_process(replica)
        stack.processes.remove(replica)


async def test_signing_out_ends_this_session_only(api, stack):
    _, _, first, second = await signed_in(api, stack)
    try:
        token = cookie_value(first)
        status, body, headers = await first.request("POST", "/api/v1/sessions/logout", json={})
        assert status == 200 and body == {"sessions_ended": 1}
        assert headers["Set-Cookie"].startswith('sb_session=""') and "Max-Age=0" in headers["Set-Cookie"]
        status, body, _ = await api.request("GET", "/api/v1/keys", cookies={"sb_session": token})
        assert status == 401 and body["error"]["code"] == "unauthorized"
        assert (await second.request("GET", "/api/v1/keys"))[0] == 200
        # Signing out again, an ended session: done already.
        status, body, _ = await api.request("POST", "/api/v1/sessions/logout", cookies={"sb_session": token},
                                            headers=XRW)
        assert status == 200 and body == {"sessions_ended": 0}
    finally:
        await first.close()
        await second.close()


async def test_signing_out_everywhere_ends_every_session_and_pending_link_of_the_account(api, stack, db):
    signup, email, first, second = await signed_in(api, stack)
    _, _, other, other_second = await signed_in(api, stack)
    try:
        account = await account_of(db, signup)
        pending = await db.fetchval("SELECT count(*) FROM accounts.magic_links WHERE account_id = $1 AND used_at IS "
                                    "NULL AND expires_at > now()", uuid.UUID(account))  # the welcome mail's
        mailed = len(await api.mails(stack, email, SIGN_IN_SUBJECT))
        status, _, _ = await first.request("POST", "/dashboard/sign-in", data={"email": email})  # a pending link
        assert status == 200
        await api.mails(stack, email, SIGN_IN_SUBJECT, at_least=mailed + 1)  # it is stored before it is mailed
        assert await db.fetchval("SELECT count(*) FROM accounts.magic_links WHERE account_id = $1 AND used_at IS NULL "
                                 "AND expires_at > now()", uuid.UUID(account)) == pending + 1
        tokens = [cookie_value(first), cookie_value(second)]
        status, body, _ = await second.request("POST", "/api/v1/sessions/logout", json={"everywhere": True})
        assert status == 200 and body == {"sessions_ended": 2}
        for token in tokens:
            assert (await api.request("GET", "/api/v1/keys", cookies={"sb_session": token}))[0] == 401
        assert await db.fetchval("SELECT count(*) FROM accounts.magic_links WHERE account_id = $1 AND used_at IS NULL "
                                 "AND expires_at > now()", uuid.UUID(account)) == 0
        assert (await other.request("GET", "/api/v1/keys"))[0] == 200  # another account signs nothing out
        status, body, _ = await api.request("POST", "/api/v1/sessions/logout", json={"everywhere": True},
                                            cookies={"sb_session": tokens[1]})
        assert status == 401  # everywhere needs a session that still stands
    finally:
        for client in (first, second, other, other_second):
            await client.close()


async def test_the_dashboard_page_signs_out_with_its_own_form(api, stack):
    _, _, first, second = await signed_in(api, stack)
    try:
        status, page, headers = await first.request("GET", "/dashboard")
        assert status == 200 and "Sign out everywhere" in page
        token = form_token_of(page)
        status, page, _ = await first.request("POST", "/dashboard/logout", data={"form_token": token},
                                              headers=CROSS_SITE)
        assert status == 403
        status, page, _ = await first.request("POST", "/dashboard/logout", data={"form_token": "forged"})
        assert status == 403
        assert (await first.request("GET", "/api/v1/keys"))[0] == 200  # neither signed out
        status, page, headers = await first.request("POST", "/dashboard/logout", data={"form_token": token},
                                                    headers={"Sec-Fetch-Site": "same-origin"})
        assert status == 200 and "You are signed out" in page and "Max-Age=0" in headers["Set-Cookie"]
        status, page, _ = await first.request("GET", "/dashboard")
        assert status == 401 and "Not signed in" in page
        assert (await second.request("GET", "/api/v1/keys"))[0] == 200
        _, page, _ = await second.request("GET", "/dashboard")
        token = cookie_value(second)
        status, page, _ = await second.request("POST", "/dashboard/logout",
                                               data={"form_token": form_token_of(page), "everywhere": "1"})
        assert status == 200 and "every browser" in page
        assert (await api.request("GET", "/api/v1/keys", cookies={"sb_session": token}))[0] == 401
    finally:
        await first.close()
        await second.close()


async def test_a_session_unused_for_twelve_hours_ends_and_use_slides_it_once_a_minute(api, db):
    signup = await api.signup()
    dash = await api.dashboard(signup)
    account = uuid.UUID(await account_of(db, signup))
    now = datetime.now(UTC)

    async def last_used() -> datetime:
        return await db.fetchval("SELECT last_used_at FROM accounts.sessions WHERE account_id = $1", account)

    async def used_at(when: datetime) -> None:
        await db.execute("UPDATE accounts.sessions SET last_used_at = $2 WHERE account_id = $1", account, when)

    try:
        await used_at(now - timedelta(seconds=20))  # used moments ago: no write for this use
        assert (await dash.request("GET", "/api/v1/keys"))[0] == 200
        assert await last_used() == now - timedelta(seconds=20)
        await used_at(now - timedelta(hours=11))  # idle 11 hours: still on, and this use moves it on
        assert (await dash.request("GET", "/api/v1/keys"))[0] == 200
        assert await last_used() > now - timedelta(seconds=5)
        await used_at(now - timedelta(hours=12, minutes=1))
        status, body, _ = await dash.request("GET", "/api/v1/keys")
        assert status == 401 and "12 hours after its last use" in body["error"]["message"]
        status, page, headers = await dash.request("GET", "/dashboard")
        assert status == 401 and "Max-Age=0" in headers["Set-Cookie"]
    finally:
        await dash.close()


async def test_session_writes_need_json_or_a_header_of_their_own(api, account):
    dash = account["dashboard"]
    status, body, _ = await dash.request("POST", "/api/v1/keys")  # no body: a cross-site form could send that
    assert status == 400 and "X-Requested-With" in body["error"]["message"]
    status, body, _ = await dash.request("POST", "/api/v1/keys", data=b'{"name": "x"}',
                                         headers={"Content-Type": "text/plain"})
    assert status == 400
    created = await dash.create_key(name="to delete")
    status, body, _ = await dash.request("DELETE", "/api/v1/keys", params={"id": created["id"]})
    assert status == 400 and body["error"]["code"] == "invalid_request"
    status, body, _ = await dash.request("DELETE", "/api/v1/keys", params={"id": created["id"]}, headers=XRW)
    assert status == 200 and body == {"success": True}
    status, body, _ = await dash.request("POST", "/api/v1/keys", headers=XRW)
    assert status == 201
    assert (await dash.request("GET", "/api/v1/keys"))[0] == 200  # reads need neither


async def test_every_response_carries_the_security_headers(api, account):
    status, _, headers = await account["dashboard"].request("GET", "/dashboard")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in csp
    assert "script-src 'self';" in csp and "unsafe-inline" not in csp  # no inline script on a dashboard page
    assert headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "Strict-Transport-Security" not in headers  # the embedded stack's public URL is plain http
    for path in ("/api/v1/openapi.json", "/api/v1/nowhere", "/healthz"):
        status, _, headers = await api.request("GET", path)
        assert headers["X-Content-Type-Options"] == "nosniff" and "X-Frame-Options" not in headers, path
    status, _, headers = await api.request("GET", "/dashboard/connections")
    assert headers["X-Frame-Options"] == "DENY" and headers["Cache-Control"] == "no-store"


async def test_a_form_token_that_is_not_ascii_is_refused_not_a_500(api, account):
    dash = account["dashboard"]
    for path in ("/dashboard/connections/revoke", "/dashboard/logout", "/oauth/authorize"):
        status, page, _ = await dash.request("POST", path, data={"form_token": "caf\u00e9", "id": "x"})
        assert status == 403, (path, page)
