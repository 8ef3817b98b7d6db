"""The caller context between processes, as a short-lived signed token bound to the one service it is for: no
internal hop asserts who it acts for without proof, and a token taken from one hop is refused by every other.

Every RPC carries a token in the `x-sb-caller` metadata: a JWT signed with Ed25519 (EdDSA) by the process that
minted it, naming the caller (account, businesses, API key, scopes, bound business, standings), its issuer, its
audience (the name of the service called: a token for calls is refused by accounts) and an expiry LIFETIME seconds
on. The server-side interceptor (core.interceptors) verifies it before any handler runs and refuses a missing,
expired, tampered, foreign or misaddressed token with `unauthenticated`; the handler's tenant (core.tenant) is
what the token says, nothing else.

Tokens are minted per hop: a service calling another on its caller's behalf signs a token of its own for the
callee, with the caller's claims as it received them (never wider) and `act`, the processes that vouched before it
(core.rpc, `forward_tenant`). Who may vouch for what (`may_vouch`, checked by the minting process and again by
every server):
- the gateway, which authenticated the key or the session: any caller, to any service;
- a service: itself (no account), one business it acts for on an event, or the caller it is serving, re-signed
  (a caller with a key, scopes, standings or several businesses only with proof: `prf`, the gateway's token for
  the first hop, whose claims cover this one's; `act` starts with the gateway), to the services it calls
  (core.registry `rpc_to`);
- a worker: itself or the one business of the work it claimed (core.tenant.acting_for: no key, scopes or
  standings), to the services it calls, in the RPCs it declares (core.registry `rpcs`);
- any other process (the webhooks dispatcher calls no service): nobody.
Some RPCs accept only some of a service's callers (core.registry.RPC_CALLERS: RecordUsage and RunScheduled, the
gateway's alone; RecordCallerLead, the calls service's).

Keys: each minting process has its own signing key, named by a key id `<process>:<version>`; a service accepts
the public keys of its callers alone (core.registry.callers_of: the gateway and the processes whose `rpc_to` names
it; CALLER_VERIFY_KEYS, others in it ignored), so a token's issuer is the process that signed it. Rotation: add
the new public key everywhere (both versions accepted), then give the process its new signing key, then, once
the old tokens have expired (LIFETIME), drop the old public key. On the local stack every key is derived from the
server secret (`derived_keys`); elsewhere they are set (`python -m core.caller new-key gateway:2` makes a pair).

Cost: minting is a signature (~40 µs) and verifying one ~100 µs plus the JWT's own work (measured ~135 µs and
~350 µs with PyJWT on the bench machine), against ~1 ms for a whole `?id=` read. So a token is minted per caller
and callee and reused while it has REUSE seconds left, and a process keeps the tokens it verified until they
expire: a cached principal's reads cost a dictionary lookup on each side. The request's own id (the W3C trace id)
therefore travels beside the token (traceparent), not in it.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import jwt
from cachetools import TTLCache
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from core import registry
from core.errors import ServiceError
from core.tenant import Tenant

if TYPE_CHECKING:
    from core.settings import Settings

METADATA_KEY = "x-sb-caller"
ALGORITHM = "EdDSA"
LIFETIME = 180  # seconds a token is valid
# A minted token is sent again while it has at least this long left: a principal the gateway caches (60 s) with
# its token then still has 90 s, more than any route's limit, so a request's token outlives the request.
REUSE = 150
_LEEWAY = 5  # seconds of clock difference between processes tolerated
# A re-signed caller's token expires with its proof (the gateway's token, sent with REUSE seconds left at least):
# it is sent again while it has the longest RPC deadline left (60 s), so it arrives before it expires.
_PROVEN_REUSE = 60


def refused(why: str) -> ServiceError:
    return ServiceError("unauthorized", f"the caller context is refused: {why}")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issuer_of(kid: str) -> str:
    return kid.partition(":")[0]


@dataclass(frozen=True)
class KeyRing:
    """This process's signing key (None: it mints nothing) and the public keys it accepts, by key id."""

    kid: str | None
    signing: Ed25519PrivateKey | None
    accepted: dict[str, Ed25519PublicKey] = field(default_factory=dict)

    @classmethod
    def parse(cls, signing: str, accepted: str) -> KeyRing:
        """From the settings' text: `kid=<base64url seed>` and `kid=<base64url public key>,...`; ValueError naming
        the setting that is malformed."""
        kid, key = None, None
        if signing:
            kid, seed = _entry(signing, "CALLER_SIGNING_KEY", "'<process>:<version>=<base64url 32-byte seed>'")
            key = Ed25519PrivateKey.from_private_bytes(seed)
        keys = {name: Ed25519PublicKey.from_public_bytes(public) for name, public in (
            _entry(e, "CALLER_VERIFY_KEYS", "'<process>:<version>=<base64url public key>,...'")
            for e in (e.strip() for e in accepted.split(",")) if e)}
        return cls(kid, key, keys)


def _entry(text: str, setting: str, shape: str) -> tuple[str, bytes]:
    """(key id, 32 key bytes) of one `kid=<base64url>` entry of `setting`."""
    kid, eq, encoded = text.partition("=")
    try:
        raw = _unb64(encoded)
    except ValueError:
        raw = b""
    if not eq or ":" not in kid or len(raw) != 32:
        raise ValueError(f"{setting} must be {shape}")
    return kid, raw


def new_key(kid: str, seed: bytes | None = None) -> tuple[str, str]:
    """(CALLER_SIGNING_KEY entry, CALLER_VERIFY_KEYS entry) of a key pair named `kid` (random unless `seed`)."""
    private = Ed25519PrivateKey.from_private_bytes(seed) if seed else Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    return f"{kid}={_b64(raw)}", f"{kid}={_b64(public)}"


def derived_keys(secret: str, processes: Iterable[str], version: int = 1) -> dict[str, tuple[str, str]]:
    """The local stack's key pairs, one per process, derived from the server secret: {process: (signing entry,
    verify entry)}."""
    return {p: new_key(f"{p}:{version}", hmac.new(secret.encode(), f"caller-key:{p}:{version}".encode(),
                                                   hashlib.sha256).digest()) for p in processes}


def _authenticated(who: Tenant) -> bool:
    """Whether the caller carries what only authentication gives: a key, scopes, standings or several businesses."""
    return bool(who.api_key_id or who.scopes or who.bound_business_id or who.standings or len(who.business_ids) > 1)


def may_vouch(issuer: str, who: Tenant, audience: str) -> bool:
    """The vouch table (this module's docstring): whether `issuer` may send `who` to the service `audience`."""
    if not registry.may_call(issuer, audience):
        return False  # the webhooks dispatcher, and any process toward a service it does not call
    if issuer == registry.GATEWAY:
        return True
    if not _authenticated(who):
        return True  # itself, or one business it acts for
    # a service forwarding its caller, with the gateway's token as proof (checked by Verifier._proven)
    return issuer in registry.BY_NAME and who.via[:1] == (registry.GATEWAY,) and bool(who.proof)


def may_make(issuer: str, method: str) -> bool:
    """Whether `issuer` may make the RPC `method` (/package.Service/Method) at all: the RPCs some callers alone may
    make (core.registry.RPC_CALLERS), and a worker's own list (its `rpcs`)."""
    allowed = registry.RPC_CALLERS.get(method)
    if allowed is not None and issuer not in allowed:
        return False
    worker = registry.WORKERS_BY_NAME.get(issuer)
    return worker is None or not worker.rpcs or method in worker.rpcs


def _claims(who: Tenant) -> dict[str, Any]:
    claims = {"acc": who.account_id, "biz": list(who.business_ids), "key": who.api_key_id, "scp": list(who.scopes),
              "bnd": who.bound_business_id, "std": [list(s) for s in who.standings], "act": list(who.via)}
    return {**claims, "prf": who.proof} if who.proof else claims


def _tenant(claims: dict[str, Any], issuer: str, token: str) -> Tenant:
    try:
        who = Tenant(account_id=str(claims["acc"]), business_ids=tuple(map(str, claims["biz"])),
                     api_key_id=str(claims["key"]), scopes=tuple(map(str, claims["scp"])),
                     bound_business_id=str(claims["bnd"]),
                     standings=tuple((str(b), str(s)) for b, s in claims["std"]),
                     via=(*map(str, claims.get("act", ())), issuer))
    except (KeyError, TypeError, ValueError):
        raise refused("its claims are not a caller context") from None
    if not _authenticated(who):
        return who
    return replace(who, proof=token if issuer == registry.GATEWAY else str(claims.get("prf", "")))


def _within(who: Tenant, root: Tenant) -> bool:
    """Whether `who` is `root`, or narrower: the same account, key and bound business, of its businesses, scopes
    and standings some."""
    return (who.account_id, who.api_key_id, who.bound_business_id) == (
        root.account_id, root.api_key_id, root.bound_business_id) and set(who.business_ids) <= set(
        root.business_ids) and set(who.scopes) <= set(root.scopes) and set(who.standings) <= set(root.standings)


class Signer:
    """Mints this process's tokens, one per caller and callee reused while it has REUSE seconds left."""

    def __init__(self, keys: KeyRing):
        self.keys = keys
        self._minted: dict[tuple[Tenant, tuple[str, ...], str, str], tuple[str, float]] = {}

    def token_for(self, who: Tenant, audience: str) -> str:
        """A token carrying `who` (with the processes that vouched for it before: `who.via`) to the service
        `audience`; RuntimeError when this process may not vouch for it there (a bug, not a caller's error)."""
        now = time.time()
        cached = (who, who.via, who.proof, audience)
        found = self._minted.get(cached)
        if found is not None and found[1] - now >= (_PROVEN_REUSE if who.proof else REUSE):
            return found[0]
        if self.keys.signing is None or self.keys.kid is None:
            raise RuntimeError("this process holds no signing key (CALLER_SIGNING_KEY) and cannot vouch for a caller")
        issuer = issuer_of(self.keys.kid)
        if not may_vouch(issuer, who, audience):
            raise RuntimeError(f"{issuer} may not vouch for this caller to {audience} (core.caller.may_vouch)")
        expires = int(now) + LIFETIME
        if who.proof:  # a re-signed caller lives no longer than its proof
            expires = min(expires, int(jwt.decode(who.proof, options={"verify_signature": False})["exp"]))
        token = jwt.encode({**_claims(who), "iss": issuer, "aud": audience, "iat": int(now), "exp": expires},
                           self.keys.signing, algorithm=ALGORITHM, headers={"kid": self.keys.kid})
        if len(self._minted) >= 10_000:
            self._minted.clear()
        self._minted[cached] = (token, expires)
        return token


class Verifier:
    """Verifies the tokens sent to the service `audience` against the accepted keys, and keeps each one verified
    until it expires."""

    def __init__(self, keys: KeyRing, audience: str):
        self.keys = keys
        self.audience = audience
        self._verified: TTLCache[str, tuple[Tenant, float]] = TTLCache(maxsize=50_000, ttl=LIFETIME + _LEEWAY)

    def verify(self, token: str | None, method: str = "") -> Tenant:
        """The caller a token vouches for in a call of `method`; `unauthorized` when it is missing, expired,
        tampered, signed by a key not accepted, for another service, names a caller its issuer may not vouch for,
        or its issuer may not make `method`."""
        who = self._verified_caller(token)
        if method and not may_make(who.via[-1], method):
            raise refused(f"{who.via[-1]} may not call {method.rpartition('/')[2]}")
        return who

    def _verified_caller(self, token: str | None) -> Tenant:
        if not token:
            raise refused(f"no {METADATA_KEY} token (every call between processes carries one)")
        found = self._verified.get(token)
        if found is not None:
            if found[1] + _LEEWAY < time.time():
                raise refused("the token has expired")
            return found[0]
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError:
            raise refused("the token is malformed") from None
        key = self.keys.accepted.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise refused(f"the token's key {kid!r} is not one this service accepts")
        try:
            claims = jwt.decode(token, key, algorithms=[ALGORITHM], audience=self.audience, leeway=_LEEWAY,
                                options={"require": ["exp", "iat", "iss", "aud"]})
        except jwt.ExpiredSignatureError:
            raise refused("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise refused(f"the token is not for {self.audience}") from None
        except jwt.PyJWTError as exc:
            raise refused(f"the token does not verify ({exc})") from None
        issuer = issuer_of(kid)  # type: ignore[arg-type]
        who = _tenant(claims, issuer, token)
        if claims["iss"] != issuer or not may_vouch(issuer, who, self.audience):
            raise refused(f"{issuer} may not vouch for this caller to {self.audience}")
        if issuer != registry.GATEWAY and who.proof:
            self._proven(who)
        self._verified[token] = (who, float(claims["exp"]))
        return who

    def _proven(self, who: Tenant) -> None:
        """A re-signed caller's proof: the gateway's own token, for the first service of the chain, unexpired, naming
        the same caller or a wider one."""
        try:
            kid = jwt.get_unverified_header(who.proof).get("kid")
            key = self.keys.accepted.get(kid) if isinstance(kid, str) and issuer_of(kid) == registry.GATEWAY else None
            if key is None:
                raise refused("its proof is not the gateway's token")
            root = jwt.decode(who.proof, key, algorithms=[ALGORITHM], audience=who.via[1], leeway=_LEEWAY,
                              options={"require": ["exp", "iat", "iss", "aud"]})
        except jwt.PyJWTError as exc:
            raise refused(f"its proof does not verify ({exc})") from None
        if root.get("iss") != registry.GATEWAY or not _within(who, _tenant(root, registry.GATEWAY, who.proof)):
            raise refused("it names a caller its proof does not")


def keyring_of(settings: Settings, process: str) -> KeyRing:
    """The keys of `process` as its settings give them, of the accepted ones only its callers'
    (core.registry.callers_of: any other key in CALLER_VERIFY_KEYS is ignored); stops the process with a line naming
    the setting when one is missing or malformed. A process started by hand on the local stack with neither derives
    its keys from the server secret."""
    callers = registry.callers_of(process)
    signing, accepted = settings.caller_signing_key.reveal(), settings.caller_verify_keys
    if (not signing or (callers and not accepted)) and settings.environment == "local":
        try:
            secret = settings.secret_key.reveal()
        except RuntimeError:  # withheld (core.settings.load): its launcher gives it its keys
            raise SystemExit(f"{process}: CALLER_SIGNING_KEY and CALLER_VERIFY_KEYS must be set") from None
        derived = derived_keys(secret, dict.fromkeys((process, *callers)))
        signing = signing or derived[process][0]
        accepted = accepted or ",".join(derived[p][1] for p in callers)
    try:
        if callers and not accepted:
            raise ValueError("CALLER_VERIFY_KEYS must be set: the public keys of the processes whose callers this "
                             "one accepts (python -m core.caller new-key makes a pair)")
        keys = KeyRing.parse(signing, accepted)
    except ValueError as exc:
        raise SystemExit(f"{process}: {exc}") from None
    return KeyRing(keys.kid, keys.signing, {kid: key for kid, key in keys.accepted.items()
                                            if issuer_of(kid) in callers})


@dataclass
class _Process:
    signer: Signer | None = None
    verifier: Verifier | None = None


_this = _Process()


def configure(keys: KeyRing, process: str) -> None:
    """Set this process's keys and name (at start: core.grpc_server.serve, the gateway)."""
    _this.signer, _this.verifier = Signer(keys), Verifier(keys, process)


def metadata_for(who: Tenant, audience: str) -> tuple[tuple[str, str], ...]:
    """The metadata that carries `who` to the service `audience`."""
    if _this.signer is None:
        raise RuntimeError("core.caller is not configured in this process")
    return ((METADATA_KEY, _this.signer.token_for(who, audience)),)


def verified(metadata: dict[str, str], method: str = "") -> Tenant:
    """The caller of an incoming call of `method` (core.interceptors), or `unauthorized`."""
    if _this.verifier is None:
        raise RuntimeError("core.caller is not configured in this process")
    return _this.verifier.verify(metadata.get(METADATA_KEY), method)


def main(argv: list[str]) -> int:
    """`python -m core.caller new-key <process>:<version>`: a new key pair's two settings entries."""
    if len(argv) != 2 or argv[0] != "new-key" or ":" not in argv[1]:
        print("usage: python -m core.caller new-key <process>:<version>", file=sys.stderr)
        return 2
    signing, verify = new_key(argv[1])
    print(f"CALLER_SIGNING_KEY={signing}   (this process only)\nCALLER_VERIFY_KEYS entry: {verify}   (the services it calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
