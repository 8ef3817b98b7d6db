"""The local facilitator's HTTP application: the facilitator API as the `x402` package's `HTTPFacilitatorClient`
calls it (`POST /verify`, `POST /settle`, `GET /supported`, JSON in camelCase), served by the package's
`x402Facilitator` with its `exact` EVM scheme over the in-memory `Ledger`, plus the test control plane under
`/_facilitator` (see the package docstring)."""
from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import web
from pydantic import ValidationError
from x402 import x402Facilitator
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme
from x402.schemas import PaymentPayload, PaymentRequirements, SchemeNotFoundError

from providers.simulator_control import ControlPlane, FaultRules, joined
from providers.x402 import (
    DEFAULT_ASSET,
    DEFAULT_ASSET_NAME,
    DEFAULT_ASSET_VERSION,
    DEFAULT_NETWORK,
    SCHEME,
    X402_VERSION,
)
from providers.x402.facilitator.ledger import Ledger
from providers.x402.payload import ADDRESS, UINT, exact_evm_payload_errors

log = logging.getLogger("providers.x402.facilitator")

DEFAULT_START_BALANCE = 1_000_000_000  # 1000 USDC in atomic units
CONTROL = "/_facilitator"
MAX_BODY = 64 * 1024
LEDGER = web.AppKey("ledger", Ledger)
FACILITATOR = web.AppKey("facilitator", x402Facilitator)

# The spec's error codes (x402 v2 section 9) for what the scheme itself does not judge.
INVALID_PAYLOAD = "invalid_payload"
INVALID_REQUIREMENTS = "invalid_payment_requirements"
INVALID_VERSION = "invalid_x402_version"
INVALID_NETWORK = "invalid_network"
UNSUPPORTED_SCHEME = "unsupported_scheme"
UNEXPECTED_VERIFY = "unexpected_verify_error"
UNEXPECTED_SETTLE = "unexpected_settle_error"


class Refused(Exception):
    """A request the facilitator answers without asking the scheme: `status` 400 for a malformed request."""

    def __init__(self, status: int, reason: str, message: str, payer: str | None = None):
        super().__init__(message)
        self.status, self.reason, self.message, self.payer = status, reason, message, payer


# -- the facilitator API ------------------------------------------------------------------------------------


async def json_object(request: web.Request) -> dict[str, Any]:
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise Refused(413, INVALID_PAYLOAD, f"the request body is larger than {MAX_BODY} bytes") from None
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise Refused(400, INVALID_PAYLOAD, "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise Refused(400, INVALID_PAYLOAD, "the request body must be a JSON object")
    return body


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5])


async def read_payment(request: web.Request, network: str) -> tuple[PaymentPayload, PaymentRequirements]:
    """`{"x402Version": 2, "paymentPayload": {...}, "paymentRequirements": {...}}`, checked; raises `Refused`.
    Requirements on another network than the ledger's are `invalid_network` (the package routes every
    `eip155:*` network to the scheme; this facilitator has one chain)."""
    body = await json_object(request)
    version = body.get("x402Version", X402_VERSION)
    raw_payload, raw_requirements = body.get("paymentPayload"), body.get("paymentRequirements")
    if not isinstance(raw_payload, dict):
        raise Refused(400, INVALID_PAYLOAD, "paymentPayload must be an object")
    if version != X402_VERSION or raw_payload.get("x402Version") != X402_VERSION:
        raise Refused(400, INVALID_VERSION, f"only x402Version {X402_VERSION} is served")
    try:
        payload = PaymentPayload.model_validate(raw_payload)
    except ValidationError as exc:
        raise Refused(400, INVALID_PAYLOAD, _validation_message(exc)) from None
    if not isinstance(raw_requirements, dict):
        raise Refused(400, INVALID_REQUIREMENTS, "paymentRequirements must be an object")
    try:
        requirements = PaymentRequirements.model_validate(raw_requirements)
    except ValidationError as exc:
        raise Refused(400, INVALID_REQUIREMENTS, _validation_message(exc)) from None
    if not ADDRESS.match(requirements.pay_to) or not ADDRESS.match(requirements.asset):
        raise Refused(400, INVALID_REQUIREMENTS, "payTo and asset must be addresses (0x and 40 hex digits)")
    if not UINT.match(requirements.amount):
        raise Refused(400, INVALID_REQUIREMENTS, "amount must be a decimal string of atomic units")
    if payload.accepted.scheme == SCHEME:
        errors = exact_evm_payload_errors(payload.payload)
        if errors:
            raise Refused(400, INVALID_PAYLOAD, "; ".join(errors))
    if requirements.network != network:
        raise Refused(200, INVALID_NETWORK, f"this facilitator settles on {network} only", _payer(payload))
    return payload, requirements


def _not_served(exc: SchemeNotFoundError) -> str:
    return INVALID_NETWORK if exc.scheme == SCHEME else UNSUPPORTED_SCHEME


def _payer(payload: PaymentPayload | None) -> str | None:
    auth = (payload.payload or {}).get("authorization") if payload is not None else None
    return auth.get("from") if isinstance(auth, dict) else None


def add_api_routes(router: web.UrlDispatcher, facilitator: x402Facilitator, ledger: Ledger) -> None:

    async def verify(request: web.Request) -> web.Response:
        payload = None
        try:
            payload, requirements = await read_payment(request, ledger.network)
            result = await facilitator.verify(payload, requirements)
        except Refused as exc:
            log.info("verify refused: %s (%s)", exc.reason, exc.message)
            body = {"isValid": False, "invalidReason": exc.reason, "invalidMessage": exc.message}
            return web.json_response({**body, "payer": exc.payer} if exc.payer else body, status=exc.status)
        except SchemeNotFoundError as exc:
            body = {"isValid": False, "invalidReason": _not_served(exc), "invalidMessage": str(exc)}
            return web.json_response({**body, "payer": _payer(payload)} if _payer(payload) else body)
        except Exception:
            log.exception("verify failed")
            return web.json_response({"isValid": False, "invalidReason": UNEXPECTED_VERIFY}, status=500)
        log.info("verify %s: payer %s, %s atomic units to %s%s", "valid" if result.is_valid else "invalid",
                 result.payer, requirements.amount, requirements.pay_to,
                 "" if result.is_valid else f" ({result.invalid_reason})")
        return web.json_response(result.model_dump(by_alias=True, exclude_none=True))

    async def settle(request: web.Request) -> web.Response:
        payload = None

        def failure(reason: str, message: str | None, status: int = 200, payer: str | None = None) -> web.Response:
            network = payload.accepted.network if payload is not None else ledger.network
            body = {"success": False, "errorReason": reason, "transaction": "", "network": network}
            if message:
                body["errorMessage"] = message
            if payer or _payer(payload):
                body["payer"] = payer or _payer(payload)
            return web.json_response(body, status=status)

        try:
            payload, requirements = await read_payment(request, ledger.network)
            result = await facilitator.settle(payload, requirements)
        except Refused as exc:
            log.info("settle refused: %s (%s)", exc.reason, exc.message)
            return failure(exc.reason, exc.message, exc.status, exc.payer)
        except SchemeNotFoundError as exc:
            return failure(_not_served(exc), str(exc))
        except Exception:
            log.exception("settle failed")
            return failure(UNEXPECTED_SETTLE, None, 500)
        if result.success:
            log.info("settled %s: payer %s, %s atomic units to %s", result.transaction, result.payer,
                     requirements.amount, requirements.pay_to)
        else:
            log.info("settle failed: payer %s (%s)", result.payer, result.error_reason)
        return web.json_response(result.model_dump(by_alias=True, exclude_none=True))

    async def supported(request: web.Request) -> web.Response:
        return web.json_response(facilitator.get_supported().model_dump(by_alias=True, exclude_none=True))

    router.add_post("/verify", verify)
    router.add_post("/settle", settle)
    router.add_get("/supported", supported)


# -- the control plane --------------------------------------------------------------------------------------


def refused(messages: list[str] | str, status: int = 400) -> web.Response:
    return web.json_response({"error": joined(messages)}, status=status)


async def control_body(request: web.Request) -> dict[str, Any]:
    """A control-plane body, read as the API reads its own; a refusal is the control plane's 400."""
    try:
        return await json_object(request)
    except Refused as exc:
        raise web.HTTPBadRequest(text=exc.message) from None


def control_plane() -> ControlPlane:
    """The shared faults (`providers.simulator_control`) under `/_facilitator`, without a method (the API's calls
    are one method each) or a request log; a delay-only fault delays the call, then serves it (a slow
    facilitator), or with `hold` "answer" serves it at once and holds back its answer (a settlement that took
    the money though the caller gave up waiting)."""
    return ControlPlane(refused, lambda status: refused(f"injected fault {status}", status), prefix=CONTROL,
                        rules=FaultRules(fields=("status", "times", "path", "delay_seconds", "hold"), reserved=CONTROL),
                        read=control_body, log_route=None)


def add_control_routes(router: web.UrlDispatcher, ledger: Ledger, control: ControlPlane) -> None:

    async def settlements(request: web.Request) -> web.Response:
        return web.json_response(ledger.public())

    async def set_balance(request: web.Request) -> web.Response:
        body = await control_body(request)
        address, balance = body.get("address"), body.get("balance")
        extra = sorted(set(body) - {"address", "balance"})
        if extra:
            return refused([f"property {k} should not exist" for k in extra])
        if not isinstance(address, str) or not ADDRESS.match(address):
            return refused("address must be an address (0x and 40 hex digits)")
        if not isinstance(balance, str) or not UINT.match(balance):
            return refused("balance must be a decimal string of atomic units")
        ledger.set_balance(address, int(balance))
        return web.json_response({"address": address, "balance": balance})

    async def reset(request: web.Request) -> web.Response:
        ledger.reset()
        control.faults.clear()
        return web.json_response({"status": "reset"})

    control.add_routes(router)
    router.add_get(f"{CONTROL}/settlements", settlements)
    router.add_post(f"{CONTROL}/balances", set_balance)
    router.add_post(f"{CONTROL}/reset", reset)


def build_app(*, network: str = DEFAULT_NETWORK, asset: str = DEFAULT_ASSET, asset_name: str = DEFAULT_ASSET_NAME,
              asset_version: str = DEFAULT_ASSET_VERSION, start_balance: int = DEFAULT_START_BALANCE) -> web.Application:
    """A facilitator for `exact` payments in `asset` (an EIP-3009 token whose EIP-712 domain is `asset_name`,
    `asset_version`) on `network` (`eip155:<chain id>`); every address starts with `start_balance` atomic units."""
    if not ADDRESS.match(asset or ""):
        raise ValueError("the asset must be an address (0x and 40 hex digits)")
    ledger = Ledger(network=network, asset=asset, asset_name=asset_name, asset_version=asset_version,
                    start_balance=start_balance)
    facilitator = x402Facilitator()
    facilitator.register([network], ExactEvmFacilitatorScheme(ledger))
    control = control_plane()
    app = web.Application(middlewares=[control.middleware], client_max_size=MAX_BODY)
    app[LEDGER], app[FACILITATOR] = ledger, facilitator
    add_control_routes(app.router, ledger, control)
    add_api_routes(app.router, facilitator, ledger)
    return app
