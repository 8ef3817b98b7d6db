"""How the platform signs the requests it sends to a business's own endpoints (webhook deliveries, an agent's
custom tools): `X-Service-Signature: t=<unix>,v1=<hex>`, the hex HMAC-SHA256 of `<t>.<raw body>` under each secret in
force (Stripe's scheme, so a standard verifier accepts it)."""
from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Service-Signature"


def signature(secret: str, timestamp: int, body: bytes) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secrets_: list[str], timestamp: int, body: bytes) -> str:
    """`t=<unix>,v1=<hex>[,v1=<hex>]`: one v1 per secret in force (two during a rotation overlap)."""
    return ",".join([f"t={timestamp}", *(f"v1={signature(s, timestamp, body)}" for s in secrets_)])
