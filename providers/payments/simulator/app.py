"""The simulator's HTTP application: Stripe's v1 routes with its authentication (the secret key as a Bearer
token, or as the Basic-auth user name, as Stripe accepts), idempotency keys and error shape; the hosted checkout
page; and the test control plane."""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import time
from collections.abc import Mapping
from urllib.parse import parse_qsl

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from providers.payments.simulator.api import REQUEST_ID, Api
from providers.payments.simulator.billing import Billing, Dunning
from providers.payments.simulator.control import Control
from providers.payments.simulator.errors import (
    API_ERROR,
    IDEMPOTENCY,
    INVALID_REQUEST,
    ApiError,
    error_response,
    key_in_use,
    unrecognized,
)
from providers.payments.simulator.events import Events
from providers.payments.simulator.objects import API_VERSION, Catalogue, State, new_id

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
    found = KEY_HEAD.match(key)
    head = found.group(0) if found else ""
    rest = key[len(head):]
    return head + "*" * max(len(rest) - 4, 0) + rest[-4:]


def fingerprint(raw: bytes) -> str:
    params = sorted(parse_qsl(raw.decode(errors="replace"), keep_blank_values=True))
    return hashlib.sha256(repr(params).encode()).hexdigest()


def stripe_middleware(api_key: str, state: State) -> Middleware:
    """Authentication, idempotency keys, Stripe's error shape and headers for `/v1`; pages pass through.

    Idempotency (a POST with `Idempotency-Key`): the answer of a request that began executing is kept for 24
    hours, errors included (a 500, a refusal for an object's state); a request refused before it ran (parameters
    that failed validation) leaves the key unused. The same key again answers the kept result
    (`Idempotent-Replayed: true`, `Original-Request`), or 409 `idempotency_key_in_use` while the first is still
    running; with another endpoint or other parameters it is 400 `idempotency_error`."""

    def authenticated(given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), api_key.encode())

    def refusal(exc: ApiError) -> web.Response:
        return error_response(exc.status, exc.type, exc.message, exc.code, exc.param, decline_code=exc.decline_code)

    async def run(request: web.Request, handler: Handler) -> tuple[web.StreamResponse, bool]:
        """The handler's answer, and whether the endpoint began executing (its answer is kept)."""
        try:
            return await handler(request), True
        except ApiError as exc:
            return refusal(exc), exc.executed
        except (web.HTTPNotFound, web.HTTPMethodNotAllowed):
            return unrecognized(request.method, request.path), False
        except web.HTTPException as exc:  # aiohttp's own refusals (e.g. a body too large)
            return error_response(exc.status, INVALID_REQUEST, exc.reason), False
        except Exception:
            log.exception("%s %s failed", request.method, request.path)
            return error_response(500, API_ERROR, "An unknown error occurred"), True

    async def idempotent(request: web.Request, handler: Handler) -> web.StreamResponse:
        key = request.headers.get("Idempotency-Key")
        if request.method != "POST" or not key:
            return (await run(request, handler))[0]
        if len(key) > 255:
            raise ApiError(400, "Idempotency keys can be at most 255 characters long.", param="Idempotency-Key")
        endpoint, mark, at = f"{request.method} {request.path}", fingerprint(await request.read()), time.time()
        saved = state.idempotency.get(key, at)
        if saved is not None:
            if saved.answer is None:
                raise ApiError(409, key_in_use(key), type_=IDEMPOTENCY, code="idempotency_key_in_use")
            if saved.endpoint != endpoint:
                raise ApiError(400, f"Keys for idempotent requests can only be used for the same endpoint they were "
                                    f"first used for ('{saved.endpoint}' vs '{endpoint}'). Try using a key other than "
                                    f"'{key}' if you meant to execute a different request.", type_=IDEMPOTENCY)
            if saved.fingerprint != mark:
                raise ApiError(400, "Keys for idempotent requests can only be used with the same parameters they "
                                    f"were first used with. Try using a key other than '{key}' if you meant to "
                                    "execute a different request.", type_=IDEMPOTENCY)
            status, body = saved.answer
            return web.Response(status=status, body=body, content_type="application/json",
                                headers={"Idempotent-Replayed": "true", "Original-Request": saved.request_id,
                                         "Idempotency-Key": key})
        saved = state.idempotency.start(key, endpoint, mark, request[REQUEST_ID], at)
        try:
            response, executed = await run(request, handler)
        except BaseException:
            state.idempotency.forget(key)
            raise
        if executed and isinstance(response, web.Response) and isinstance(response.body, bytes):
            saved.answer = (response.status, response.body)
        else:  # never ran: the key stays unused
            state.idempotency.forget(key)
        response.headers["Idempotency-Key"] = key
        response.headers["Original-Request"] = saved.request_id
        return response

    @web.middleware
    async def stripe(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not (request.path == "/v1" or request.path.startswith("/v1/")):
            try:
                return await handler(request)
            except web.HTTPNotFound:
                return web.Response(status=404, text="Not found")
            except web.HTTPMethodNotAllowed:
                return web.Response(status=405, text="Method not allowed")
        request[REQUEST_ID] = new_id("req", 14)
        given = api_key_of(request)
        response: web.StreamResponse
        if not authenticated(given):
            message = f"Invalid API Key provided: {masked(given)}" if given else NO_KEY
            response = error_response(401, INVALID_REQUEST, message,
                                      headers={"WWW-Authenticate": 'Bearer realm="Stripe"'})
        else:
            try:
                response = await idempotent(request, handler)
            except ApiError as exc:
                response = refusal(exc)
        response.headers["Request-Id"] = request[REQUEST_ID]
        response.headers["Stripe-Version"] = request.headers.get("Stripe-Version", API_VERSION)
        return response

    return stripe


def build_app(api_key: str, *, webhook_url: str | None = None, webhook_secret: str | None = None,
              public_url: str = "http://127.0.0.1:8793", time_scale: float = 1.0,
              prices: Mapping[str, tuple[int, str]] | None = None, dunning: Dunning | None = None,
              delivery: str = "ordered") -> web.Application:
    """`public_url`: where browsers reach this server (checkout URLs are made on it); `webhook_url`: where
    events are POSTed, signed with `webhook_secret` (none: events are only recorded); `prices`: the account's
    prices, price id → (monthly amount in cents, product name); `dunning`: the account's retry settings (Stripe's
    defaults); `delivery`: how events go out (`events`)."""
    if not api_key:
        raise ValueError("the simulator needs an API key")
    if webhook_url and not webhook_secret:
        raise ValueError("a webhook URL needs a signing secret (whsec_...)")
    if time_scale < 0:
        raise ValueError("the time scale must not be negative")
    public_url = public_url.rstrip("/")
    state = State(catalogue=Catalogue.of(prices or {}))
    events = Events(webhook_url, webhook_secret, time_scale, delivery)
    billing = Billing(state, events, time_scale, public_url, dunning)
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
