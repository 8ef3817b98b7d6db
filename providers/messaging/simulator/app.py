"""The simulator's HTTP application: Twilio's Messages and Account routes under `/2010-04-01/Accounts/{AccountSid}`,
its authentication (HTTP Basic with the Account SID and auth token) and its error shape, plus the test control
plane."""
from __future__ import annotations

import base64
import hmac
import logging
import re

from aiohttp import web

from providers.messaging.simulator import errors
from providers.messaging.simulator.control import Control
from providers.messaging.simulator.delivery import Delivery, is_refused
from providers.messaging.simulator.errors import ApiError, error_response, not_found
from providers.messaging.simulator.inbound import add_inbound_route
from providers.messaging.simulator.messages import API_VERSION, Messages, check_send, public, rfc2822

log = logging.getLogger(__name__)

ACCOUNT_SID = re.compile(r"^AC[0-9a-fA-F]{32}$")
ACCOUNTS = f"/{API_VERSION}/Accounts"
MESSAGES = web.AppKey("messages", Messages)
DELIVERY = web.AppKey("delivery", Delivery)
CONTROL = web.AppKey("control", Control)


def credentials_of(request: web.Request) -> tuple[str, str] | None:
    """The login and password of an `Authorization: Basic ...` header, None when there is none to read."""
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        login, colon, password = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return (login, password) if colon else None


def twilio_middleware(account_sid: str, auth_token: str):
    """Authentication and Twilio's error shape for everything outside the control plane."""

    def authenticated(request: web.Request) -> bool:
        given = credentials_of(request)
        if given is None:
            return False
        login_ok = hmac.compare_digest(given[0].encode(), account_sid.encode())
        return hmac.compare_digest(given[1].encode(), auth_token.encode()) and login_ok

    @web.middleware
    async def twilio(request: web.Request, handler):
        if request.path.startswith("/_simulator/"):
            return await handler(request)
        if not authenticated(request):
            return error_response(401, errors.AUTHENTICATE, "Authenticate",
                                  headers={"WWW-Authenticate": 'Basic realm="Twilio API"'})
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(exc.status, exc.code, exc.message)
        except web.HTTPNotFound:
            return error_response(404, errors.NOT_FOUND, f"The requested resource {request.path} was not found")
        except web.HTTPMethodNotAllowed:
            return error_response(405, None, f"Method {request.method} not allowed for {request.path}")
        except web.HTTPException as exc:  # aiohttp's own refusals (e.g. a body too large)
            return error_response(exc.status, None, exc.reason)
        except Exception:
            log.exception("%s %s failed", request.method, request.path)
            return error_response(500, None, "Internal server error")

    return twilio


def account_resource(account_sid: str, auth_token: str, created: str) -> dict:
    base = f"{ACCOUNTS}/{account_sid}"
    return {"auth_token": auth_token, "date_created": created, "date_updated": created,
            "friendly_name": "Switchboard messaging simulator", "owner_account_sid": account_sid, "sid": account_sid,
            "status": "active", "type": "Full", "uri": f"{base}.json",
            "subresource_uris": {"messages": f"{base}/Messages.json", "balance": f"{base}/Balance.json",
                                 "incoming_phone_numbers": f"{base}/IncomingPhoneNumbers.json"}}


def add_api_routes(router: web.UrlDispatcher, account_sid: str, auth_token: str, messages: Messages,
                   delivery: Delivery) -> None:
    created = rfc2822()

    def own_account(request: web.Request) -> None:
        """Another account's path is not found (its SID is not ours to see)."""
        if request.match_info["account"] != account_sid:
            raise not_found(request.path)

    async def send(request: web.Request) -> web.Response:
        own_account(request)
        form = await request.post()
        check_send(form)
        to = form["To"]
        if is_refused(to):
            raise ApiError(400, errors.INVALID_TO, f"The 'To' number {to} is not a valid phone number.")
        record = messages.create(to=to, from_=form["From"], body=form["Body"], direction="outbound-api",
                                 status="queued", status_callback=form.get("StatusCallback"))
        log.info("message %s queued (To ending %s, %s segments)", record["sid"], to[-4:], record["num_segments"])
        delivery.start(record["sid"])
        return web.json_response(public(record), status=201)

    async def list_messages(request: web.Request) -> web.Response:
        own_account(request)
        return web.json_response(messages.page(request.query))

    async def get_message(request: web.Request) -> web.Response:
        own_account(request)
        record = messages.get(request.match_info["sid"])
        if record is None:
            raise not_found(request.path)
        return web.json_response(public(record))

    async def get_account(request: web.Request) -> web.Response:
        own_account(request)
        return web.json_response(account_resource(account_sid, auth_token, created))

    router.add_post(f"{ACCOUNTS}/{{account}}/Messages.json", send)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages.json", list_messages)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages/{{sid}}.json", get_message)
    router.add_get(f"{ACCOUNTS}/{{account}}.json", get_account)


def build_app(account_sid: str, auth_token: str, *, inbound_url: str | None = None,
              time_scale: float = 1.0) -> web.Application:
    """`inbound_url`: where inbound texts go when the control plane names no URL."""
    if not ACCOUNT_SID.match(account_sid or ""):
        raise ValueError("the account SID must be AC followed by 32 hex digits")
    if not auth_token:
        raise ValueError("the simulator needs an auth token")
    messages = Messages(account_sid)
    delivery = Delivery(messages, auth_token, time_scale)
    control = Control(delivery)
    app = web.Application(middlewares=[control.middleware, twilio_middleware(account_sid, auth_token)])
    app[MESSAGES], app[DELIVERY], app[CONTROL] = messages, delivery, control
    control.add_routes(app.router)
    add_inbound_route(app.router, messages, auth_token, inbound_url)
    add_api_routes(app.router, account_sid, auth_token, messages, delivery)

    async def stop_playing(app: web.Application) -> None:
        for task in list(delivery.tasks):
            task.cancel()

    app.on_shutdown.append(stop_playing)
    return app
