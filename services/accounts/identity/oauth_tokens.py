"""The connector's OAuth access tokens: RFC 9068 JWTs (`typ: at+jwt`), signed HS256 with joserfc.

The accounts service both issues and checks them (the gateway asks it, as it asks about keys, so a revoked grant
is refused at once), so a symmetric key derived from the server secret is enough and no key is published: the
access-token subkey of its current version, named in the header's `kid` (services.accounts.secret_keys), so a token
signed before a rotation is still read while the previous secret is held. The
claims say everything a resource server checks: `iss`, `aud` (the connector's resource URI, RFC 8707), `exp`,
`sub` (the account), `client_id`, `scope`, and `grant_id` (the approval the token comes from, which can be revoked).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import GuestProtocol, OctKey

from core.ids import new_id
from services.accounts.secret_keys import OAUTH_ACCESS_TOKEN, SecretKeys

ALGORITHM = "HS256"
TOKEN_TYPE = "at+jwt"


@dataclass(frozen=True)
class AccessClaims:
    account_id: str
    grant_id: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: int  # unix seconds


class AccessTokens:
    def __init__(self, keys: SecretKeys, issuer: str, resource: str):
        self.keys = keys
        self.kid, key = keys.signing_key(OAUTH_ACCESS_TOKEN)
        self.key = OctKey.import_key(key)
        self.issuer, self.resource = issuer, resource
        self.claims = jwt.JWTClaimsRegistry(leeway=0, iss={"essential": True, "value": issuer},
                                            aud={"essential": True, "value": resource}, exp={"essential": True},
                                            sub={"essential": True}, grant_id={"essential": True})

    def issue(self, *, account_id: str, grant_id: str, client_id: str, scopes: tuple[str, ...], now: datetime,
              expires_at: datetime) -> str:
        claims = {"iss": self.issuer, "aud": self.resource, "sub": account_id, "client_id": client_id,
                  "scope": " ".join(scopes), "grant_id": grant_id, "iat": int(now.timestamp()),
                  "exp": int(expires_at.timestamp()), "jti": new_id()}
        return jwt.encode({"alg": ALGORITHM, "typ": TOKEN_TYPE, "kid": self.kid}, claims, self.key)

    def read(self, token: str, *, check_expiry: bool = True) -> AccessClaims | None:
        """The claims of a token this server issued for its resource, or None (forged, expired, for another
        audience, or not a JWT at all). Revocation checks skip the expiry: an expired token may still be revoked."""
        try:
            decoded = jwt.decode(token, self._key_of, algorithms=[ALGORITHM])
            if decoded.header.get("typ") != TOKEN_TYPE:
                return None
            if check_expiry:
                self.claims.validate(decoded.claims)
        except (JoseError, ValueError):
            return None
        c = decoded.claims
        try:
            return AccessClaims(str(c["sub"]), str(c["grant_id"]), str(c["client_id"]), tuple(str(c["scope"]).split()),
                                int(c["exp"]))
        except (KeyError, TypeError, ValueError):
            return None

    def _key_of(self, token: GuestProtocol) -> OctKey:
        """The key of the version the token names (joserfc asks with the token's header); one no longer held fails
        the signature check."""
        key = self.keys.verifying_key(OAUTH_ACCESS_TOKEN, token.headers().get("kid"))
        if key is None:
            raise ValueError("a key version no longer held")
        return OctKey.import_key(key)
