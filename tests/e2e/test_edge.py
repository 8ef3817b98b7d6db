"""The edge against the running stack (security review, issue 36): per-address limits of what anyone may call, the
OpenAPI document built once per process, the health (the sdr service's report, the providers' status cached per sdr
process) even while the sdr service is stopped, and OAuth errors of a client the user has not approved shown on our
own page instead of sent to the client."""
import asyncio
import uuid

from deploy.local.servers import wait_for_port
from tests.api import Api
from tests.connector import CALLBACK, authorization, consent, pkce, query_of, register


async def test_what_anyone_may_call_is_limited_per_client_address(replica, account):
    edge = replica(PUBLIC_RATE_LIMIT_PER_MINUTE="4", OAUTH_LIMIT_PER_HOUR="2")
    client = {"X-Forwarded-For": "203.0.113.10"}
    for _ in range(4):
        status, _, _ = await edge.request("GET", "/api/v1/schemas", params={"name": "Error"}, headers=client)
        assert status == 200
    status, body, headers = await edge.request("GET", "/api/v1/openapi.json", headers=client)
    assert status == 429 and body["error"]["code"] == "rate_limited" and int(headers["Retry-After"]) >= 1
    for path in ("/dashboard/login", "/no/such/path"):  # pages and unknown paths count too
        assert (await edge.request("GET", path, headers=client))[0] == 429
    # Another client is not held back; nor are keys, which have limits of their own.
    assert (await edge.request("GET", "/api/v1/openapi.json", headers={"X-Forwarded-For": "203.0.113.11"}))[0] == 200
    for _ in range(6):
        status, _, _ = await edge.request("GET", "/api/v1/agents", key=account["key"], headers=client,
                                          params={"business_id": account["business_id"]})
        assert status == 200

    # Registering a client stores a row: OAUTH_LIMIT_PER_HOUR of them (with authorization requests) per address.
    registrar = {"X-Forwarded-For": "203.0.113.12"}
    metadata = {"client_name": "Burst", "redirect_uris": [CALLBACK]}
    for _ in range(2):
        assert (await edge.request("POST", "/oauth/register", json=metadata, headers=registrar))[0] == 201
    status, body, headers = await edge.request("POST", "/oauth/register", json=metadata, headers=registrar)
    assert status == 429 and "per hour" in body["error"]["message"] and int(headers["Retry-After"]) > 60
    status, _, _ = await edge.request("GET", "/oauth/authorize", headers=registrar,
                                      params=authorization(f"https://{uuid.uuid4().hex}.example/client.json",
                                                           pkce()[1]))
    assert status == 429  # no metadata document fetched for it either


async def test_the_openapi_document_is_the_same_bytes_with_an_etag(api):
    async def get(**headers):
        async with api.session.get(api.base + "/api/v1/openapi.json", headers=headers) as r:
            return r.status, await r.read(), r.headers

    status, first, headers = await get()
    assert status == 200 and headers["Content-Type"].startswith("application/json") and headers["ETag"]
    status, again, again_headers = await get()
    assert again == first and again_headers["ETag"] == headers["ETag"]
    status, body, _ = await get(**{"If-None-Match": headers["ETag"]})
    assert status == 304 and body == b""
    assert (await get(**{"If-None-Match": '"stale"'}))[0] == 200


async def _restart_sdr(stack) -> None:
    """The sdr service started anew (the providers not asked yet in that process) and the stack ready again."""
    def restart():
        stack.restart_process("sdr")
        sdr = stack.process("sdr")
        wait_for_port(sdr.port, 30, sdr.proc, "sdr", sdr.log)
        stack.wait_ready(30)
    await asyncio.to_thread(restart)


async def test_health_is_the_sdr_services_report_and_answers_while_it_is_stopped(stack, api, replica, account, voice):
    key = account["read_key"]
    try:
        await asyncio.to_thread(stack.stop_process, stack.process("sdr"))
        status, health, _ = await api.request("GET", "/api/v1/health", key=key)
        assert status == 200 and (health["status"], health["api"], health["queue"]) == ("degraded", "ok", "ok"), health
        assert health["services"] == {"accounts": "unknown", "agents": "unknown", "calls": "unknown",
                                      "evals": "unknown", "messaging": "unknown", "sdr": "unreachable",
                                      "webhooks": "unknown"}
        assert health["providers"] == {"voice": "unknown", "messaging": "unknown", "payments": "unknown"}
        await voice.fail_next("GET", "/assistant", 503, times=4)
        await _restart_sdr(stack)
        status, health, _ = await api.request("GET", "/api/v1/health", key=key)
        assert status == 200 and health["providers"]["voice"] == "unreachable" and health["status"] == "degraded"
        assert set(health["services"].values()) == {"ok"}, health
        await voice.clear_faults()
        # The provider is back, but the sdr service asked it a moment ago (it asks at most every 10 seconds): the
        # same answer, and no call to any provider, whichever gateway replica asks.
        for gateway in (api, replica()):
            status, health, _ = await gateway.request("GET", "/api/v1/health", key=key)
            assert status == 200 and health["providers"]["voice"] == "unreachable"
    finally:
        await _restart_sdr(stack)  # running, and without the answer cached above, for the tests that follow


async def test_errors_of_a_client_the_user_has_not_approved_stay_on_our_page(api, account):
    dash = account["dashboard"]
    client = (await register(api))["client_id"]  # anyone may register one, with any redirect URI
    challenge = pkce()[1]
    nobody = Api(api.session, api.base)
    for params, error in (({"code_challenge_method": "plain"}, "code_challenge_method must be S256"),
                          ({"scope": "agents:write"}, "unknown scope agents:write"),
                          ({"response_type": "token"}, "response_type must be code")):
        for browser in (dash, nobody):  # signed in without approving it, or not signed in
            status, page, headers = await browser.request("GET", "/oauth/authorize",
                                                          params=authorization(client, challenge, **params))
            assert status == 400 and "Location" not in headers and error in page, (params, status, headers)
    # Once the user approved the client, its errors go back to it (RFC 6749 4.1.2.1).
    assert query_of(await consent(dash, authorization(client, challenge)))["code"]
    status, _, headers = await dash.request("GET", "/oauth/authorize", params=authorization(
        client, challenge, scope="agents:write"))
    assert status == 302 and query_of(headers["Location"])["error"] == "invalid_scope"
    # Still local for someone else.
    status, _, headers = await nobody.request("GET", "/oauth/authorize", params=authorization(
        client, challenge, scope="agents:write"))
    assert status == 400 and "Location" not in headers
