"""Shape checks of an `exact` EVM payment's inner payload (EIP-3009), shared by the gate (a malformed header is
a 400, never a facilitator call) and the local facilitator (a malformed request is a 400 `invalid_payload`).

The package's own models type the outer envelope (`PaymentPayload`: `x402Version`, `accepted`, `payload`) but
leave `payload` a free dict, and its `exact` EVM verifier calls `int()` on the authorization's fields before
any check of its own: these checks come first so such a payment is refused by shape, not by a crash."""
from __future__ import annotations

import re

ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
UINT = re.compile(r"^[0-9]{1,78}$")
BYTES32 = re.compile(r"^0x[0-9a-fA-F]{64}$")
HEX_BYTES = re.compile(r"^0x(?:[0-9a-fA-F]{2})+$")
MAX_SIGNATURE_BYTES = 4096  # an EOA signs 65 bytes; smart wallets (EIP-1271, ERC-6492) more
AUTHORIZATION_FIELDS = ("from", "to", "value", "validAfter", "validBefore", "nonce")


def _uint256(value: object) -> bool:
    return isinstance(value, str) and bool(UINT.match(value)) and int(value) < 2**256


def exact_evm_payload_errors(inner: object) -> list[str]:
    """What is wrong with `{"signature": "0x...", "authorization": {from, to, value, validAfter, validBefore,
    nonce}}` (addresses 0x + 40 hex, amounts and times decimal strings of a uint256, nonce 0x + 64 hex); [] when
    nothing is."""
    if not isinstance(inner, dict):
        return ["payload must be an object"]
    errors = [f"payload.{k} should not exist" for k in sorted(set(inner) - {"signature", "authorization"})]
    signature = inner.get("signature")
    if not isinstance(signature, str) or not HEX_BYTES.match(signature):
        errors.append("payload.signature must be 0x-prefixed hex bytes")
    elif (len(signature) - 2) // 2 > MAX_SIGNATURE_BYTES:
        errors.append(f"payload.signature must be at most {MAX_SIGNATURE_BYTES} bytes")
    auth = inner.get("authorization")
    if not isinstance(auth, dict):
        return [*errors, "payload.authorization must be an object"]
    errors += [f"payload.authorization.{k} should not exist" for k in sorted(set(auth) - set(AUTHORIZATION_FIELDS))]
    for key in ("from", "to"):
        if not isinstance(auth.get(key), str) or not ADDRESS.match(auth[key]):
            errors.append(f"payload.authorization.{key} must be an address (0x and 40 hex digits)")
    for key in ("value", "validAfter", "validBefore"):
        if not _uint256(auth.get(key)):
            errors.append(f"payload.authorization.{key} must be a decimal string of a uint256")
    if not isinstance(auth.get("nonce"), str) or not BYTES32.match(auth["nonce"]):
        errors.append("payload.authorization.nonce must be 32 bytes (0x and 64 hex digits)")
    return errors
