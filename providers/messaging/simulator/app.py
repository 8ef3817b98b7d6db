"""The simulator's HTTP application: Twilio's Messages (with their Media), Account and phone-number routes under `/2010-04-01/Accounts/{AccountSid}`,
its authentication (HTTP Basic with the Account SID and auth token, or with the test credentials when the
simulator has them: `magic`) and its error shape, plus the test control plane."""
from __future__ import annotations

import base64
import hmac
import logging
import re
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from providers.messaging.simulator import errors
from providers.messaging.simulator.control import Control
from providers.messaging.simulator.delivery import Delivery
from providers.messaging.simulator.errors import ApiError, error_response, not_found
from providers.messaging.simulator.inbound import add_inbound_route
from providers.messaging.simulator.magic import check_test_send, forbidden
from providers.messaging.simulator.messages import API_VERSION, Messages, check_send, public, rfc2822
from providers.messaging.simulator.numbers import Numbers
from providers.messaging.simulator.optout import OptOuts

log = logging.getLogger(__name__)

ACCOUNT_SID = re.compile(r"^AC[0-9a-fA-F]{32}$")
ACCOUNTS = f"/{API_VERSION}/Accounts"
MESSAGES = web.AppKey("messages", Messages)
DELIVERY = web.AppKey("delivery", Delivery)
CONTROL = web.AppKey("control", Control)
OPT_OUTS = web.AppKey("opt_outs", OptOuts)
NUMBERS = web.AppKey("numbers", Numbers)
SIGNED_IN = web.RequestKey("account", str)  # the Account SID the request's credentials are


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


def twilio_middleware(credentials: dict[str, str]) -> Middleware:
    """Authentication (any of `credentials`, Account SID -> auth token) and Twilio's error shape for everything
    outside the control plane; the request keeps the Account SID it signed in as."""

    def signed_in(request: web.Request) -> str | None:
        given = credentials_of(request)
        if given is None:
            return None
        found = None
        for sid, token in credentials.items():  # every pair compared, in constant time
            if hmac.compare_digest(given[0].encode(), sid.encode()) & \
                    hmac.compare_digest(given[1].encode(), token.encode()):
                found = sid
        return found

    @web.middleware
    async def twilio(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith("/_simulator/"):
            return await handler(request)
        account = signed_in(request)
        if account is None:
            return error_response(401, errors.AUTHENTICATE, "Authenticate",
                                  headers={"WWW-Authenticate": 'Basic realm="Twilio API"'})
        request[SIGNED_IN] = account
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


def account_resource(account_sid: str, auth_token: str, created: str) -> dict[str, Any]:
    base = f"{ACCOUNTS}/{account_sid}"
    return {"auth_token": auth_token, "date_created": created, "date_updated": created,
            "friendly_name": "Switchboard messaging simulator", "owner_account_sid": account_sid, "sid": account_sid,
            "status": "active", "type": "Full", "uri": f"{base}.json",
            "subresource_uris": {"messages": f"{base}/Messages.json", "balance": f"{base}/Balance.json",
                                 "incoming_phone_numbers": f"{base}/IncomingPhoneNumbers.json"}}


def add_api_routes(router: web.UrlDispatcher, account_sid: str, auth_token: str, messages: Messages,
                   delivery: Delivery, opt_outs: OptOuts, test_messages: Messages | None, numbers: Numbers) -> None:
    created = rfc2822()

    def own_account(request: web.Request, *, test_credentials_allowed: bool = False) -> None:
        """Another account's path is not found (its SID is not ours to see); test credentials reach only what
        Twilio lets them (403 elsewhere)."""
        if request.match_info["account"] != request[SIGNED_IN]:
            raise not_found(request.path)
        if request[SIGNED_IN] != account_sid and not test_credentials_allowed:
            raise forbidden()

    async def send(request: web.Request) -> web.Response:
        own_account(request, test_credentials_allowed=True)
        form = {name: value for name, value in (await request.post()).items() if isinstance(value, str)}
        check_send(form)
        to, from_ = form["To"], form["From"]
        if test_messages is not None and request[SIGNED_IN] == test_messages.account_sid:
            check_test_send(to, from_)  # nothing is sent, kept or called back
            record = test_messages.resource(to=to, from_=from_, body=form["Body"], direction="outbound-api",
                                            status="queued")
            return web.json_response(public(record), status=201)
        if opt_outs.is_blocked(from_, to):
            raise ApiError(400, errors.UNSUBSCRIBED, "Attempt to send to unsubscribed recipient")
        record = messages.create(to=to, from_=from_, body=form["Body"], direction="outbound-api",
                                 status="queued", status_callback=form.get("StatusCallback"))
        log.info("message %s queued (%s segments)", record["sid"], record["num_segments"])
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

    def own_message(request: web.Request, name: str = "sid") -> str:
        own_account(request)
        sid = request.match_info[name]
        if messages.get(sid) is None:
            raise not_found(request.path)
        return sid

    async def update_message(request: web.Request) -> web.Response:
        """A redaction (Body ""), as Twilio documents its Message update; a cancelation (Status) is of scheduled
        messages, which the simulator does not model."""
        sid = own_message(request)
        form = {name: value for name, value in (await request.post()).items() if isinstance(value, str)}
        if "Body" not in form and "Status" not in form:
            raise ApiError(400, errors.INVALID_UPDATE, "Parameters are not valid: Body or Status is required")
        if "Body" in form and "Status" in form:
            raise ApiError(400, errors.INVALID_UPDATE,
                           "Parameters are not valid: a message cannot be canceled and redacted at once")
        if "Status" in form:
            raise ApiError(400, None, "Status applies to scheduled messages, which the simulator does not model")
        if form["Body"]:
            raise ApiError(400, errors.INVALID_UPDATE, "Parameters are not valid: a message body redaction request "
                                                       "must have an empty Body")
        log.info("message %s redacted", sid)
        return web.json_response(public(messages.redact(sid)))

    async def list_media(request: web.Request) -> web.Response:
        return web.json_response(messages.media_page(own_message(request, "message"), request.query))

    async def get_media(request: web.Request) -> web.Response:
        found = messages.media(own_message(request, "message"), request.match_info["sid"])
        if found is None:
            raise not_found(request.path)
        return web.json_response(found)

    async def delete_media(request: web.Request) -> web.Response:
        if not messages.delete_media(own_message(request, "message"), request.match_info["sid"]):
            raise not_found(request.path)
        return web.Response(status=204)

    async def get_account(request: web.Request) -> web.Response:
        own_account(request)
        return web.json_response(account_resource(account_sid, auth_token, created))

    async def search_numbers(request: web.Request) -> web.Response:
        own_account(request)
        return web.json_response(numbers.search(request.match_info["country"], request.query))

    async def buy_number(request: web.Request) -> web.Response:
        own_account(request)
        form = {name: value for name, value in (await request.post()).items() if isinstance(value, str)}
        record = numbers.buy(form)
        log.info("number %s bought (%s)", record["phone_number"], record["sid"])
        return web.json_response(record, status=201)

    async def list_numbers(request: web.Request) -> web.Response:
        own_account(request)
        return web.json_response(numbers.page(request.query))

    async def get_number(request: web.Request) -> web.Response:
        own_account(request)
        record = numbers.get(request.match_info["sid"])
        if record is None:
            raise not_found(request.path)
        return web.json_response(record)

    async def release_number(request: web.Request) -> web.Response:
        own_account(request)
        if numbers.release(request.match_info["sid"]) is None:
            raise not_found(request.path)
        return web.Response(status=204)

    router.add_post(f"{ACCOUNTS}/{{account}}/Messages.json", send)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages.json", list_messages)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages/{{sid}}.json", get_message)
    router.add_post(f"{ACCOUNTS}/{{account}}/Messages/{{sid}}.json", update_message)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages/{{message}}/Media.json", list_media)
    router.add_get(f"{ACCOUNTS}/{{account}}/Messages/{{message}}/Media/{{sid}}.json", get_media)
    router.add_delete(f"{ACCOUNTS}/{{account}}/Messages/{{message}}/Media/{{sid}}.json", delete_media)
    router.add_get(f"{ACCOUNTS}/{{account}}.json", get_account)
    router.add_get(f"{ACCOUNTS}/{{account}}/AvailablePhoneNumbers/{{country}}/Local.json", search_numbers)
    router.add_post(f"{ACCOUNTS}/{{account}}/IncomingPhoneNumbers.json", buy_number)
    router.add_get(f"{ACCOUNTS}/{{account}}/IncomingPhoneNumbers.json", list_numbers)
    router.add_get(f"{ACCOUNTS}/{{account}}/IncomingPhoneNumbers/{{sid}}.json", get_number)
    router.add_delete(f"{ACCOUNTS}/{{account}}/IncomingPhoneNumbers/{{sid}}.json", release_number)


def build_app(account_sid: str, auth_token: str, *, inbound_url: str | None = None, time_scale: float = 1.0,
              opt_out: str = "default", test_account_sid: str | None = None,
              test_auth_token: str | None = None) -> web.Application:
    """`inbound_url`: where inbound texts go when the control plane names no URL; `opt_out`: how the account's
    numbers handle opt-out keywords (optout.HANDLINGS); `test_account_sid` and `test_auth_token`: the test
    credentials (both or neither), whose sends play the magic numbers."""
    for sid in (account_sid, *([test_account_sid] if test_account_sid else [])):
        if not ACCOUNT_SID.match(sid or ""):
            raise ValueError("an account SID must be AC followed by 32 hex digits")
    if not auth_token:
        raise ValueError("the simulator needs an auth token")
    if bool(test_account_sid) != bool(test_auth_token) or test_account_sid == account_sid:
        raise ValueError("test credentials are a test Account SID of their own and a test auth token, both or neither")
    messages = Messages(account_sid)
    test_messages = Messages(test_account_sid) if test_account_sid else None
    delivery = Delivery(messages, auth_token, time_scale)
    opt_outs = OptOuts(opt_out)
    numbers = Numbers(account_sid)
    control = Control(delivery, opt_outs, numbers)
    credentials = {account_sid: auth_token, **({test_account_sid: test_auth_token} if test_account_sid and test_auth_token else {})}
    app = web.Application(middlewares=[control.middleware, twilio_middleware(credentials)])
    app[MESSAGES], app[DELIVERY], app[CONTROL], app[OPT_OUTS] = messages, delivery, control, opt_outs
    app[NUMBERS] = numbers
    control.add_routes(app.router)
    add_inbound_route(app.router, messages, opt_outs, auth_token, inbound_url, numbers)
    add_api_routes(app.router, account_sid, auth_token, messages, delivery, opt_outs, test_messages, numbers)

    async def stop_playing(app: web.Application) -> None:
        for task in list(delivery.tasks):
            task.cancel()

    app.on_shutdown.append(stop_playing)
    return app
