"""The gateway's edge (security review, issue 36): trusted proxies as CIDR ranges and the refusal to start without
them, the per-address limits of the public routes, the OpenAPI document built once (the providers' status cached:
tests/unit/test_platform_health.py)."""
import json
from ipaddress import ip_network
from pathlib import Path

import pytest
import yaml
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from core import settings as settings_module
from gateway import openapi
from gateway.app import build_app
from gateway.clientip import client_ip
from gateway.publiclimits import AddressLimits, limited_per_address
from gateway.ratelimit import TokenBuckets
from gateway.route_table import all_routes
from tests.unit.fakes import FakeClock, FakeRequest

ROOT = Path(__file__).resolve().parents[2]
CONFIGMAP = ROOT / "deploy" / "k8s" / "base" / "configmap.yaml"


def _settings(monkeypatch, **env) -> settings_module.Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return settings_module.load()


def test_trusted_proxies_take_cidr_ranges(monkeypatch):
    trusted = _settings(monkeypatch, TRUSTED_PROXIES="10.244.0.0/16, 192.0.2.7,2001:db8::/32").trusted_proxies
    assert client_ip(FakeRequest("10.244.3.9", "203.0.113.5, 10.244.1.1"), trusted) == "203.0.113.5"
    assert client_ip(FakeRequest("192.0.2.7", "198.51.100.1"), trusted) == "198.51.100.1"
    assert client_ip(FakeRequest("2001:db8::5", "198.51.100.2"), trusted) == "198.51.100.2"
    assert client_ip(FakeRequest("::ffff:10.244.0.1", "198.51.100.3"), trusted) == "198.51.100.3"  # a dual-stack socket
    # Outside the ranges the header is the client's own say: ignored.
    assert client_ip(FakeRequest("10.245.0.1", "198.51.100.4"), trusted) == "10.245.0.1"
    assert client_ip(FakeRequest("", "198.51.100.4"), trusted) == ""


def test_trusted_proxies_that_are_not_addresses_stop_the_process(monkeypatch):
    with pytest.raises(SystemExit, match=r"TRUSTED_PROXIES: .*ingress.example"):
        _settings(monkeypatch, TRUSTED_PROXIES="10.0.0.0/8,ingress.example")


def test_the_shipped_kubernetes_config_names_the_ingress_range_and_lets_the_gateway_start(monkeypatch):
    data = yaml.safe_load(CONFIGMAP.read_text())["data"]
    assert data["SWITCHBOARD_ENV"] == "production" and data["TRUSTED_PROXIES"]
    configured = _settings(monkeypatch, **data, SWITCHBOARD_SECRET_KEY="x" * 40)
    assert configured.trusted_proxies and all(n.prefixlen < n.max_prefixlen for n in configured.trusted_proxies)
    build_app(configured)  # no SystemExit
    with pytest.raises(SystemExit, match="TRUSTED_PROXIES"):
        build_app(configured.model_copy(update={"trusted_proxies": ()}))
    build_app(configured.model_copy(update={"trusted_proxies": (), "environment": "local"}))  # make run needs none


def test_token_buckets_of_any_period():
    clock = FakeClock()
    hourly = TokenBuckets(2, 3600.0, clock)
    assert hourly.take("a") == hourly.take("a") == 0
    assert hourly.take("a") == pytest.approx(1800.0)
    clock.now += 1800
    assert hourly.take("a") == 0


def test_public_routes_that_check_no_credential_of_their_own_are_limited_per_address():
    limited = {(r.method, r.path) for r in all_routes() if limited_per_address(r)}
    assert {("GET", "/api/v1/openapi.json"), ("GET", "/api/v1/schemas"), ("POST", "/api/v1/signup"),
            ("POST", "/oauth/register"), ("POST", "/oauth/token"), ("POST", "/oauth/revoke"),
            ("GET", "/.well-known/oauth-authorization-server")} <= limited
    assert not limited & {("POST", "/api/v1/providers/sms/inbound"), ("POST", "/api/v1/providers/voice/messages"),
                          ("POST", "/api/v1/providers/payments/events"), ("GET", "/api/v1/recordings/audio"),
                          ("POST", "/api/sdr/runner"), ("GET", "/api/v1/agents")}
    document = openapi.build(all_routes(), "https://switchboard.example.com")
    assert "429" in document["paths"]["/oauth/register"]["post"]["responses"]
    assert "429" in document["paths"]["/api/v1/openapi.json"]["get"]["responses"]


async def _ok(request):
    return web.json_response({"ok": True})


async def test_the_address_limits_answer_429_with_retry_after_per_client():
    clock = FakeClock()
    configured = settings_module.load().model_copy(update={"trusted_proxies": (ip_network("127.0.0.0/8"),),
                                                           "public_rate_limit_per_minute": 3, "oauth_limit_per_hour": 2})
    app = web.Application()
    app.middlewares.append(AddressLimits(configured, all_routes(), clock).middleware())
    for method, path in (("GET", "/api/v1/openapi.json"), ("GET", "/api/v1/agents"), ("POST", "/oauth/register"),
                         ("POST", "/api/v1/providers/sms/inbound"), ("GET", "/healthz"), ("GET", "/oauth/authorize")):
        app.router.add_route(method, path, _ok)
    app.router.add_route("*", "/{tail:.*}", _ok)
    async with TestClient(TestServer(app)) as client:
        async def call(method, path, address):
            async with client.request(method, path, headers={"X-Forwarded-For": address}) as r:
                return r.status, r.headers.get("Retry-After"), await r.json()

        assert [(await call("GET", "/api/v1/openapi.json", "198.51.100.1"))[0] for _ in range(3)] == [200] * 3
        status, retry_after, body = await call("GET", "/nowhere", "198.51.100.1")  # unknown paths count too
        assert status == 429 and retry_after == "20" and body["error"]["code"] == "rate_limited"
        assert "3 requests per minute" in body["error"]["message"]
        assert (await call("GET", "/api/v1/openapi.json", "198.51.100.2"))[0] == 200  # another client
        for method, path in (("GET", "/api/v1/agents"), ("POST", "/api/v1/providers/sms/inbound"),
                             ("GET", "/healthz")):  # keys, signed callbacks, probes: not counted here
            assert [(await call(method, path, "198.51.100.1"))[0] for _ in range(5)] == [200] * 5
        # One subscriber's IPv6 /64 is one client.
        assert [(await call("GET", "/api/v1/schemas", f"2001:db8:1:2::{n}"))[0] for n in range(4)] == [200] * 3 + [429]

        clock.now += 60
        assert [(await call(m, p, "198.51.100.3"))[0] for m, p in (("POST", "/oauth/register"),
                                                                   ("GET", "/oauth/authorize"),
                                                                   ("POST", "/oauth/register"))] == [200, 200, 429]
        clock.now += 60  # the minute's bucket is full again, the hour's is not
        status, retry_after, body = await call("POST", "/oauth/register", "198.51.100.3")
        assert status == 429 and retry_after == "1740" and "2 OAuth client registrations" in body["error"]["message"]
        clock.now += 1800
        assert (await call("POST", "/oauth/register", "198.51.100.3"))[0] == 200


def test_the_openapi_document_is_built_once_per_process(monkeypatch):
    routes, builds = all_routes(), []
    real = openapi.build
    monkeypatch.setattr(openapi, "build", lambda *a: builds.append(a) or real(*a))
    first = openapi.published(routes, "https://a.example")
    again = openapi.published(routes, "https://a.example")
    assert again is first and len(builds) == 1
    assert json.loads(first.body)["servers"] == [{"url": "https://a.example"}]
    assert first.etag.startswith('"') and len(first.etag) == 34

