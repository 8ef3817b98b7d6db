"""How the platform signs the requests it sends to a business's own endpoints (webhook deliveries, an agent's
custom tools): `X-Service-Signature: t=<unix>,v1=<hex>`, the hex HMAC-SHA256 of `<t>.<raw body>` under each secret in
force (Stripe's scheme, so a standard verifier accepts it). `verify` is the receiver's side, as the SPEC tells a
partner to check it (the soak's partner and the tests use it)."""
from __future__ import annotations

import hashlib
import hmac

from core.constant_time import same_secret

SIGNATURE_HEADER = "X-Service-Signature"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secrets_: list[str], timestamp: int, body: bytes) -> str:
    """`t=<unix>,v1=<hex>[,v1=<hex>]`: one v1 per secret in force (two during a rotation overlap)."""
    return ",".join([f"t={timestamp}", *(f"v1={signature(s, timestamp, body)}" for s in secrets_)])


def verify(header: str, body: bytes, secret: str) -> bool:
    """Whether `header` signs `body` under `secret`: split on commas, read `t` and each `v1`, recompute over
    `<t>.<raw body>` and compare in constant time. A header without exactly one `t` is not valid."""
    parts = [part.split("=", 1) for part in header.split(",") if "=" in part]
    timestamps = [value for name, value in parts if name == "t"]
    if len(timestamps) != 1 or not timestamps[0].isdigit():
        return False
    expected = signature(secret, int(timestamps[0]), body)
    return any(same_secret(value, expected) for name, value in parts if name == "v1")
