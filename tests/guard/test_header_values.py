"""Header and form values that are not ASCII, on every route of the table and every dashboard page: never a 500.

The fuzzer (test_openapi_fuzz) draws header values from ASCII only, and most headers the gateway reads are not in
the published document (providers' signatures, the session cookie, X-Forwarded-For...): these cases are generated
here instead, from the route table, the dashboard's routes and the headers the gateway's parts read. Each value is
UTF-8 followed by a byte that is not (aiohttp hands such bytes on as surrogates, which `.encode()` and protobuf
refuse, and `hmac.compare_digest` refuses any `str` that is not ASCII).
"""
from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from gateway.route import CSRF_HEADER
from gateway.route_table import all_routes
from providers.messaging.signatures import SIGNATURE_HEADER as SMS_SIGNATURE_HEADER
from providers.payments.webhooks import SIGNATURE_HEADER as PAYMENT_EVENT_SIGNATURE_HEADER
from providers.voice.vapi.server_messages import AUTH_HEADERS as VOICE_AUTH_HEADERS
from providers.x402 import PAYMENT_SIGNATURE_HEADER

NOT_ASCII = b"caf\xc3\xa9\xff"
# What the gateway's parts read besides each route's declared headers.
READ_HEADERS = ("Authorization", "X-Forwarded-For", "Origin", "Sec-Fetch-Site", "MCP-Protocol-Version", "Range",
                "traceparent", "Idempotency-Key", CSRF_HEADER, SMS_SIGNATURE_HEADER, PAYMENT_EVENT_SIGNATURE_HEADER,
                PAYMENT_SIGNATURE_HEADER, *VOICE_AUTH_HEADERS)
SESSION_COOKIE = "sb_session"  # the embedded stack's public URL is http (gateway.dashboard.session_cookie)
DASHBOARD_FORMS = ("/dashboard/sign-in", "/dashboard/login?token=x", "/dashboard/logout", "/oauth/authorize",
                   "/dashboard/connections/revoke")
DASHBOARD_PAGES = ("/dashboard", "/dashboard/login?token=x", "/oauth/authorize", "/dashboard/connections")


async def status_of(port: int, method: str, path: str, headers: dict[str, bytes], body: bytes = b"") -> int:
    """The status of a request written byte for byte (HTTP clients refuse to send such values)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n").encode()
    writer.write(head + b"".join(n.encode() + b": " + v + b"\r\n" for n, v in headers.items()) + b"\r\n" + body)
    try:
        return int((await reader.readline()).split()[1])
    finally:
        writer.close()


def cases():
    for route in all_routes():
        body = b"{}" if route.body is not None or route.own_body is not None else b""
        json = {"Content-Type": b"application/json"} if body else {}
        for name in dict.fromkeys((*READ_HEADERS, *(route.headers or {}))):
            yield route.method, route.path, {**json, name: NOT_ASCII}, body
        yield route.method, route.path, {**json, "Cookie": SESSION_COOKIE.encode() + b"=" + NOT_ASCII}, body
    form = {"Content-Type": b"application/x-www-form-urlencoded", "Cookie": SESSION_COOKIE.encode() + b"=" + NOT_ASCII}
    for path in DASHBOARD_FORMS:
        yield "POST", path, form, b"form_token=caf%C3%A9%FF&email=%C3%A9%FF&id=%FF&everywhere=1"
        for name in READ_HEADERS:
            yield "POST", path, {**form, name: NOT_ASCII}, b"form_token=x"
    for path in DASHBOARD_PAGES:
        for name in ("Cookie", *READ_HEADERS):
            value = SESSION_COOKIE.encode() + b"=" + NOT_ASCII if name == "Cookie" else NOT_ASCII
            yield "GET", path, {name: value}, b""


async def test_values_that_are_not_ascii_never_break_a_route(stack):
    port = urlsplit(stack.base_url).port
    limit = asyncio.Semaphore(8)

    async def outcome(method, path, headers, body):
        async with limit:
            return method, path, list(headers), await status_of(port, method, path, headers, body)

    results = await asyncio.gather(*(outcome(*case) for case in cases()))
    broken = [r for r in results if r[3] >= 500]
    assert not broken, f"{len(broken)} of {len(results)} answered 5xx, e.g. {broken[:10]}"
