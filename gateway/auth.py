"""Bearer-key authentication with a principal cache that never outlives a revocation.

The accounts service resolves a key to its principal. To keep that RPC off the
hot path, principals are cached per replica, keyed by a SHA-256 of the key.
Correctness rules:
- expiry is checked locally on every request from the cached `expires_at`;
- when accounts changes a key or an account's businesses it publishes the
  account id on a core NATS subject, and every replica drops that account's
  entries before its next request is served;
- while this replica is not connected to NATS (so it could miss an
  invalidation) the cache is bypassed, and it is emptied on reconnect;
- entries also age out after `ttl` seconds as a last resort.
"""
from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from core.bus import AUTH_INVALIDATE_SUBJECT, HeardInvalidations
from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from core.rpc import Client
from core.scopes import has_scope
from core.tenant import Tenant
from switchboard.v1 import accounts_pb2

log = logging.getLogger(__name__)
BEARER = "Bearer "
KEY_PREFIX = "svc_live_"


@dataclass(frozen=True)
class Principal:
    key_id: str  # for an OAuth access token: the id of the sign-in (grant) it comes from
    account_id: str
    business_ids: tuple[str, ...]
    scopes: tuple[str, ...]
    bound_business_id: str
    expires_at: datetime | None
    # The caller this principal is to the services: core.rpc signs it for each service called (core.caller), each
    # token reused while it has REUSE seconds left, so a cached principal's token always outlives its requests.
    tenant: Tenant

    def has_scope(self, scope: str) -> bool:
        return has_scope(self.scopes, scope)

    @classmethod
    def from_proto(cls, p: accounts_pb2.KeyPrincipal) -> Principal:
        bound = p.business_id if p.HasField("business_id") else ""
        tenant = Tenant(account_id=p.account_id, business_ids=tuple(p.business_ids), api_key_id=p.key_id,
                        scopes=tuple(p.scopes), bound_business_id=bound, standings=tuple(p.standings.items()))
        expires = p.expires_at.ToDatetime(tzinfo=UTC) if p.HasField("expires_at") else None
        return cls(p.key_id, p.account_id, tuple(p.business_ids), tuple(p.scopes), bound, expires,
                   tenant)


def bearer_credential(header: str | None, tokens: bool = False) -> str:
    """The API key of an Authorization header, or where `tokens` (the assistant connector) an OAuth access token."""
    if not header:
        raise ServiceError("unauthorized", "missing Authorization header; send 'Authorization: Bearer svc_live_...'")
    if not header.startswith(BEARER):
        raise ServiceError("unauthorized", "Authorization header must be 'Bearer <API key>'")
    credential = header[len(BEARER):].strip()
    if not credential.startswith(KEY_PREFIX) and not tokens:
        raise ServiceError("unauthorized", f"API key must start with {KEY_PREFIX} (OAuth access tokens work only on "
                           "the assistant connector, /api/mcp)")
    if not credential:
        raise ServiceError("unauthorized", "the Authorization header carries no key or token")
    return credential


class Authenticator:
    def __init__(self, accounts_stub: Client, *, ttl: float = 60.0, max_entries: int = 100_000):
        self.stub = accounts_stub
        self.ttl = ttl
        self.max_entries = max_entries
        self._cache: dict[str, tuple[Principal, float]] = {}
        self._by_account: dict[str, set[str]] = {}
        self.heard = HeardInvalidations(self.clear)  # attached by attach(); until then the cache is bypassed

    async def attach(self, nc: NatsClient) -> None:
        """Start receiving invalidations on an established NATS connection."""
        await nc.subscribe(AUTH_INVALIDATE_SUBJECT, cb=self._on_invalidate)
        self.heard.attach(nc)

    async def _on_invalidate(self, msg: Msg) -> None:
        self.forget_account(msg.data.decode())

    def forget_account(self, account_id: str) -> None:
        for digest in self._by_account.pop(account_id, ()):
            self._cache.pop(digest, None)

    def clear(self) -> None:
        self._cache.clear()
        self._by_account.clear()

    @property
    def caching(self) -> bool:
        return self.heard.trusted

    @property
    def listening(self) -> bool:
        """Whether this gateway has subscribed to the invalidations (attach)."""
        return self.heard.nc is not None

    async def authenticate_session(self, token: str) -> Principal:
        """The principal of a dashboard session (not cached: signing out or expiry take effect at once)."""
        try:
            return Principal.from_proto(await self.stub.AuthenticateSession(
                accounts_pb2.AuthenticateSessionRequest(session_token=token)))
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from None

    async def authenticate(self, header: str | None, *, tokens: bool = False) -> Principal:
        """The principal of an API key, or with `tokens` of an OAuth access token too (both cached alike: revoking
        a sign-in invalidates its account as revoking a key does)."""
        credential = bearer_credential(header, tokens)
        is_key = credential.startswith(KEY_PREFIX)
        digest = hashlib.sha256(credential.encode()).hexdigest()
        now = time.monotonic()
        hit = self._cache.get(digest) if self.caching else None
        if hit is not None and now - hit[1] < self.ttl:
            principal = hit[0]
        else:
            try:
                reply = await (self.stub.AuthenticateKey(accounts_pb2.AuthenticateKeyRequest(key=credential)) if is_key
                               else self.stub.AuthenticateAccessToken(
                                   accounts_pb2.AuthenticateAccessTokenRequest(token=credential)))
            except grpc.aio.AioRpcError as exc:
                raise from_rpc_error(exc) from None
            principal = Principal.from_proto(reply)
            if self.caching:
                if len(self._cache) >= self.max_entries:
                    self.clear()
                self._cache[digest] = (principal, now)
                self._by_account.setdefault(principal.account_id, set()).add(digest)
        if principal.expires_at is not None and principal.expires_at <= datetime.now(UTC):
            raise ServiceError("unauthorized", "API key is invalid, expired or revoked" if is_key else
                               "the access token expired; refresh it")
        return principal
