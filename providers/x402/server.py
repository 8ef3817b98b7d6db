"""The resource-server side of x402 v2: what our API calls to ask for a payment and to take it.

`X402Gate` is built on the `x402` package's framework-neutral core: `x402ResourceServer` (requirements, the
`PaymentRequired` response, matching a payment to the requirements, verify and settle with their hooks) with the
`exact` EVM server scheme, and the package's async `HTTPFacilitatorClient` (httpx) to reach the facilitator.
The package's one blocking call, the resource server's `initialize()` fetching `GET /supported` with a sync
client, is not made: the gate fetches `/supported` asynchronously and hands it over (`_Facilitator`).

The flow of a paid request (the API's statuses in brackets):

    required = await gate.requirements("49000000", url, "Switchboard Starter, first month")
    no PAYMENT-SIGNATURE header   -> [402] PAYMENT-REQUIRED: gate.encode_required(required), body
                                     gate.required_body(required)
    verified = await gate.verify(header, required)   # MalformedPayment [400] / PaymentRefused [402 with fresh
    ... create the account ...                        # requirements, error = .reason] / FacilitatorUnavailable
    settled = await gate.settle(verified)             # [503]; PaymentRefused from settle carries the failed
    -> [200] PAYMENT-RESPONSE: settled.response_header  # PAYMENT-RESPONSE in .response_header

`verify_and_settle(header, required)` does both. Every facilitator call is bounded by `timeout` (settle by twice
that: the package resends a settle once when the facilitator answers `settlement_pending`). A
`FacilitatorUnavailable` from `settle` leaves the outcome unknown (the transfer may have happened): a repeated
settle of the same payment is refused with `invalid_exact_evm_nonce_already_used` if it did."""
from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import ValidationError
from x402 import x402ResourceServer
from x402.http import encode_payment_required_header, encode_payment_response_header
from x402.http.facilitator_client import FacilitatorConfig, FacilitatorResponseError, HTTPFacilitatorClient
from x402.mechanisms.evm.exact import ExactEvmServerScheme
from x402.schemas import (
    AssetAmount,
    FacilitatorCapabilityError,
    PaymentPayload,
    PaymentRequired,
    PaymentRequirements,
    ResourceConfig,
    ResourceInfo,
    SchemeNotFoundError,
    SupportedKind,
    SupportedResponse,
)

from core.uow import forbid_provider_call
from providers.x402 import (
    DEFAULT_ASSET,
    DEFAULT_ASSET_NAME,
    DEFAULT_ASSET_VERSION,
    DEFAULT_NETWORK,
    SCHEME,
    X402_VERSION,
)
from providers.x402.payload import ADDRESS, UINT, exact_evm_payload_errors

log = logging.getLogger(__name__)

MAX_HEADER_CHARS = 16 * 1024
# The spec's code for a payment whose `accepted` terms are none of ours (the package's HTTP server says
# "No matching payment requirements" in the new 402).
NO_MATCHING_REQUIREMENTS = "invalid_payment_requirements"
NO_MATCHING_MESSAGE = "No matching payment requirements"


class X402Error(Exception):
    """Base of the gate's errors; `message` is safe to show the payer."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class MalformedPayment(X402Error):
    """The `PAYMENT-SIGNATURE` header is not base64 of a JSON x402 v2 `PaymentPayload` of the right shape
    (the API answers 400)."""


class PaymentRefused(X402Error):
    """The payment was refused: it matches none of the requirements, the facilitator found it invalid, or its
    settlement failed (the API answers 402 with fresh requirements whose `error` is `reason`).

    `reason`: the protocol's code (e.g. `invalid_exact_evm_payload_signature`,
    `invalid_exact_evm_nonce_already_used`); `payer`: the paying address when known; `response_header`: the
    `PAYMENT-RESPONSE` value of a failed settlement (None when verification refused it)."""

    def __init__(self, reason: str, message: str | None = None, *, payer: str | None = None,
                 response_header: str | None = None):
        super().__init__(message or reason)
        self.reason = reason
        self.payer = payer
        self.response_header = response_header

    def __repr__(self) -> str:
        return f"PaymentRefused({self.reason!r}, payer={self.payer!r})"


class FacilitatorUnavailable(X402Error):
    """The facilitator could not be reached, timed out, answered 5xx (or 408/429, or a 4xx with no x402 reason,
    e.g. refused credentials), answered something that is not the protocol's, or does not serve our scheme
    and network (the API answers 503). `status`: its HTTP status when it answered."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Verified:
    """A payment the facilitator found valid, with the requirements it matched; hand it to `settle`.

    `stored()` and `from_stored()` keep it (as JSON) so a settlement whose answer was lost can be asked for again:
    the `exact` scheme's authorization pays once, so settling it again either takes it now or is refused with
    `invalid_exact_evm_nonce_already_used` when an earlier settlement took it."""
    payload: PaymentPayload
    requirements: PaymentRequirements
    payer: str

    @property
    def nonce(self) -> str | None:
        """The authorization's nonce (with `payer`, what makes the payment one of a kind)."""
        return nonce_of(self.payload)

    @property
    def valid_before(self) -> int | None:
        """Unix seconds after which the authorization can no longer be settled."""
        authorization = self.payload.payload.get("authorization")
        value = authorization.get("validBefore") if isinstance(authorization, dict) else None
        return int(value) if isinstance(value, (str, int)) and UINT.match(str(value)) else None

    def stored(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return (self.payload.model_dump(mode="json", by_alias=True, exclude_none=True),
                self.requirements.model_dump(mode="json", by_alias=True, exclude_none=True))

    @classmethod
    def from_stored(cls, payload: dict[str, Any], requirements: dict[str, Any], payer: str) -> Verified:
        return cls(PaymentPayload.model_validate(payload), PaymentRequirements.model_validate(requirements), payer)


@dataclass(frozen=True)
class Settled:
    """A settled payment. `response_header`: the base64 `PAYMENT-RESPONSE` value (a `SettleResponse`)."""
    transaction: str
    payer: str
    network: str
    amount: str
    response_header: str


class _Answered(Exception):
    """Raised from the httpx response hook: the facilitator answered something other than 200."""

    def __init__(self, status: int, body: bytes):
        super().__init__(f"the facilitator answered {status}")
        self.status, self.body = status, body


async def _outside_transactions(_request: httpx.Request) -> None:
    """httpx request hook: no facilitator call while a unit of work is open (core.uow)."""
    forbid_provider_call("the x402 facilitator")


async def _raise_on_error(response: httpx.Response) -> None:
    """httpx response hook (it also sees redirects, which it then follows): a 4xx or 5xx is `_Answered`."""
    if response.status_code >= 400:
        await response.aread()
        raise _Answered(response.status_code, response.content)


def _refusal_in(body: bytes) -> tuple[str, str | None, str | None] | None:
    """(reason, message, payer) of a 4xx body in the protocol's shape (`invalidReason` or `errorReason`)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    reason = data.get("invalidReason") or data.get("errorReason")
    if not isinstance(reason, str) or not reason:
        return None
    message = data.get("invalidMessage") or data.get("errorMessage")
    payer = data.get("payer")
    return reason, message if isinstance(message, str) else None, payer if isinstance(payer, str) else None


def _payer_of(payload: PaymentPayload) -> str | None:
    authorization = payload.payload.get("authorization")
    payer = authorization.get("from") if isinstance(authorization, dict) else None
    return payer if isinstance(payer, str) else None


def nonce_of(payload: PaymentPayload) -> str | None:
    authorization = payload.payload.get("authorization")
    nonce = authorization.get("nonce") if isinstance(authorization, dict) else None
    return nonce.lower() if isinstance(nonce, str) else None


def authorization_of(payment_signature_header: str) -> tuple[str | None, str | None]:
    """(payer, nonce) a `PAYMENT-SIGNATURE` value claims, unverified: what finds a payment already recorded.
    Raises `MalformedPayment`."""
    payload = X402Gate.decode_payment(payment_signature_header)
    payer = _payer_of(payload)
    return (payer.lower() if payer else None), nonce_of(payload)


class _Facilitator(HTTPFacilitatorClient):
    """The package's async HTTP facilitator client. Its `get_supported` is synchronous (a blocking httpx call,
    made by the resource server's `initialize()`); here it answers from the `/supported` the gate fetched."""

    supported: SupportedResponse | None = None

    def get_supported(self) -> SupportedResponse:
        if self.supported is None:
            raise RuntimeError("the gate fetches /supported before initializing the resource server")
        return self.supported


class X402Gate:
    """Asks for and takes `exact` x402 v2 payments to `pay_to`, in `asset` on `network`, through the facilitator
    at `facilitator_url`.

    `asset_name`/`asset_version`: the token's EIP-712 domain, which payers sign over (Base Sepolia's USDC:
    `USDC`/`2`; Base mainnet's: `USD Coin`/`2`). `max_timeout_seconds`: how long a payment authorization may be
    valid for (the payer's client signs `validBefore` = now + this). `timeout`: the bound of each facilitator
    call, in seconds. Call `close()` when done."""

    def __init__(self, facilitator_url: str, pay_to: str, *, network: str = DEFAULT_NETWORK,
                 asset: str = DEFAULT_ASSET, asset_name: str = DEFAULT_ASSET_NAME,
                 asset_version: str = DEFAULT_ASSET_VERSION, max_timeout_seconds: int = 300, timeout: float = 10.0):
        if not isinstance(facilitator_url, str) or not facilitator_url.startswith(("http://", "https://")):
            raise ValueError("the facilitator URL must be an http(s) URL")
        if not ADDRESS.match(pay_to or ""):
            raise ValueError("pay_to must be an address (0x and 40 hex digits)")
        if not ADDRESS.match(asset or ""):
            raise ValueError("the asset must be an address (0x and 40 hex digits)")
        if not network.startswith("eip155:"):
            raise ValueError("the network must be an EVM network in CAIP-2 form, eip155:<chain id>")
        if not asset_name or not asset_version:
            raise ValueError("the asset's EIP-712 name and version are required")
        if max_timeout_seconds < 10 or timeout <= 0:
            raise ValueError("max_timeout_seconds must be at least 10 and timeout positive")
        self.facilitator_url = facilitator_url.rstrip("/")
        self.pay_to, self.network, self.asset = pay_to, network, asset
        self.asset_name, self.asset_version = asset_name, asset_version
        self.max_timeout_seconds, self.timeout = max_timeout_seconds, timeout
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
                                       follow_redirects=True, event_hooks={"request": [_outside_transactions],
                                                                  "response": [_raise_on_error]})
        self._facilitator = _Facilitator(FacilitatorConfig(url=self.facilitator_url, timeout=timeout,
                                                           http_client=self._http))
        self._server = x402ResourceServer(self._facilitator)
        # x402's scheme has an unannotated __init__ and types payment_flows as a plain dict against its own protocol
        self._server.register(network, ExactEvmServerScheme())  # type: ignore[no-untyped-call, arg-type]
        self._ready = False
        self._ready_lock = asyncio.Lock()

    async def close(self) -> None:
        await self._http.aclose()

    # -- the facilitator --------------------------------------------------------------------------------------

    @asynccontextmanager
    async def _facilitator_call(self, what: str, seconds: float) -> AsyncIterator[None]:
        """Bounds a facilitator call and turns its failures into `FacilitatorUnavailable` / `PaymentRefused`."""
        try:
            async with asyncio.timeout(seconds):
                yield
        except _Answered as exc:
            refusal = _refusal_in(exc.body) if 400 <= exc.status < 500 and exc.status not in (408, 429) else None
            if refusal is not None:
                raise PaymentRefused(refusal[0], refusal[1], payer=refusal[2]) from None
            log.warning("x402 facilitator %s: answered %d", what, exc.status)
            raise FacilitatorUnavailable(f"the payment facilitator answered {exc.status} to {what}",
                                         exc.status) from None
        except TimeoutError:
            log.warning("x402 facilitator %s: no answer within %.1f s", what, seconds)
            raise FacilitatorUnavailable(f"the payment facilitator did not answer {what} in time") from None
        except httpx.HTTPError as exc:
            log.warning("x402 facilitator %s: %s", what, exc.__class__.__name__)
            raise FacilitatorUnavailable(f"the payment facilitator could not be reached for {what}") from None
        except (FacilitatorResponseError, ValidationError, ValueError) as exc:
            log.warning("x402 facilitator %s: unexpected answer: %s", what, exc)
            raise FacilitatorUnavailable(f"the payment facilitator gave an unexpected answer to {what}") from None
        except SchemeNotFoundError as exc:
            raise FacilitatorUnavailable(f"the payment facilitator does not serve this payment: {exc}") from None

    async def supported(self) -> SupportedResponse:
        """`GET /supported`: the kinds (version, scheme, network), extensions and signers the facilitator serves."""
        async with self._facilitator_call("supported", self.timeout):
            response = await self._http.get(f"{self.facilitator_url}/supported")
            return SupportedResponse.model_validate(response.json())

    def _our_kind(self, supported: SupportedResponse) -> SupportedKind | None:
        return next((k for k in supported.kinds if k.x402_version == X402_VERSION and k.scheme == SCHEME
                     and k.network in (self.network, "eip155:*")), None)

    async def check(self) -> SupportedKind:
        """Health: the facilitator answers `/supported` and serves x402 v2 `exact` on our network; its kind.
        Raises `FacilitatorUnavailable` otherwise."""
        kind = self._our_kind(await self.supported())
        if kind is None:
            raise FacilitatorUnavailable(f"the payment facilitator does not serve {SCHEME} on {self.network}")
        return kind

    async def _ensure_ready(self) -> None:
        """The resource server initialized from the facilitator's `/supported` (once; retried after a failure)."""
        async with self._ready_lock:
            if self._ready:
                return
            supported = await self.supported()
            if self._our_kind(supported) is None:
                raise FacilitatorUnavailable(f"the payment facilitator does not serve {SCHEME} on {self.network}")
            self._facilitator.supported = supported
            try:
                self._server.initialize()  # no I/O: get_supported answers from `supported`
            except (FacilitatorCapabilityError, RuntimeError) as exc:
                raise FacilitatorUnavailable(f"the payment facilitator cannot take these payments: {exc}") from None
            self._ready = True

    # -- asking for a payment ---------------------------------------------------------------------------------

    async def requirements(self, amount_atomic: str, resource_url: str, description: str, *,
                           error: str | None = "PAYMENT-SIGNATURE header is required",
                           mime_type: str = "application/json") -> PaymentRequired:
        """The x402 v2 `PaymentRequired` for `amount_atomic` (atomic units as a decimal string, "49000000" is 49
        USDC) to reach `resource_url`: one `exact` requirement with the token's EIP-712 domain in `extra`.
        `error`: the message the 402 carries (a refusal's `reason` when re-asking after one). Needs the
        facilitator's `/supported` once (`FacilitatorUnavailable` while it cannot be had)."""
        if not isinstance(amount_atomic, str) or not UINT.match(amount_atomic) or int(amount_atomic) == 0:
            raise ValueError("the amount must be a positive whole number of atomic units, as a string")
        await self._ensure_ready()
        config = ResourceConfig(
            scheme=SCHEME, network=self.network, pay_to=self.pay_to, max_timeout_seconds=self.max_timeout_seconds,
            price=AssetAmount(amount=amount_atomic, asset=self.asset,
                              extra={"name": self.asset_name, "version": self.asset_version}))
        try:
            accepts = self._server.build_payment_requirements(config)
        except SchemeNotFoundError as exc:
            raise FacilitatorUnavailable(f"the payment facilitator does not serve this payment: {exc}") from None
        resource = ResourceInfo(url=resource_url, description=description, mime_type=mime_type)
        return await self._server.create_payment_required_response(accepts, resource, error)

    @staticmethod
    def encode_required(payment_required: PaymentRequired) -> str:
        """The `PAYMENT-REQUIRED` header value: base64 of the `PaymentRequired` JSON."""
        return encode_payment_required_header(payment_required)

    @staticmethod
    def required_body(payment_required: PaymentRequired) -> dict[str, Any]:
        """The `PaymentRequired` as a JSON-able dict (camelCase) for a 402 body."""
        return payment_required.model_dump(mode="json", by_alias=True, exclude_none=True)

    # -- taking it ------------------------------------------------------------------------------------------

    @staticmethod
    def decode_payment(payment_signature_header: str) -> PaymentPayload:
        """The `PaymentPayload` of a `PAYMENT-SIGNATURE` value; `MalformedPayment` unless it is base64 of a JSON
        x402 v2 payload whose `exact` EVM part has the EIP-3009 shape."""
        header = payment_signature_header.strip() if isinstance(payment_signature_header, str) else ""
        if not header:
            raise MalformedPayment("the PAYMENT-SIGNATURE header is empty")
        if len(header) > MAX_HEADER_CHARS:
            raise MalformedPayment(f"the PAYMENT-SIGNATURE header is longer than {MAX_HEADER_CHARS} characters")
        try:
            data = json.loads(base64.b64decode(header, validate=True).decode("utf-8"))
        except (binascii.Error, ValueError):
            raise MalformedPayment("the PAYMENT-SIGNATURE header is not base64 of a JSON object") from None
        if not isinstance(data, dict):
            raise MalformedPayment("the PAYMENT-SIGNATURE header is not base64 of a JSON object")
        if data.get("x402Version") != X402_VERSION:
            raise MalformedPayment(f"the payment's x402Version must be {X402_VERSION}")
        try:
            payload = PaymentPayload.model_validate(data)
        except ValidationError as exc:
            where = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
            raise MalformedPayment(f"the payment is not an x402 PaymentPayload ({where})") from None
        if payload.accepted.scheme == SCHEME:
            errors = exact_evm_payload_errors(payload.payload)
            if errors:
                raise MalformedPayment("the payment is malformed: " + "; ".join(errors[:3]))
        return payload

    async def verify(self, payment_signature_header: str, payment_required: PaymentRequired) -> Verified:
        """Check the payment against `payment_required` (the requirements this request asks for) and with the
        facilitator (`POST /verify`); nothing moves yet. Raises `MalformedPayment`, `PaymentRefused`,
        `FacilitatorUnavailable`."""
        payload = self.decode_payment(payment_signature_header)
        payer = _payer_of(payload)
        await self._ensure_ready()
        matching = self._server.find_matching_requirements(payment_required.accepts, payload)
        if matching is None:
            log.info("x402 payment from %s refused: %s", payer, NO_MATCHING_MESSAGE)
            raise PaymentRefused(NO_MATCHING_REQUIREMENTS, NO_MATCHING_MESSAGE, payer=payer)
        extensions = self._server.validate_extensions(payment_required, payload)
        if not extensions.valid:
            raise PaymentRefused(extensions.invalid_reason or "invalid_payload", payer=payer)
        async with self._facilitator_call("verify", self.timeout):
            result = await self._server.verify_payment(payload, matching)
        verify = result.verify
        if not verify.is_valid:
            reason = verify.invalid_reason or "invalid_payload"
            log.info("x402 payment from %s refused: %s", verify.payer or payer, reason)
            raise PaymentRefused(reason, verify.invalid_message, payer=verify.payer or payer)
        payer = verify.payer or payer
        if payer is None:  # only an exact EVM payment matches, and decode_payment saw its authorization's `from`
            raise MalformedPayment("the payment names no payer")
        return Verified(payload=payload, requirements=matching, payer=payer)

    async def settle(self, verified: Verified) -> Settled:
        """Move the money (`POST /settle`). Raises `PaymentRefused` (with `response_header`, the failed
        `PAYMENT-RESPONSE`) or `FacilitatorUnavailable` (outcome unknown, see the module docstring)."""
        await self._ensure_ready()
        async with self._facilitator_call("settle", 2 * self.timeout):
            result = await self._server.settle_payment(verified.payload, verified.requirements)
        header = encode_payment_response_header(result)
        if not result.success:
            reason = result.error_reason or "unexpected_settle_error"
            log.info("x402 settlement from %s failed: %s", result.payer or verified.payer, reason)
            raise PaymentRefused(reason, result.error_message, payer=result.payer or verified.payer,
                                 response_header=header)
        log.info("x402 payment settled: %s from %s on %s", result.transaction, result.payer, result.network)
        return Settled(transaction=result.transaction, payer=result.payer or verified.payer, network=result.network,
                       amount=result.amount or verified.requirements.amount, response_header=header)

    async def verify_and_settle(self, payment_signature_header: str, payment_required: PaymentRequired) -> Settled:
        """`verify` then `settle`."""
        return await self.settle(await self.verify(payment_signature_header, payment_required))
