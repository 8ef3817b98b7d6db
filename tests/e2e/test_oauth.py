"""OAuth 2.1 sign-in for the assistant connector, driven by a script as a client and a browser would: metadata,
registration (dynamic, and client ID metadata documents), the consent page, the code with PKCE, tokens on the
connector, refresh with rotation, revocation; the refusals (PKCE, redirect URIs, scopes, reuse); another account;
the dashboard's list of connected assistants."""
import re
import secrets
from html import unescape

import aiohttp
import httpx2
import pytest
from aiohttp import web
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from services.accounts.identity.sign_in import SIGN_IN_SUBJECT
from tests.api import Dashboard, mailed_link
from tests.connector import (
    CALLBACK,
    COMPLETES,
    MCP,
    READ,
    TOOLS,
    authorization,
    consent,
    pkce,
    query_of,
    register,
    settled,
)


async def token(api, **form) -> tuple[int, dict]:
    status, body, headers = await api.request("POST", "/oauth/token", data=form)
    assert headers["Cache-Control"] == "no-store"
    return status, body


async def sign_in(api, dash, client_id: str, scope: str = READ, keep=None) -> dict:
    """The whole dance for `client_id`: the tokens."""
    verifier, challenge = pkce()
    back = query_of(await consent(dash, authorization(client_id, challenge, scope, resource=api.base + MCP),
                                  keep=keep))
    status, tokens = await token(api, grant_type="authorization_code", code=back["code"], redirect_uri=CALLBACK,
                                 client_id=client_id, code_verifier=verifier, resource=api.base + MCP)
    assert status == 200, tokens
    return tokens


async def tool(api, access_token: str, name: str, arguments=None):
    return await api.request("POST", f"{MCP}/tools/call", key=access_token,
                             json={"name": name, "arguments": arguments or {}})


async def test_the_metadata_tells_a_client_how_to_sign_in(api):
    status, body, headers = await api.request("POST", MCP, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert status == 401
    challenge = headers["WWW-Authenticate"]
    where = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
    assert where == f"{api.base}/.well-known/oauth-protected-resource{MCP}" and 'scope="agents:read calls:read"' in \
        challenge and "invalid_token" not in challenge
    status, _, headers = await api.request("POST", f"{MCP}/tools/list", key="eyJ.not.a-token")
    assert status == 401 and 'error="invalid_token"' in headers["WWW-Authenticate"]

    for path in (where.removeprefix(api.base), "/.well-known/oauth-protected-resource"):
        status, resource, _ = await api.request("GET", path)
        assert status == 200 and resource["resource"] == api.base + MCP
        assert resource["authorization_servers"] == [api.base]
        assert resource["scopes_supported"] == ["agents:read", "calls:read", "calls:write"]
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        status, server, _ = await api.request("GET", path)
        assert status == 200 and server["issuer"] == api.base
        assert server["authorization_endpoint"] == api.base + "/oauth/authorize"
        assert server["token_endpoint"] == api.base + "/oauth/token"
        assert server["registration_endpoint"] == api.base + "/oauth/register"
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["client_id_metadata_document_supported"] is True
        assert server["token_endpoint_auth_methods_supported"] == ["none"]


async def test_a_full_sign_in_by_script(api, account):
    client = await register(api)
    assert client["client_id"].startswith("sbc_") and client["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in client

    verifier, challenge = pkce()
    status, page, headers = await account["dashboard"].request(
        "GET", "/oauth/authorize", params=authorization(client["client_id"], challenge, resource=api.base + MCP))
    assert status == 200 and "Connect Test Assistant to Switchboard?" in page and "Acme Plumbing" in page
    assert headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    back = await consent(account["dashboard"], authorization(client["client_id"], challenge, resource=api.base + MCP))
    assert back.startswith(CALLBACK + "?")
    got = query_of(back)
    assert got["state"] == "xyz" and got["iss"] == api.base and len(got["code"]) >= 40

    status, tokens = await token(api, grant_type="authorization_code", code=got["code"], redirect_uri=CALLBACK,
                                 client_id=client["client_id"], code_verifier=verifier, resource=api.base + MCP)
    assert status == 200, tokens
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 600 and tokens["scope"] == READ
    access = tokens["access_token"]

    status, result, _ = await tool(api, access, "get_business_info")
    assert status == 200 and not result.get("isError"), result
    assert [b["id"] for b in result["structuredContent"]["businesses"]] == [account["business_id"]]
    status, body, _ = await api.request("POST", MCP, key=access, json={
        "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "list_agents", "arguments": {}}},
        headers={"MCP-Protocol-Version": "2025-11-25"})
    assert status == 200 and body["result"]["structuredContent"]["agents"] == [], body  # none provisioned yet
    # Approved read only: placing a call asks for more, the way MCP's step-up expects.
    status, body, headers = await tool(api, access, "make_call", {"agent_id": "x", "to": "+14155550188"})
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert 'error="insufficient_scope", scope="calls:write"' in headers["WWW-Authenticate"]
    # The token is for the connector only.
    status, body, _ = await api.request("GET", "/api/v1/agents", key=access)
    assert status == 401 and "/api/mcp" in body["error"]["message"]

    status, refreshed = await token(api, grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                                    client_id=client["client_id"])
    assert status == 200 and refreshed["refresh_token"] != tokens["refresh_token"], refreshed
    status, narrowed = await token(api, grant_type="refresh_token", refresh_token=refreshed["refresh_token"],
                                   client_id=client["client_id"], scope="calls:read")
    assert status == 200 and narrowed["scope"] == "calls:read"
    status, _, _ = await tool(api, narrowed["access_token"], "list_agents")
    assert status == 403
    status, refused = await token(api, grant_type="refresh_token", refresh_token=narrowed["refresh_token"],
                                  client_id=client["client_id"], scope="calls:write")
    assert status == 400 and refused["error"] == "invalid_scope"

    status, _, _ = await api.request("POST", "/oauth/revoke", data={"token": narrowed["refresh_token"],
                                                                    "client_id": client["client_id"]})
    assert status == 200
    for revoked in (access, refreshed["access_token"], narrowed["access_token"]):
        status, body, headers = await tool(api, revoked, "list_recent_calls")
        assert status == 401 and "revoked" in body["error"]["message"], body
        assert 'error="invalid_token"' in headers["WWW-Authenticate"]
    status, refused = await token(api, grant_type="refresh_token", refresh_token=narrowed["refresh_token"],
                                  client_id=client["client_id"])
    assert status == 400 and refused["error"] == "invalid_grant"
    # Revoking what is unknown is not an error (RFC 7009).
    status, _, _ = await api.request("POST", "/oauth/revoke", data={"token": "nothing", "client_id": "x"})
    assert status == 200


async def test_pkce_and_redirect_uri_mismatches_are_refused(api, account):
    dash = account["dashboard"]
    client = (await register(api))["client_id"]
    other = (await register(api, redirect_uris=["https://other.example/cb"]))["client_id"]
    verifier, challenge = pkce()

    # A redirect URI the client did not register is shown to the user, never followed.
    status, page, _ = await dash.request("GET", "/oauth/authorize", params=authorization(
        client, challenge, redirect_uri="https://evil.example/cb"))
    assert status == 400 and "not one the client registered" in page
    status, page, _ = await dash.request("GET", "/oauth/authorize", params=authorization("sbc_nobody", challenge))
    assert status == 401 and "unknown client_id" in page
    # A loopback redirect URI may name another port (RFC 8252).
    assert query_of(await consent(dash, authorization(client, challenge, redirect_uri="http://127.0.0.1:9/callback")))[
        "code"]
    # Other errors go back to the client, with its state.
    for params, error in (({"code_challenge_method": "plain"}, "invalid_request"),
                          ({"code_challenge": ""}, "invalid_request"),
                          ({"scope": "agents:write"}, "invalid_scope"),
                          ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
                          ({"response_type": "token"}, "unsupported_response_type")):
        status, _, headers = await dash.request("GET", "/oauth/authorize",
                                                params=authorization(client, challenge, **params))
        assert status == 302, params
        back = query_of(headers["Location"])
        assert headers["Location"].startswith(CALLBACK) and back["error"] == error and back["state"] == "xyz", back
    denied = query_of(await consent(dash, authorization(client, challenge), decision="deny"))
    assert denied["error"] == "access_denied" and "code" not in denied

    code = query_of(await consent(dash, authorization(client, challenge)))["code"]
    exchange = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "client_id": client,
                "code_verifier": verifier}
    for wrong, error in (({"code_verifier": pkce()[0]}, "invalid_grant"),
                         ({"redirect_uri": "http://127.0.0.1:8765/other"}, "invalid_grant"),
                         ({"client_id": other}, "invalid_grant"),
                         ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
                         ({"code_verifier": ""}, "invalid_request"),
                         ({"grant_type": "password"}, "unsupported_grant_type")):
        status, refused = await token(api, **{**exchange, **wrong})
        assert status == 400 and refused["error"] == error, (wrong, refused)
    status, tokens = await token(api, **exchange)
    assert status == 200, tokens
    # A code used twice is taken as stolen: the tokens it gave are revoked.
    status, refused = await token(api, **exchange)
    assert status == 400 and refused["error"] == "invalid_grant" and "already used" in refused["error_description"]
    status, _, _ = await tool(api, tokens["access_token"], "list_agents")
    assert status == 401
    status, body, _ = await api.request("POST", "/oauth/token", json={"grant_type": "refresh_token"})
    assert status == 400 and body["error"] == "invalid_request"


async def test_a_refresh_token_used_twice_revokes_the_sign_in(api, account):
    client = (await register(api))["client_id"]
    first = await sign_in(api, account["dashboard"], client)
    status, second = await token(api, grant_type="refresh_token", refresh_token=first["refresh_token"],
                                 client_id=client)
    assert status == 200
    status, refused = await token(api, grant_type="refresh_token", refresh_token=first["refresh_token"],
                                  client_id=client)
    assert status == 400 and refused["error"] == "invalid_grant" and "already used" in refused["error_description"]
    status, refused = await token(api, grant_type="refresh_token", refresh_token=second["refresh_token"],
                                  client_id=client)
    assert status == 400 and refused["error"] == "invalid_grant"
    status, _, _ = await tool(api, second["access_token"], "list_agents")
    assert status == 401


async def test_a_sign_in_reaches_only_the_approved_businesses_of_its_account(api, account, other_key):
    dash = account["dashboard"]
    status, second, _ = await api.request("POST", "/api/v1/workspaces", key=account["key"],
                                          json={"name": "Second Shop"})
    assert status == 201, second
    client = (await register(api))["client_id"]
    only_second = await sign_in(api, dash, client, keep={"agents:read", "calls:read", second["id"]})
    status, info, _ = await tool(api, only_second["access_token"], "get_business_info")
    assert [b["id"] for b in info["structuredContent"]["businesses"]] == [second["id"]]
    status, info, _ = await tool(api, only_second["access_token"], "get_business_info",
                                 {"business_id": account["business_id"]})
    assert info["isError"] and info["content"][0]["text"].startswith("not_found")

    # Another account's user signs the same client in: it sees that account's business only.
    other = await api.signup(business_name="Other Co")
    other_dash = await api.dashboard(other)
    try:
        theirs = await sign_in(api, other_dash, client)
        status, info, _ = await tool(api, theirs["access_token"], "get_business_info")
        assert [b["id"] for b in info["structuredContent"]["businesses"]] == [other["business_id"]]
        status, listed, _ = await tool(api, theirs["access_token"], "list_agents")
        assert all(a["business_id"] == other["business_id"] for a in listed["structuredContent"]["agents"])
        status, info, _ = await tool(api, theirs["access_token"], "get_business_info",
                                     {"business_id": account["business_id"]})
        assert info["isError"] and account["business_id"] not in info["content"][0]["text"]
        assert info["content"][0]["text"].startswith("not_found")
        # Nor can it revoke the first account's sign-in.
        status, _, _ = await api.request("POST", "/oauth/revoke", data={"token": only_second["access_token"],
                                                                        "client_id": "sbc_someone_else"})
        assert status == 200
        status, _, _ = await tool(api, only_second["access_token"], "list_agents")
        assert status == 200
        status, page, _ = await other_dash.request("GET", "/dashboard/connections")
        assert status == 200 and page.count("<form") == 1
    finally:
        await other_dash.close()


async def test_the_dashboard_lists_connected_assistants_and_revokes_one(api, account):
    dash = account["dashboard"]
    client = (await register(api, client_name="Desk Copilot"))["client_id"]
    tokens = await sign_in(api, dash, client)
    assert (await tool(api, tokens["access_token"], "list_agents"))[0] == 200
    status, page, _ = await dash.request("GET", "/dashboard/connections")
    assert status == 200 and "Desk Copilot" in page and "agents:read calls:read" in page
    [(grant_id, form_token)] = re.findall(r'name="id" value="([^"]+)"><input type="hidden" name="form_token" '
                                          r'value="([^"]+)"', page)
    status, page, _ = await dash.request("POST", "/dashboard/connections/revoke",
                                         data={"id": grant_id, "form_token": "forged"})
    assert status == 403
    status, page, _ = await api.request("POST", "/dashboard/connections/revoke",
                                        data={"id": grant_id, "form_token": form_token})
    assert status == 403  # no session
    assert (await tool(api, tokens["access_token"], "list_agents"))[0] == 200
    status, _, headers = await dash.request("POST", "/dashboard/connections/revoke",
                                            data={"id": grant_id, "form_token": form_token})
    assert status == 303 and headers["Location"] == "/dashboard/connections"
    assert (await tool(api, tokens["access_token"], "list_agents"))[0] == 401
    status, page, _ = await dash.request("GET", "/dashboard/connections")
    assert "Desk Copilot" not in page and "No assistant is connected" in page


@pytest.fixture
async def metadata_document():
    """A client that publishes its metadata document (on loopback: the local stack fetches loopback URLs)."""
    app = web.Application()
    served = {}

    async def document(request):
        served["fetches"] = served.get("fetches", 0) + 1
        return web.json_response(served["document"])

    app.router.add_get("/oauth/client.json", document)
    app.router.add_get("/oauth/other.json", document)  # the same document at another URL: not its own
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/oauth/client.json"
    served["document"] = {"client_id": url, "client_name": "Published Assistant", "redirect_uris": [CALLBACK]}
    yield url, served
    await runner.cleanup()


async def test_a_client_known_by_its_metadata_document(api, account, metadata_document):
    url, served = metadata_document
    tokens = await sign_in(api, account["dashboard"], url)
    status, _, _ = await tool(api, tokens["access_token"], "list_agents")
    assert status == 200 and served["fetches"] == 1
    status, page, _ = await account["dashboard"].request("GET", "/dashboard/connections")
    assert "Published Assistant" in page
    # A document that names another client_id is refused, shown to the user.
    wrong = url.replace("client.json", "other.json")
    status, page, _ = await account["dashboard"].request("GET", "/oauth/authorize",
                                                         params=authorization(wrong, pkce()[1]))
    assert status == 401 and "not its own URL" in page


async def test_registration_refuses_what_it_cannot_serve(api):
    for metadata, error in (({"redirect_uris": []}, "invalid_redirect_uri"),
                            ({"redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
                            ({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_basic"},
                             "invalid_client_metadata"),
                            ({"redirect_uris": [CALLBACK], "grant_types": ["client_credentials"]},
                             "invalid_client_metadata"),
                            ({"redirect_uris": [CALLBACK], "client_name": "a\u0000b"}, "invalid_client_metadata")):
        status, body, _ = await api.request("POST", "/oauth/register", json=metadata)
        assert status == 400 and body["error"] == error, (metadata, body)
    status, body, _ = await api.request("POST", "/oauth/register", data="not json")
    assert status == 400 and body["error"] == "invalid_client_metadata"


class Browser:
    """The user's side of the official client's sign-in: its redirect handler opens the authorization URL in the
    signed-in dashboard and approves what is asked; the callback handler hands back the code."""

    def __init__(self, dash):
        self.dash, self.location, self.consents = dash, None, 0

    async def redirect(self, url: str) -> None:
        self.location = await consent(self.dash, url)
        self.consents += 1

    async def callback(self) -> AuthorizationCodeResult:
        got = query_of(self.location)
        return AuthorizationCodeResult(code=got["code"], state=got.get("state"), iss=got.get("iss"))


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens) -> None:
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info) -> None:
        self.client = client_info


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_official_client_signs_in_and_uses_every_tool(api, account, calling_agent, mode):
    browser, storage = Browser(account["dashboard"]), Memory()
    auth = OAuthClientProvider(api.base + MCP, OAuthClientMetadata(
        client_name=f"SDK client ({mode})", redirect_uris=[CALLBACK], grant_types=["authorization_code",
                                                                                  "refresh_token"]),
        storage, redirect_handler=browser.redirect, callback_handler=browser.callback)
    async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(api.base + MCP, http_client=http), mode=mode) as client:
            assert [t.name for t in (await client.list_tools()).tools] == TOOLS
            assert browser.consents == 1 and storage.tokens.scope == READ  # the 401 challenge's scopes
            assert storage.client.client_id.startswith("sbc_")  # registered dynamically
            agents = (await client.call_tool("list_agents", {})).structured_content["agents"]
            assert calling_agent["id"] in [a["id"] for a in agents]
            info = (await client.call_tool("get_business_info", {})).structured_content
            assert [b["id"] for b in info["businesses"]] == [account["business_id"]]
            # make_call needs calls:write: the client steps up (403 insufficient_scope), the user approves again.
            placed = await client.call_tool("make_call", {"agent_id": calling_agent["id"], "to": COMPLETES})
            assert not placed.is_error, placed
            assert browser.consents == 2 and set(storage.tokens.scope.split()) == {"agents:read", "calls:read",
                                                                                   "calls:write"}
            ended = await settled(client, placed.structured_content["id"])
            assert ended["status"] == "completed"
            recent = (await client.call_tool("list_recent_calls", {"limit": 1})).structured_content
            assert recent["calls"][0]["id"] == ended["id"]
            transcript = await client.call_tool("get_transcript", {"call_id": ended["id"]})
            assert not transcript.is_error and transcript.structured_content["call_id"] == ended["id"]


async def test_a_browser_without_a_session_signs_in_by_email_and_comes_back(api, account, mailbox, stack):
    client = (await register(api))["client_id"]
    params = authorization(client, pkce()[1])
    browser = Dashboard(aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)), api.base)
    try:
        status, page, _ = await browser.request("GET", "/oauth/authorize", params=params)
        assert status == 401 and "E-mail me a sign-in link" in page
        next_path = unescape(re.search(r'name="next" value="([^"]+)"', page).group(1))
        assert next_path.startswith("/oauth/authorize?") and f"client_id={client}" in next_path

        # An address without an account gets the same answer, and no mail.
        stranger = f"nobody-{secrets.token_hex(4)}@example.com"
        status, page, _ = await browser.request("POST", "/dashboard/sign-in", data={"email": stranger,
                                                                                  "next": next_path})
        assert status == 200 and "is on its way" in page and await mailbox(stranger) == []
        status, page, _ = await browser.request("POST", "/dashboard/sign-in", data={
            "email": account["email"].upper(), "next": next_path})
        assert status == 200 and "is on its way" in page
        [mail] = await api.mails(stack, account["email"], SIGN_IN_SUBJECT, at_least=1)
        link = mailed_link(mail)
        status, _, headers = await browser.open_link(link)
        assert status == 303 and headers["Location"] == next_path
        assert query_of(await consent(browser, next_path))["code"]
        status, _, _ = await browser.open_link(link)
        assert status == 401  # a link works once

        # A link's next path never leads off the site.
        await browser.request("POST", "/dashboard/sign-in", data={"email": account["email"],
                                                                  "next": "//evil.example/x"})
        received = await api.mails(stack, account["email"], SIGN_IN_SUBJECT, at_least=2)
        link = mailed_link(received[-1])
        status, _, headers = await browser.open_link(link)
        assert status == 303 and headers["Location"] == "/dashboard"
    finally:
        await browser.close()
