"""OAuth 2.1 sign-in for the assistant connector: the rules, as plain functions (no I/O).

Clients are public (no secret; PKCE with S256 only), known either by a client ID metadata document (the client_id
is an https URL whose JSON names the client and its redirect URIs) or by dynamic registration (RFC 7591). A
redirect URI must match one registered exactly, except that a loopback URI may name any port (RFC 8252 7.3: a
native app listens on an ephemeral one). Tokens are bound to the connector's resource URI (RFC 8707) and carry
only the connector's scopes the account user approved.
"""
from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import SplitResult

from authlib.oauth2.rfc7591 import ClientMetadataClaims
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc.errors import JoseError

from core.catalogue import NotInCatalogue, subset
from core.scopes import CONNECTOR_DEFAULT_SCOPES, CONNECTOR_SCOPES
from core.urls import split_url, url_parts

CODE_TTL = timedelta(minutes=1)
ACCESS_TTL = timedelta(minutes=10)
REFRESH_TTL = timedelta(days=30)
VERIFIER = re.compile(r"^[A-Za-z0-9._~-]{43,128}$")  # RFC 7636 4.1
GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_CLIENT_ID = 2000


@dataclass
class OAuthError(Exception):
    """An RFC 6749 error: `error` is its code (invalid_request, invalid_client, invalid_grant, invalid_scope, ...)."""

    error: str
    description: str

    def __str__(self) -> str:
        return f"{self.error}: {self.description}"


def check_client_id(client_id: str) -> str:
    if not client_id:
        raise OAuthError("invalid_request", "client_id is required")
    if len(client_id) > MAX_CLIENT_ID:
        raise OAuthError("invalid_client", f"client_id is longer than {MAX_CLIENT_ID} characters")
    return client_id


def pkce_holds(verifier: str, challenge: str) -> bool:
    """Whether the token request's code_verifier is the one behind the authorization request's S256 challenge."""
    if not VERIFIER.match(verifier or ""):
        return False
    return hmac.compare_digest(create_s256_code_challenge(verifier), challenge)


def check_challenge(challenge: str | None, method: str | None) -> str:
    """The authorization request's PKCE challenge: required, S256 only (OAuth 2.1)."""
    if not challenge:
        raise OAuthError("invalid_request", "code_challenge is required (PKCE)")
    if method != "S256":
        raise OAuthError("invalid_request", "code_challenge_method must be S256")
    if not VERIFIER.match(challenge):
        raise OAuthError("invalid_request", "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
    return challenge


def requested_scopes(scope: str | None) -> tuple[str, ...]:
    """The scopes a client asks for (space-separated), each one of the connector's; none asked: the defaults."""
    try:
        asked = tuple(subset((scope or "").split(), CONNECTOR_SCOPES))
    except NotInCatalogue as exc:
        raise OAuthError("invalid_scope", f"unknown scope {exc}; the connector's scopes are "
                         f"{' '.join(CONNECTOR_SCOPES)}") from None
    return asked or CONNECTOR_DEFAULT_SCOPES


def check_resource(resource: str | None, ours: str) -> str:
    """The resource a token is asked for (RFC 8707) must be the connector's."""
    if resource is None:
        raise OAuthError("invalid_target", f"resource is required: {ours}")
    if resource.rstrip("/") != ours.rstrip("/"):
        raise OAuthError("invalid_target", f"tokens are issued for {ours} only")
    return ours


def _is_loopback(parts: SplitResult) -> bool:
    return parts.scheme == "http" and (parts.hostname or "") in ("127.0.0.1", "::1", "localhost")


def check_redirect_uri(uri: str) -> str:
    """A redirect URI a client may register: https, or http on a loopback address; absolute, no fragment."""
    parts = split_url(uri, f"redirect_uris: {uri!r}", lambda message: OAuthError("invalid_redirect_uri", message))
    if not parts.scheme or not parts.netloc or parts.fragment:
        raise OAuthError("invalid_redirect_uri", f"{uri!r} must be an absolute URI without a fragment")
    if parts.scheme != "https" and not _is_loopback(parts):
        raise OAuthError("invalid_redirect_uri", f"{uri!r} must use https (or http on a loopback address)")
    return uri


def redirect_matches(registered: list[str], given: str) -> bool:
    """Exact match; a loopback URI matches whatever its port (RFC 8252 7.3). A registered URI was checked when
    registered (check_redirect_uri)."""
    if given in registered:
        return True
    g = split_url(given, "redirect_uri", lambda message: OAuthError("invalid_request", message))
    if not _is_loopback(g):
        return False
    return any(r is not None and _is_loopback(r) and (r.hostname, r.path, r.query) == (g.hostname, g.path, g.query)
               for r in map(url_parts, registered))


def check_registration(metadata: dict[str, Any]) -> dict[str, Any]:
    """RFC 7591 client metadata, for a public client of the authorization code grant: the stored fields."""
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise OAuthError("invalid_redirect_uri", "redirect_uris must list at least one URI")
    for uri in uris:
        check_redirect_uri(uri)
    try:  # the other URIs and the field types, as RFC 7591 defines them
        ClientMetadataClaims(dict(metadata), {}).validate()
    except JoseError as exc:
        raise OAuthError("invalid_client_metadata", exc.description or str(exc)) from None
    method = metadata.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise OAuthError("invalid_client_metadata", "only public clients are supported: token_endpoint_auth_method "
                         "none, with PKCE")
    grants = metadata.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= set(GRANT_TYPES):
        raise OAuthError("invalid_client_metadata", f"grant_types may be {', '.join(GRANT_TYPES)}")
    if metadata.get("response_types", ["code"]) != ["code"]:
        raise OAuthError("invalid_client_metadata", "response_types must be [\"code\"]")
    name = metadata.get("client_name")
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 200):
        raise OAuthError("invalid_client_metadata", "client_name must be 1 to 200 characters")
    return {"redirect_uris": uris, "client_name": name, "grant_types": grants,
            "client_uri": metadata.get("client_uri")}


def is_metadata_document_id(client_id: str, allow_loopback: bool = False) -> bool:
    """A client_id that is the https URL of a client ID metadata document (with a path, no fragment); on a
    developer's stack (`allow_loopback`) an http URL on a loopback address too."""
    parts = split_url(client_id, "client_id", lambda message: OAuthError("invalid_client", message))
    secure = parts.scheme == "https" or (allow_loopback and _is_loopback(parts))
    return secure and bool(parts.netloc) and parts.path not in ("", "/") and not parts.fragment


def check_metadata_document(client_id: str, document: object) -> dict[str, Any]:
    """A fetched client ID metadata document: it must name itself by its URL and follow the registration rules."""
    if not isinstance(document, dict):
        raise OAuthError("invalid_client", "the client ID metadata document is not a JSON object")
    if document.get("client_id") != client_id:
        raise OAuthError("invalid_client", "the client ID metadata document's client_id is not its own URL")
    try:
        return check_registration(document)
    except OAuthError as err:
        raise OAuthError("invalid_client", f"the client ID metadata document: {err.description}") from None
