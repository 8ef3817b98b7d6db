"""The payer's side of x402 v2, for our tests and for API users paying from Python: turn a 402's
`PAYMENT-REQUIRED` header into a `PAYMENT-SIGNATURE` header, with the `x402` package's client and its `exact` EVM
scheme signing an EIP-3009 `transferWithAuthorization` (EIP-712) with a local `eth_account` key. Nothing goes
over the network: the signature is the payment, the facilitator moves the money when the server settles.

    from providers.x402.payer import pay, payment_response
    r = requests.post(url, json=body)                        # 402
    signature = pay(PRIVATE_KEY, r.headers["PAYMENT-REQUIRED"], max_amount_atomic=49_000_000)
    r = requests.post(url, json=body, headers={"PAYMENT-SIGNATURE": signature})
    payment_response(r.headers["PAYMENT-RESPONSE"]).transaction

A signature is good for one payment (a random 32-byte nonce) until `validBefore`; keep the key secret, it holds
the funds. `amount_override`, `pay_to_override` and a negative `valid_for_seconds` sign other terms than those
asked while still echoing the asked terms in `accepted` (a dishonest or broken payer), so tests see the
facilitator refuse them; `forged_payment` claims a payer whose key did not sign."""
from __future__ import annotations

from eth_account import Account
from x402 import x402ClientSync
from x402.http import decode_payment_required_header, decode_payment_response_header, encode_payment_signature_header
from x402.mechanisms.evm.exact import ExactEvmClientScheme
from x402.schemas import PaymentPayload, PaymentPayloadV1, PaymentRequired, PaymentRequirements, SettleResponse

from providers.x402 import SCHEME
from providers.x402.payload import ADDRESS


def new_private_key() -> str:
    """A fresh random secp256k1 key, `0x` and 64 hex digits (a test wallet)."""
    key: bytes = Account.create().key
    return "0x" + key.hex().removeprefix("0x")


def address_of(private_key: str) -> str:
    """The checksummed address a key pays from."""
    address: str = Account.from_key(private_key).address
    return address


def read_payment_required(payment_required_header: str) -> PaymentRequired:
    """The `PaymentRequired` of a `PAYMENT-REQUIRED` value; ValueError unless it is an x402 v2 one."""
    try:
        required = decode_payment_required_header(payment_required_header)
    except Exception as exc:  # noqa: BLE001 - the decoder raises many kinds; each means not a header
        raise ValueError(f"not a PAYMENT-REQUIRED header value: {exc}") from None
    if not isinstance(required, PaymentRequired) or required.x402_version != 2:
        raise ValueError("only x402 version 2 payment requirements are supported")
    return required


def payment_response(payment_response_header: str) -> SettleResponse:
    """The settlement (`success`, `transaction`, `network`, `payer`, `errorReason`) of a `PAYMENT-RESPONSE`
    value."""
    return decode_payment_response_header(payment_response_header)


def _client(private_key: str) -> x402ClientSync:
    client = x402ClientSync()
    client.register("eip155:*", ExactEvmClientScheme(Account.from_key(private_key)))
    # The package's default spend controls allow $1 a payment; `max_amount_atomic` is this module's cap.
    client.set_spend_controls(False)
    return client


def _ours(required: PaymentRequired) -> PaymentRequirements:
    for accept in required.accepts:
        if accept.scheme == SCHEME and accept.network.startswith("eip155:"):
            return accept
    raise ValueError("no exact EVM payment is offered")


def _v2(payload: PaymentPayload | PaymentPayloadV1) -> PaymentPayload:
    """What the client signs for a v2 PaymentRequired (its return type also admits v1's)."""
    if not isinstance(payload, PaymentPayload):
        raise TypeError("the x402 client signed a v1 payload for a v2 request")
    return payload


def _sign(private_key: str, required: PaymentRequired, *, amount_override: int | str | None = None,
          pay_to_override: str | None = None, valid_for_seconds: int | None = None) -> PaymentPayload:
    client = _client(private_key)
    if amount_override is None and pay_to_override is None and valid_for_seconds is None:
        return _v2(client.create_payment_payload(required))
    asked = _ours(required)
    terms = asked.model_copy(deep=True)
    if amount_override is not None:
        if int(amount_override) < 0:
            raise ValueError("amount_override must not be negative")
        terms.amount = str(int(amount_override))
    if pay_to_override is not None:
        if not ADDRESS.match(pay_to_override):
            raise ValueError("pay_to_override must be an address (0x and 40 hex digits)")
        terms.pay_to = pay_to_override
    if valid_for_seconds is not None:
        if int(valid_for_seconds) == 0:
            raise ValueError("valid_for_seconds must not be 0 (a negative number makes an expired authorization)")
        terms.max_timeout_seconds = int(valid_for_seconds)  # the scheme signs validBefore = now + this
    signed = _v2(client.create_payment_payload(required.model_copy(update={"accepts": [terms]})))
    return signed.model_copy(update={"accepted": asked})


def pay(private_key: str, payment_required_header: str, *, amount_override: int | str | None = None,
        pay_to_override: str | None = None, valid_for_seconds: int | None = None,
        max_amount_atomic: int | str | None = None) -> str:
    """The `PAYMENT-SIGNATURE` value paying the first `exact` EVM requirement of `payment_required_header`
    from the key's address (`validAfter` 0, `validBefore` now + the requirement's `maxTimeoutSeconds`).

    `max_amount_atomic`: refuse (ValueError) to pay more than this many atomic units. The overrides sign other
    terms than those asked (the `accepted` echo stays the asked one): `amount_override` another value,
    `pay_to_override` another recipient, `valid_for_seconds` another validity (negative: already expired)."""
    required = read_payment_required(payment_required_header)
    if max_amount_atomic is not None and int(_ours(required).amount) > int(max_amount_atomic):
        raise ValueError(f"the payment asks {_ours(required).amount} atomic units, more than {max_amount_atomic}")
    payload = _sign(private_key, required, amount_override=amount_override, pay_to_override=pay_to_override,
                    valid_for_seconds=valid_for_seconds)
    return encode_payment_signature_header(payload)


def forged_payment(payment_required_header: str, *, claimed_payer: str, signing_key: str | None = None) -> str:
    """A `PAYMENT-SIGNATURE` value whose authorization says it is from `claimed_payer` but is signed by another
    key (`signing_key`, or a fresh one): what someone spending another's funds would send."""
    if not ADDRESS.match(claimed_payer or ""):
        raise ValueError("claimed_payer must be an address (0x and 40 hex digits)")
    key = signing_key or new_private_key()
    if address_of(key).lower() == claimed_payer.lower():
        raise ValueError("the signing key must not be the claimed payer's")
    payload = _sign(key, read_payment_required(payment_required_header))
    inner = {**payload.payload, "authorization": {**payload.payload["authorization"], "from": claimed_payer}}
    return encode_payment_signature_header(payload.model_copy(update={"payload": inner}))
