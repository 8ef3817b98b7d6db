"""The simulator's HTTP application: the provider's REST routes over `state.Store`."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from providers.voice.simulator import validation
from providers.voice.simulator.control import PREFIX, Control, error
from providers.voice.simulator.state import Store

# Path segment, store kind and the name the provider uses in "Couldn't Find ..." messages.
RESOURCES = {"assistant": ("assistant", "Assistant"), "phone-number": ("phone-number", "Phone Number"),
             "call": ("call", "Call"), "eval": ("eval", "Eval"), "eval/run": ("eval-run", "Eval Run")}
STORE = web.AppKey("store", Store)


class BadRequest(Exception):
    def __init__(self, messages: list[str]):
        super().__init__("; ".join(messages))
        self.messages = messages


async def body_of(request: web.Request) -> dict:
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise BadRequest(["request body is not valid JSON"]) from None
    if not isinstance(body, dict):
        raise BadRequest(["request body must be an object"])
    return body


class NotFound(Exception):
    """Answered as the provider's 404: {"message": "Couldn't Find <label>", ...}."""


def check(messages: list[str]) -> None:
    if messages:
        raise BadRequest(messages)


def auth_middleware(api_key: str):
    @web.middleware
    async def authenticate(request: web.Request, handler):
        if request.path.startswith(PREFIX):
            return await handler(request)
        if request.headers.get("Authorization") != f"Bearer {api_key}":
            return error(401, "Invalid Key. Hot tip, you may be using the private key instead of the public key, "
                              "or vice versa.")
        try:
            return await handler(request)
        except BadRequest as exc:
            return error(400, exc.messages)
        except NotFound as exc:
            return error(404, str(exc))

    return authenticate


def limit_of(request: web.Request) -> int:
    try:
        return max(1, min(int(request.query.get("limit", "100")), 1000))
    except ValueError:
        raise BadRequest(["limit must be a number"]) from None


# -- per-resource rules ---------------------------------------------------------------------

def check_assistant_ref(store: Store, body: dict) -> None:
    if body.get("assistantId") and store.get("assistant", body["assistantId"]) is None:
        raise BadRequest([f"Couldn't Find Assistant {body['assistantId']}"])


def new_phone_number(store: Store, body: dict) -> dict:
    check(validation.phone_number(body, creating=True))
    check_assistant_ref(store, body)
    if body["provider"] == "vapi":
        area = str(body.get("numberDesiredAreaCode") or "415")
        taken = {r.get("number") for r in store.list("phone-number", limit=10**6)}
        body["number"] = next(f"+1{area}555{n:04d}" for n in range(100, 10000) if f"+1{area}555{n:04d}" not in taken)
    if store.list("phone-number", number=body["number"]):
        raise BadRequest(["Number Already Exists"])
    return {**body, "status": "active"}


def new_call(store: Store, body: dict) -> dict:
    check(validation.call(body))
    check_assistant_ref(store, body)
    if store.get("phone-number", body["phoneNumberId"]) is None:
        raise BadRequest([f"Couldn't Find Phone Number {body['phoneNumberId']}"])
    return {**body, "type": "outboundPhoneCall", "status": "queued"}


def new_eval_run(store: Store, body: dict) -> dict:
    check(validation.eval_run(body))
    check_assistant_ref(store, body["target"])
    if body.get("evalId") and store.get("eval", body["evalId"]) is None:
        raise BadRequest([f"Couldn't Find Eval {body['evalId']}"])
    return {**body, "status": "queued", "startedAt": None, "endedAt": None, "results": []}


CREATE: dict[str, Callable[[Store, dict], dict]] = {
    "assistant": lambda store, body: (check(validation.assistant(body)), body)[1],
    "phone-number": new_phone_number,
    "call": new_call,
    "eval": lambda store, body: (check(validation.eval_(body, creating=True)), body)[1],
    "eval/run": new_eval_run,
}
UPDATE: dict[str, Callable[[Store, dict], None]] = {
    "assistant": lambda store, body: check(validation.assistant(body)),
    "phone-number": lambda store, body: (check(validation.phone_number(body, creating=False)),
                                         check_assistant_ref(store, body)),
    "eval": lambda store, body: check(validation.eval_(body, creating=False)),
}
LIST_FILTERS = {"call": {"assistantId": "assistantId", "phoneNumberId": "phoneNumberId"}}


# -- handlers -------------------------------------------------------------------------------------

def collection_routes(app: web.Application, segment: str) -> None:
    kind, label = RESOURCES[segment]

    def found(request: web.Request) -> dict:
        record = request.app[STORE].get(kind, request.match_info["id"])
        if record is None:
            raise NotFound(f"Couldn't Find {label}")
        return record

    async def create(request: web.Request) -> web.Response:
        store = request.app[STORE]
        fields = CREATE[segment](store, await body_of(request))
        return web.json_response(store.create(kind, fields), status=201)

    async def list_(request: web.Request) -> web.Response:
        filters = {field: request.query[param] for param, field in LIST_FILTERS.get(segment, {}).items()
                   if param in request.query}
        return web.json_response(request.app[STORE].list(kind, limit_of(request), **filters))

    async def get(request: web.Request) -> web.Response:
        return web.json_response(found(request))

    async def update(request: web.Request) -> web.Response:
        record = found(request)
        body = await body_of(request)
        UPDATE[segment](request.app[STORE], body)
        return web.json_response(request.app[STORE].update(kind, record["id"], body,
                                                           nulls_reset=segment == "assistant"))

    async def delete(request: web.Request) -> web.Response:
        record = found(request)
        return web.json_response(request.app[STORE].delete(kind, record["id"]))

    app.router.add_post(f"/{segment}", create)
    app.router.add_get(f"/{segment}", list_)
    app.router.add_get(f"/{segment}/{{id}}", get)
    if segment in UPDATE:
        app.router.add_patch(f"/{segment}/{{id}}", update)
    if segment != "call":
        app.router.add_delete(f"/{segment}/{{id}}", delete)


async def not_found(request: web.Request) -> web.Response:
    return error(404, f"Cannot {request.method} {request.path}")


def build_app(state_dir: Path, api_key: str) -> web.Application:
    control = Control()
    app = web.Application(middlewares=[control.middleware(), auth_middleware(api_key)])
    app[STORE] = Store(state_dir)
    control.add_routes(app)
    for segment in ("eval/run", "assistant", "phone-number", "call", "eval"):  # eval/run before eval/{id}
        collection_routes(app, segment)
    app.router.add_route("*", "/{tail:.*}", not_found)
    return app
