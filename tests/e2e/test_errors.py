"""The error envelope for everything that can go wrong before a handler runs."""
import asyncio

import pytest

from tests.api import KEY_RATE_LIMIT


def assert_error(status, body, expected_status, code):
    assert status == expected_status, body
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code and body["error"]["message"]


@pytest.mark.parametrize("headers", [
    {}, {"Authorization": "svc_live_abc"}, {"Authorization": "Bearer sk_live_abc"},
    {"Authorization": "Bearer svc_live_doesnotexist"}, {"Authorization": "Basic dXNlcjpwYXNz"},
])
async def test_bad_credentials_are_401(api, headers):
    status, body, _ = await api.request("GET", "/api/v1/workspaces", headers=headers)
    assert_error(status, body, 401, "unauthorized")


async def test_unknown_paths_and_methods(api, account):
    status, body, _ = await api.request("GET", "/api/v1/nope", key=account["key"])
    assert_error(status, body, 404, "not_found")
    status, body, _ = await api.request("GET", "/nothing-here")
    assert_error(status, body, 404, "not_found")
    status, body, headers = await api.request("DELETE", "/api/v1/workspaces", key=account["key"])
    assert_error(status, body, 405, "method_not_allowed")
    assert "PATCH" in headers["Allow"]


async def test_malformed_and_oversized_bodies(api, account):
    key = account["key"]
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=key, data=b"{not json",
                                        headers={"Content-Type": "application/json"})
    assert_error(status, body, 400, "invalid_request")
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=key, json=["a", "list"])
    assert_error(status, body, 400, "invalid_request")
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=key, data=b"\xff\xfe",
                                        headers={"Content-Type": "application/json"})
    assert_error(status, body, 400, "invalid_request")
    big = b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=key, data=big,
                                        headers={"Content-Type": "application/json"})
    assert_error(status, body, 400, "invalid_request")
    status, body, _ = await api.request("POST", "/api/v1/signup", data=b"[]", headers={"Content-Type": "application/json"})
    assert_error(status, body, 400, "invalid_request")
    # nothing was stored by any of these
    status, listing, _ = await api.request("GET", "/api/v1/workspaces", key=key)
    assert len(listing["workspaces"]) == 1


async def test_per_key_rate_limit_with_retry_after(limited_api, account):
    api = limited_api
    key = (await account["dashboard"].create_key(scopes=["workspaces:read"]))["key"]
    # Twice the limit: the bucket refills KEY_RATE_LIMIT per minute, so on a busy machine a burst of only a few more
    # than the limit can take long enough for the refill to cover them (seen in make test under load).
    statuses = await asyncio.gather(*(api.request("GET", "/api/v1/balance", key=key)
                                      for _ in range(2 * KEY_RATE_LIMIT)))
    limited = [s for s in statuses if s[0] == 429]
    assert limited, "the limit never applied"
    status, body, headers = limited[0]
    assert_error(status, body, 429, "rate_limited")
    assert int(headers["Retry-After"]) >= 1
    # other keys are unaffected
    assert (await api.request("GET", "/api/v1/balance", key=account["key"]))[0] == 200


async def test_nul_characters_are_refused_by_name(api, account):
    key, bid = account["key"], account["business_id"]
    for body, field in (({"name": "a\u0000b"}, "name"), ({"name": "ok", "metadata": {"k": ["x", "\u0000"]}}, "metadata.k[1]"),
                        ({"name": "ok", "metadata": {"\u0000": 1}}, "metadata.")):
        status, reply, _ = await api.request("POST", "/api/v1/workspaces", key=key, json=body)
        assert_error(status, reply, 400, "invalid_request")
        assert field in reply["error"]["message"]
    status, reply, _ = await api.request("PATCH", "/api/v1/workspaces", key=key, json={"id": bid, "name": "\u0000"})
    assert_error(status, reply, 400, "invalid_request")
    status, reply, _ = await api.request("GET", "/api/v1/workspaces", key=key, params={"after": "2026\u0000"})
    assert_error(status, reply, 400, "invalid_request")
    status, reply, _ = await api.request("POST", "/api/v1/signup", json={"business_name": "\u0000", "email": "n@example.com"})
    assert_error(status, reply, 400, "validation_error")
    lone_surrogate = b'{"business_name": "\\ud800", "email": "s@example.com"}'
    status, reply, _ = await api.request("POST", "/api/v1/signup", data=lone_surrogate,
                                         headers={"Content-Type": "application/json"})
    assert_error(status, reply, 400, "validation_error")
    assert "business_name" in reply["error"]["message"]


@pytest.mark.parametrize("path, params, fragment", [
    ("/api/v1/agents", {"agentid": "x"}, "unknown query parameter 'agentid'"),
    ("/api/v1/events", {"bogus": "1"}, "unknown query parameter 'bogus'"),
    ("/api/v1/leads/audit", {"hot": "90"}, "unknown query parameter 'hot'"),
    ("/api/v1/numbers", {"limit_": "2"}, "unknown query parameter 'limit_'"),
    ("/api/v1/usage", {"page": "2"}, "unknown query parameter 'page'"),
    ("/api/v1/webhooks", {"businessId": "x"}, "unknown query parameter 'businessId'"),
    ("/api/v1/balance", {"x": "1"}, "takes no query parameters"),
    ("/api/v1/agents", {"id": ""}, "id must be a UUID"),
    ("/api/v1/workspaces", {"id": ""}, "id must be a UUID"),
    ("/api/v1/events", {"since": ""}, "since must be an RFC 3339 timestamp"),
    ("/api/v1/usage", {"start": "2026-01-01"}, "start must be an RFC 3339 timestamp"),
    ("/api/v1/leads", {"updated_before": ""}, "updated_before must be an RFC 3339 timestamp"),
    ("/api/v1/webhooks/deliveries", {"event_id": ""}, "event_id must be a UUID"),
    ("/api/v1/agents", {"limit": ["1", "2"]}, "limit was given 2 times"),
])
async def test_query_parameters_are_checked_like_bodies(api, account, path, params, fragment):
    """A typo or an empty value never silently widens a listing (schemathesis found these accepted)."""
    query = [(k, v) for k, values in params.items() for v in (values if isinstance(values, list) else [values])]
    status, body, _ = await api.request("GET", path, key=account["key"], params=query)
    assert_error(status, body, 400, "invalid_request")
    assert fragment in body["error"]["message"], body


async def test_json_that_python_accepts_but_json_forbids_is_refused(api, account):
    for raw in (b'{"name": NaN}', b'{"name": "x", "metadata": {"n": Infinity}}', b'{"name": "x", "metadata": {"n": 1e999}}',
                b'{"name": "x", "metadata": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                # deeper than protobuf decodes Structs (once a 500)
                b'{"name": "x", "metadata": ' + b'{"a": ' * 40 + b"1" + b"}" * 40 + b"}",
                b'{"name": "x", "metadata": ' + b"[" * 200 + b"]" * 200 + b"}"):
        status, body, _ = await api.request("POST", "/api/v1/workspaces", key=account["key"], data=raw,
                                            headers={"Content-Type": "application/json"})
        assert_error(status, body, 400, "invalid_request")


async def test_a_body_may_nest_32_levels(api, account):
    raw = b'{"name": "x", "metadata": ' + b'{"a": ' * 30 + b"1" + b"}" * 30 + b"}"
    status, body, _ = await api.request("POST", "/api/v1/workspaces", key=account["key"], data=raw,
                                        headers={"Content-Type": "application/json"})
    assert status == 201, body
