"""The simulator's HTTP application: Stripe's v1 routes with its authentication (the secret key as a Bearer
token, or as the Basic-auth user name, as Stripe accepts), idempotency keys and error shape; the hosted checkout
page; and the test control plane."""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
from urllib.parse import parse_qsl

from aiohttp import web

from providers.payments.simulator.api import REQUEST_ID, Api
from providers.payments.simulator.billing import Billing
from providers.payments.simulator.control import Control
from providers.payments.simulator.errors import (
    API_ERROR,
    IDEMPOTENCY,
    INVALID_REQUEST,
    ApiError,
    error_response,
    unrecognized,
)
from providers.payments.simulator.events import Events
from providers.payments.simulator.objects import API_VERSION, State, new_id

log = logging.getLogger(__name__)

STATE = web.AppKey("state", State)
EVENTS = web.AppKey("events", Events)
BILLING = web.AppKey("billing", Billing)
CONTROL = web.AppKey("control", Control)
KEY_HEAD = re.compile(r"^(?:(?:sk|rk|pk)_(?:test|live)_)?")
NO_KEY = ("You did not provide an API key. You need to provide your API key in the Authorization header, using "
          "Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication "
          "for details, or we can help at https://support.stripe.com/.")


def api_key_of(request: web.Request) -> str | None:
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return value.strip() or None
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip(), validate=True).decode().partition(":")[0] or None
        except (ValueError, UnicodeDecodeError):
            return None
    return None


def masked(key: str) -> str:
    """A key as Stripe quotes it back: its prefix and last four characters."""
    head = KEY_HEAD.match(key).group(0)
    rest = key[len(head):]
    return head + "*" * max(len(rest) - 4, 0) + rest[-4:]


def fingerprint(request: web.Request, raw: bytes) -> str:
    params = sorted(parse_qsl(raw.decode(errors="replace"), keep_blank_values=True))
    return hashlib.sha256(repr((request.method, request.path, params)).encode()).hexdigest()


def stripe_middleware(api_key: str, state: State):
    """Authentication, idempotency keys, Stripe's error shape and headers for `/v1`; pages pass through."""

    def authenticated(given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), api_key.encode())

    async def idempotent(request: web.Request, handler) -> web.StreamResponse:
        key = request.headers.get("Idempotency-Key")
        if request.method != "POST" or not key:
            return await handler(request)
        if len(key) > 255:
            raise ApiError(400, "Idempotency keys can be at most 255 characters long.", param="Idempotency-Key")
        mark = fingerprint(request, await request.read())
        saved = state.idempotency.get(key)
        if saved is not None:
            if saved[0] != mark:
                raise ApiError(400, "Keys for idempotent requests can only be used with the same parameters they "
                                    f"were first used with. Try using a key other than '{key}' if you meant to "
                                    "execute a different request.", type_=IDEMPOTENCY)
            return web.Response(status=saved[1], body=saved[2], content_type="application/json",
                                headers={"Idempotent-Replayed": "true", "Idempotency-Key": key})
        response = await handler(request)
        if 200 <= response.status < 300 and isinstance(response, web.Response):  # refusals are not saved
            state.idempotency[key] = (mark, response.status, response.body)
            response.headers["Idempotency-Key"] = key
        return response

    @web.middleware
    async def stripe(request: web.Request, handler):
        if not (request.path == "/v1" or request.path.startswith("/v1/")):
            try:
                return await handler(request)
            except web.HTTPNotFound:
                return web.Response(status=404, text="Not found")
            except web.HTTPMethodNotAllowed:
                return web.Response(status=405, text="Method not allowed")
        request[REQUEST_ID] = new_id("req", 14)
        given = api_key_of(request)
        if not authenticated(given):
            message = f"Invalid API Key provided: {masked(given)}" if given else NO_KEY
            response = error_response(401, INVALID_REQUEST, message,
                                      headers={"WWW-Authenticate": 'Bearer realm="Stripe"'})
        else:
            try:
                response = await idempotent(request, handler)
            except ApiError as exc:
                response = error_response(exc.status, exc.type, exc.message, exc.code, exc.param)
            except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
                response = unrecognized(request.method, request.path)
            except web.HTTPException as exc:  # aiohttp's own refusals (e.g. a body too large)
                response = error_response(exc.status, INVALID_REQUEST, exc.reason)
            except Exception:
                log.exception("%s %s failed", request.method, request.path)
                response = error_response(500, API_ERROR, "An unknown error occurred")
        response.headers["Request-Id"] = request[REQUEST_ID]
        response.headers["Stripe-Version"] = request.headers.get("Stripe-Version", API_VERSION)
        return response

    return stripe


def build_app(api_key: str, *, webhook_url: str | None = None, webhook_secret: str | None = None,
              public_url: str = "http://127.0.0.1:8793", time_scale: float = 1.0) -> web.Application:
    """`public_url`: where browsers reach this server (checkout URLs are made on it); `webhook_url`: where
    events are POSTed, signed with `webhook_secret` (none: events are only recorded)."""
    if not api_key:
        raise ValueError("the simulator needs an API key")
    if webhook_url and not webhook_secret:
        raise ValueError("a webhook URL needs a signing secret (whsec_...)")
    if time_scale < 0:
        raise ValueError("the time scale must not be negative")
    public_url = public_url.rstrip("/")
    state = State()
    events = Events(webhook_url, webhook_secret, time_scale)
    billing = Billing(state, events, time_scale, public_url)
    control = Control(state, events, billing)
    app = web.Application(middlewares=[control.middleware, stripe_middleware(api_key, state)])
    app[STATE], app[EVENTS], app[BILLING], app[CONTROL] = state, events, billing, control
    control.add_routes(app.router)
    Api(state, events, billing, public_url).add_routes(app.router)

    async def stop(app: web.Application) -> None:
        billing.stop()
        await events.close()

    app.on_shutdown.append(stop)
    return app
