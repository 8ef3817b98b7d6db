"""The simulator's HTTP application: the provider's REST routes over the resource collections, its
authentication (`Authorization: Bearer <key>`) and its error shape, plus the test control plane."""
from __future__ import annotations

import hmac
import json
import logging
import os
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from providers.simulator_control import PREFIX, ControlPlane, FaultRules
from providers.voice.vapi.simulator.dialogue import caller_errors
from providers.voice.vapi.simulator.errors import INVALID_KEY, ApiError, bad_request, error_response
from providers.voice.vapi.simulator.evals import RUN_LIMIT_DEFAULT, EvalRunner, Paginated, eval_collections
from providers.voice.vapi.simulator.judges import Judges
from providers.voice.vapi.simulator.playback import OUTCOMES, Playback, Script
from providers.voice.vapi.simulator.resources import LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, Collection, collections
from providers.voice.vapi.simulator.state import Store

log = logging.getLogger(__name__)

STORE = web.AppKey("store", Store)
CONTROL = web.AppKey("control", ControlPlane)
COLLECTIONS = web.AppKey("collections", dict)  # kind -> Collection
EVAL_RUNNER = web.AppKey("eval_runner", EvalRunner)
INJECTED_RETRY_AFTER = "1"  # seconds, on an injected 429


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise bad_request(["request body is not valid JSON"]) from None
    if not isinstance(body, dict):
        raise bad_request(["request body must be an object"])
    return body


def limit_of(request: web.Request) -> int:
    raw = request.query.get("limit")
    if raw is None:
        return LIST_LIMIT_DEFAULT
    try:
        limit = float(raw)
    except ValueError:
        raise bad_request(["limit must be a number"]) from None
    if not 0 <= limit <= LIST_LIMIT_MAX:
        raise bad_request([f"limit must not be less than 0 or greater than {LIST_LIMIT_MAX}"])
    return int(limit)


def page_query(request: web.Request) -> tuple[int, str]:
    """`page` (from 1) and `sortOrder` (ASC or DESC, default DESC) of a paginated list."""
    errors, page = [], 1
    if "page" in request.query:
        try:
            page = int(float(request.query["page"]))
        except ValueError:
            page = 0
        if page < 1:
            errors.append("page must not be less than 1")
    order = request.query.get("sortOrder", "DESC")
    if order not in ("ASC", "DESC"):
        errors.append("sortOrder must be one of the following values: ASC, DESC")
    if errors:
        raise bad_request(errors)
    return page, order


def provider_middleware(api_key: str) -> Middleware:
    """Authentication and the provider's error shape for everything outside the control plane."""
    expected = f"Bearer {api_key}".encode()

    @web.middleware
    async def provider(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith(("/_simulator/", "/recording/")):  # recordings: storage, not the API
            return await handler(request)
        if not hmac.compare_digest(request.headers.get("Authorization", "").encode(), expected):
            return error_response(401, INVALID_KEY)
        try:
            return await handler(request)
        except ApiError as exc:
            return error_response(exc.status, exc.message, exc.headers)
        except web.HTTPException as exc:  # aiohttp's own refusals (e.g. a body too large)
            return error_response(exc.status, exc.reason)
        except Exception:
            log.exception("%s %s failed", request.method, request.path)
            return error_response(500, "Internal server error")

    return provider


def add_collection_routes(router: web.UrlDispatcher, collection: Collection) -> None:
    base = f"/{collection.segment}"

    async def create(request: web.Request) -> web.Response:
        return web.json_response(collection.create(await json_body(request)), status=201)

    async def list_(request: web.Request) -> web.Response:
        filters = {name: request.query[name] for name in collection.filters if name in request.query}
        if isinstance(collection, Paginated):
            limit = limit_of(request)
            page, sort_order = page_query(request)
            return web.json_response(collection.page(page, limit, sort_order, **filters))
        return web.json_response(collection.list(limit_of(request), **filters))

    async def get(request: web.Request) -> web.Response:
        return web.json_response(collection.get(request.match_info["id"]))

    async def update(request: web.Request) -> web.Response:
        return web.json_response(collection.update(request.match_info["id"], await json_body(request)))

    async def delete(request: web.Request) -> web.Response:
        return web.json_response(collection.delete(request.match_info["id"], await json_body(request)))

    handlers = {"create": ("POST", base, create), "list": ("GET", base, list_),
                "get": ("GET", f"{base}/{{id}}", get), "update": ("PATCH", f"{base}/{{id}}", update),
                "delete": ("DELETE", f"{base}/{{id}}", delete)}
    for operation, (method, path, handler) in handlers.items():
        if operation in collection.operations:
            router.add_route(method, path, handler)


SCRIPT_FIELDS = frozenset({"outcome", "duplicate", "reorder", "silent", "timestamp_ms", "legacy_recording",
                           "declines_recording", "caller", "times"})
SCRIPT_FLAGS = ("duplicate", "reorder", "silent", "timestamp_ms", "legacy_recording", "declines_recording")


def add_playback_routes(router: web.UrlDispatcher, playback: Playback) -> None:
    """Control plane: how the next calls play (see playback)."""

    async def add(request: web.Request) -> web.Response:
        body = await json_body(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - SCRIPT_FIELDS)]
        if body.get("outcome") is not None and body["outcome"] not in OUTCOMES:
            errors.append(f"outcome must be one of {', '.join(OUTCOMES)}")
        errors += [f"{k} must be a boolean" for k in SCRIPT_FLAGS if k in body and not isinstance(body[k], bool)]
        if "times" in body and not (isinstance(body["times"], int) and not isinstance(body["times"], bool)
                                    and body["times"] >= 1):
            errors.append("times must be a positive integer")
        if body.get("caller") is not None:
            errors += caller_errors(body["caller"])
        if errors:
            return error_response(400, errors)
        script = Script(**{k: body[k] for k in SCRIPT_FIELDS if k in body})
        playback.scripts.append(script)
        return web.json_response({"script": script.__dict__}, status=201)

    async def clear(request: web.Request) -> web.Response:
        cleared = len(playback.scripts)
        playback.scripts.clear()
        return web.json_response({"cleared": cleared})

    async def inbound(request: web.Request) -> web.Response:
        """Ring one of the org's numbers from a caller: `{"to", "from", "outcome"?, "forward_pickup"?, "caller"?}`
        (forward_pickup: whether the forward-to phone of a ring-first number picks up; caller: what the caller
        says, see `dialogue`)."""
        body = await json_body(request)
        errors = [f"property {k} should not exist" for k in sorted(set(body) - {"to", "from", "outcome",
                                                                                 "forward_pickup", "caller"})]
        errors += [f"{k} must be an E.164 string" for k in ("to", "from")
                   if not (isinstance(body.get(k), str) and body[k].startswith("+"))]
        if body.get("outcome") is not None and body["outcome"] not in OUTCOMES:
            errors.append(f"outcome must be one of {', '.join(OUTCOMES)}")
        if body.get("forward_pickup") is not None and not isinstance(body["forward_pickup"], bool):
            errors.append("forward_pickup must be a boolean")
        if body.get("caller") is not None:
            errors += caller_errors(body["caller"])
        if errors:
            return error_response(400, errors)
        numbers = playback.store.list("phone-number", 1, number=body["to"])
        if not numbers:
            return error_response(404, "Couldn't Find Phone Number")
        return web.json_response(await playback.ring(numbers[0], body["from"], body.get("outcome"),
                                                     body.get("forward_pickup"), body.get("caller")), status=201)

    router.add_post(f"{PREFIX}/playback", add)
    router.add_delete(f"{PREFIX}/playback", clear)
    router.add_post(f"{PREFIX}/inbound", inbound)


def recording_route(folder: Path) -> Handler:
    """Recordings as the provider's storage serves them: at an unguessable URL, without authentication,
    with Range requests (aiohttp's FileResponse answers them)."""

    async def recording(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        path = folder / name
        if not name.endswith(".wav") or "/" in name or not path.is_file():
            return error_response(404, "Recording not found")
        return web.FileResponse(path, headers={"Content-Type": "audio/wav"})

    return recording


def add_eval_run_routes(router: web.UrlDispatcher, runner: EvalRunner) -> None:
    """`GET {PREFIX}/eval-runs/in-flight`: the runs in flight now and the most at once since the last
    `DELETE` of it (which resets that peak to the runs in flight now); a test reads its client's concurrency."""

    async def read(request: web.Request) -> web.Response:
        return web.json_response({"in_flight": runner.in_flight(), "peak": runner.peak})

    async def reset(request: web.Request) -> web.Response:
        runner.peak = runner.in_flight()
        return web.json_response({"in_flight": runner.peak, "peak": runner.peak})

    router.add_get(f"{PREFIX}/eval-runs/in-flight", read)
    router.add_delete(f"{PREFIX}/eval-runs/in-flight", reset)


async def _stop_eval_runs(app: web.Application) -> None:
    await app[EVAL_RUNNER].close()


async def _save_store(app: web.Application) -> None:
    app[STORE].flush()


async def unknown_route(request: web.Request) -> web.Response:
    raise ApiError(404, f"Cannot {request.method} {request.path}")


def injected(status: int) -> web.Response:
    """An injected fault in the provider's error shape; a 429 says `Retry-After: 1`."""
    return error_response(status, "Injected fault", {"Retry-After": INJECTED_RETRY_AFTER} if status == 429 else None)


def control_plane() -> ControlPlane:
    """Faults and the request log (`/_simulator/requests`) in the provider's error shape; PATCH faults too, as
    the API updates with PATCH; a fault may stay until cleared (`times` null: an outage, as the soak injects); a
    delay-only fault delays the request, then serves it."""
    return ControlPlane(lambda messages, status: error_response(status, messages), injected,
                        rules=FaultRules(methods=("*", "GET", "POST", "PATCH", "PUT", "DELETE"), until_cleared=True),
                        log_route="/requests")


def eval_run_limit_from_env() -> int:
    raw = os.environ.get("VOICE_SIM_EVAL_RUN_LIMIT") or str(RUN_LIMIT_DEFAULT)
    try:
        limit = int(raw)
    except ValueError:
        raise ValueError(f"VOICE_SIM_EVAL_RUN_LIMIT must be a whole number, not {raw!r}") from None
    if limit < 0:
        raise ValueError("VOICE_SIM_EVAL_RUN_LIMIT must not be negative")
    return limit


def build_app(state_dir: Path, api_key: str, time_scale: float = 1.0, public_url: str = "", *,
              eval_run_limit: int | None = None, judge_url: str | None = None,
              transfer_fallback: bool | None = None) -> web.Application:
    """`public_url`: where this server is reached (recording URLs point at it). `eval_run_limit`: eval runs in
    flight at once (None: VOICE_SIM_EVAL_RUN_LIMIT, default 10); `judge_url`: the chat-completions judge of
    ai judge plans (None: EVAL_JUDGE_URL; unset: the deterministic rubric reader; see `judges`);
    `transfer_fallback`: the organization's transfer-outcome detection and fallback (None:
    VOICE_SIM_TRANSFER_FALLBACK, default off, as an organization is until it enables it)."""
    if not api_key:
        raise ValueError("the simulator needs an API key")
    control = control_plane()
    app = web.Application(middlewares=[control.middleware, provider_middleware(api_key)])
    app[STORE] = store = Store(Path(state_dir), float(os.environ.get("VOICE_SIM_SAVE_SECONDS") or 1.0))
    app[CONTROL] = control
    judges = Judges(judge_url if judge_url is not None else os.environ.get("EVAL_JUDGE_URL"),
                    os.environ.get("EVAL_JUDGE_API_KEY"))
    runner = EvalRunner(store, time_scale, eval_run_limit_from_env() if eval_run_limit is None else eval_run_limit,
                        judges)
    runner.abort_unfinished()
    app[EVAL_RUNNER] = runner
    app.on_cleanup.append(_stop_eval_runs)
    app.on_cleanup.append(_save_store)  # after the eval runs stopped: they may change it
    app[COLLECTIONS] = by_kind = {**collections(store), **eval_collections(store, runner)}
    if transfer_fallback is None:
        transfer_fallback = os.environ.get("VOICE_SIM_TRANSFER_FALLBACK", "").lower() in ("1", "true", "yes")
    recordings = Path(state_dir) / "recordings"
    playback = Playback(store, time_scale, recordings, public_url.rstrip("/"), transfer_fallback)
    by_kind["call"].after_create = playback.start
    by_kind["call"].after_delete = playback.forget
    control.add_routes(app.router)
    add_playback_routes(app.router, playback)
    add_eval_run_routes(app.router, runner)
    app.router.add_get("/recording/{name}", recording_route(recordings))
    # Longest segments first, so /eval/run is not taken for /eval/{id}.
    for collection in sorted(by_kind.values(), key=lambda c: -len(c.segment)):
        add_collection_routes(app.router, collection)
    app.router.add_route("*", "/{tail:.*}", unknown_route)
    return app
