"""The assistant connector for the tests: its path and tools, a call's end as the connector reads it, and its OAuth
sign-in driven as a client and a browser would (registration, PKCE, the consent page)."""
import base64
import hashlib
import re
import secrets
from html import unescape
from urllib.parse import parse_qs, urlsplit

from mcp.client.client import Client

from tests.waiting import wait_until

MCP = "/api/mcp"
TOOLS = ["list_agents", "get_business_info", "list_recent_calls", "check_call_status", "get_transcript", "make_call"]
COMPLETES, NO_ANSWER = "+14155550188", "+14155550001"  # the voice simulator's scripted outcomes
CALLBACK = "http://127.0.0.1:8765/callback"
READ = "agents:read calls:read"


async def settled(client: Client, call_id: str) -> dict:
    """The call as check_call_status reads it once it has ended."""
    async def status() -> dict:
        result = await client.call_tool("check_call_status", {"call_id": call_id})
        assert not result.is_error, result
        return result.structured_content
    return await wait_until(status, f"call {call_id} to end", lambda call: call["ended_reason"] is not None,
                            timeout=15)


def pkce() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge."""
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def register(api, **metadata) -> dict:
    """A client registered dynamically (POST /oauth/register) with CALLBACK as its redirect URI."""
    status, body, headers = await api.request("POST", "/oauth/register", json={
        "client_name": "Test Assistant", "redirect_uris": [CALLBACK], **metadata})
    assert status == 201, body
    assert headers["Cache-Control"] == "no-store"
    return body


def form_of(page: str) -> list[tuple[str, str]]:
    """The consent form's hidden fields and checked boxes, as a browser would post them."""
    fields = re.findall(r'<input type="(hidden|checkbox)" name="([^"]+)" value="([^"]*)"', page)
    return [(name, unescape(value)) for _, name, value in fields]


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def consent(dash, url_or_params, *, decision="approve", keep=None) -> str:
    """Open the authorization request as the signed-in user, decide, and return where the browser is sent.
    `keep` filters the checkboxes (scope_approved and business_id values) left checked."""
    if isinstance(url_or_params, str):
        status, page, _ = await dash.request("GET", url_or_params.removeprefix(dash.base))
    else:
        status, page, _ = await dash.request("GET", "/oauth/authorize", params=url_or_params)
    assert status == 200, page
    fields = [(n, v) for n, v in form_of(page) if keep is None or n not in ("scope_approved", "business_id")
              or v in keep]
    status, _, headers = await dash.request("POST", "/oauth/authorize", data=fields + [("decision", decision)])
    assert status == 303, headers
    return headers["Location"]


def authorization(client_id: str, challenge: str, scope: str = READ, **extra) -> dict:
    """The query of an authorization request of `client_id` with a PKCE challenge."""
    return {"response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK, "state": "xyz",
            "code_challenge": challenge, "code_challenge_method": "S256", "scope": scope, **extra}
