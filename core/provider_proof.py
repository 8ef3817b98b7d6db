"""The gateway's proof on a PROVIDER message: that the gateway verified the provider's webhook before storing it.

The gateway signs `<subject>\\n<Nats-Msg-Id>\\n<body>` with its caller-context key (Ed25519, core.caller: the key it
already holds, whose public half every process already accepts in CALLER_VERIFY_KEYS) and sends the signature in
the `Sb-Gateway-Signature` header as `<key id>=<base64url signature>`. The owner's consumer (core.bus.DurableConsumer
on the PROVIDER stream) applies a message only when the signature verifies under a key of the gateway's: one
placed on the stream by anyone else (a NATS identity with rights it should not have, an operator's tool) is
terminated with a warning, never applied. An asymmetric signature rather than an HMAC: the consumers hold only the
public key, so no consumer can forge what the gateway vouches for.

Cost: one signature (~40 µs) per stored webhook, one verification (~100 µs) per applied message; no round trip.
"""
from __future__ import annotations

import base64
import binascii

from cryptography.exceptions import InvalidSignature

from core import registry
from core.caller import KeyRing, issuer_of

HEADER = "Sb-Gateway-Signature"


def _signed(subject: str, message_id: str, body: bytes) -> bytes:
    return f"{subject}\n{message_id}\n".encode() + body


def sign(keys: KeyRing, subject: str, message_id: str, body: bytes) -> str:
    """The header's value for a message the gateway stores; RuntimeError when this process holds no signing key."""
    if keys.signing is None or keys.kid is None:
        raise RuntimeError("this process holds no signing key (CALLER_SIGNING_KEY) to vouch for a provider's message")
    signature = keys.signing.sign(_signed(subject, message_id, body))
    return f"{keys.kid}={base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def refusal(keys: KeyRing, subject: str, message_id: str, body: bytes, header: str | None) -> str | None:
    """Why a PROVIDER message is not the gateway's (None: its proof verifies)."""
    if not header:
        return f"no {HEADER} header"
    kid, _, encoded = header.partition("=")
    if issuer_of(kid) != registry.GATEWAY:
        return f"signed by {kid!r}, not by the gateway"
    key = keys.accepted.get(kid)
    if key is None:
        return f"the key {kid!r} is not one this process accepts"
    try:
        key.verify(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)), _signed(subject, message_id, body))
    except (InvalidSignature, binascii.Error, ValueError):
        return "the signature does not verify"
    return None
