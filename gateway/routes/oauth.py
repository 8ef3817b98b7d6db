"""OAuth 2.1 sign-in for the assistant connector, the machine side: the metadata documents (RFC 9728, RFC 8414),
dynamic client registration (RFC 7591), the token endpoint and revocation (RFC 7009).

The browser side (the authorization endpoint with its sign-in and consent pages) is gateway.dashboard.consent; the
rules and the state are the accounts service's (services.accounts.identity.oauth_service). These handlers speak the RFCs'
formats rather than the API's: form-encoded requests, `{error, error_description}` refusals, `Cache-Control:
no-store` on everything that carries a token.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import grpc
from aiohttp import web
from multidict import MultiMapping

from core.errors import ServiceError
from core.grpc_errors import from_rpc_error
from core.messages import struct
from core.scopes import CONNECTOR_DEFAULT_SCOPES, CONNECTOR_SCOPES
from gateway import validation
from gateway.errors import from_service_error
from gateway.route import PUBLIC, Reply, RequestContext, Route
from gateway.schemas import OAUTH
from switchboard.v1 import accounts_pb2

R = TypeVar("R")
T = TypeVar("T")

MCP_PATH = "/api/mcp"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
AUTHORIZE_PATH, TOKEN_PATH, REGISTER_PATH, REVOKE_PATH = ("/oauth/authorize", "/oauth/token", "/oauth/register",
                                                          "/oauth/revoke")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
ACCOUNTS = "switchboard.v1.Accounts"
MAX_PARAMETER = 4096  # characters of one form parameter


def resource_metadata_url(base_url: str) -> str:
    """Where a client learns how to sign in to the connector (RFC 9728 3.1: the resource's path appended)."""
    return f"{base_url}{RESOURCE_METADATA_PATH}{MCP_PATH}"


def sign_in_challenge(base_url: str, credential_sent: bool) -> str:
    """The 401 challenge of the connector: where its resource metadata is and the scopes to ask for; with
    error="invalid_token" when a key or token was sent but refused (RFC 6750 3.1)."""
    challenge = (f'Bearer resource_metadata="{resource_metadata_url(base_url)}", '
                 f'scope="{" ".join(CONNECTOR_DEFAULT_SCOPES)}"')
    return challenge + (', error="invalid_token"' if credential_sent else "")


class Refused(Exception):
    """A request the endpoint refuses before asking the accounts service, as an RFC 6749 error."""

    def __init__(self, error: str, description: str):
        super().__init__(description)
        self.error, self.description = error, description


def oauth_error(error: str, description: str, status: int = 400) -> web.Response:
    return web.json_response({"error": error, "error_description": description}, status=status, headers=NO_STORE)


def _refusal(err: ServiceError) -> web.Response:
    """A refusal of the accounts service in RFC 6749's shape (an outage stays the API's envelope)."""
    if "oauth_error" not in err.details:
        return from_service_error(err)
    error = err.details["oauth_error"]
    return oauth_error(error, err.message, 401 if error == "invalid_client" else 400)


async def ask(call: Callable[[R], Awaitable[T]], request: R) -> T:
    """An RPC's reply, or its failure as the public ServiceError (for handlers that answer errors themselves)."""
    try:
        return await call(request)
    except grpc.aio.AioRpcError as exc:
        raise from_rpc_error(exc) from None


def parameters(given: MultiMapping[Any], names: Iterable[str]) -> dict[str, str]:
    """The named parameters of a query or form (others are ignored): each at most once (RFC 6749 3.1), text of at
    most MAX_PARAMETER characters that can be stored; an empty one counts as absent."""
    found: dict[str, str] = {}
    for name in names:
        values = given.getall(name, ())
        if len(values) > 1:
            raise Refused("invalid_request", f"{name} is sent more than once")
        if not values or values[0] == "":
            continue
        if not isinstance(values[0], str):
            raise Refused("invalid_request", f"{name} must be text")
        if len(values[0]) > MAX_PARAMETER:
            raise Refused("invalid_request", f"{name} is longer than {MAX_PARAMETER} characters")
        found[name] = values[0]
    if where := validation.unstorable_text_path(found):
        raise Refused("invalid_request", f"{where} must be valid text without NUL characters")
    return found


async def _form(request: web.Request, schema: dict[str, Any]) -> dict[str, str]:
    """The parameters of a form-encoded request that the endpoint's form schema names."""
    if request.content_type != "application/x-www-form-urlencoded":
        raise Refused("invalid_request", "send the parameters as application/x-www-form-urlencoded")
    try:
        posted = await request.post()
    except (ValueError, UnicodeDecodeError):
        raise Refused("invalid_request", "the form is not valid application/x-www-form-urlencoded") from None
    return parameters(posted, schema["properties"])


# -- metadata --------------------------------------------------------------------------------------

async def protected_resource(ctx: RequestContext) -> Reply:
    base = ctx.deps.settings.public_base_url
    return {"resource": f"{base}{MCP_PATH}", "authorization_servers": [base], "scopes_supported": list(CONNECTOR_SCOPES),
            "bearer_methods_supported": ["header"], "resource_name": "Switchboard assistant connector",
            "resource_documentation": f"{base}/api/v1/openapi.json"}


async def authorization_server(ctx: RequestContext) -> Reply:
    base = ctx.deps.settings.public_base_url
    return {"issuer": base, "authorization_endpoint": base + AUTHORIZE_PATH, "token_endpoint": base + TOKEN_PATH,
            "registration_endpoint": base + REGISTER_PATH, "revocation_endpoint": base + REVOKE_PATH,
            "scopes_supported": list(CONNECTOR_SCOPES), "response_types_supported": ["code"],
            "response_modes_supported": ["query"], "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"], "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"], "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
            "service_documentation": f"{base}/api/v1/openapi.json"}


# -- registration, tokens, revocation --------------------------------------------------------------

async def register(ctx: RequestContext) -> Reply:
    try:
        metadata = validation.parse_json(await ctx.request.read())
    except (ValueError, UnicodeDecodeError, RecursionError):
        return oauth_error("invalid_client_metadata", "the body must be a JSON object of client metadata (RFC 7591)")
    if not isinstance(metadata, dict) or validation.depth(metadata) > validation.MAX_DEPTH:
        return oauth_error("invalid_client_metadata", "the body must be a JSON object of client metadata (RFC 7591)")
    if where := validation.unstorable_text_path(metadata):
        return oauth_error("invalid_client_metadata", f"{where} must be valid text without NUL characters")
    try:
        client = await ask(ctx.rpc("accounts").RegisterOAuthClient,
                            accounts_pb2.RegisterOAuthClientRequest(metadata=struct(metadata)))
    except ServiceError as err:
        return _refusal(err)
    reply = {"client_id": client.client_id, "client_id_issued_at": client.created_at.seconds,
             "redirect_uris": list(client.redirect_uris), "grant_types": list(client.grant_types),
             "response_types": ["code"], "token_endpoint_auth_method": "none"}
    reply |= {k: v for k in ("client_name", "client_uri") if (v := getattr(client, k))}
    return web.json_response(reply, status=201, headers=NO_STORE)


async def token(ctx: RequestContext) -> Reply:
    try:
        form = await _form(ctx.request, OAUTH["OAuthTokenForm"])
        issued = await ask(ctx.rpc("accounts").ExchangeOAuthToken, accounts_pb2.OAuthTokenRequest(form=form))
    except Refused as err:
        return oauth_error(err.error, err.description)
    except ServiceError as err:
        return _refusal(err)
    return web.json_response({"access_token": issued.access_token, "token_type": "Bearer",
                              "expires_in": issued.expires_in, "refresh_token": issued.refresh_token,
                              "scope": " ".join(issued.scopes)}, headers=NO_STORE)


async def revoke(ctx: RequestContext) -> Reply:
    try:
        form = await _form(ctx.request, OAUTH["OAuthRevokeForm"])
        for field in ("token", "client_id"):
            if field not in form:
                raise Refused("invalid_request", f"{field} is required")
        reply = await ask(ctx.rpc("accounts").RevokeOAuthToken,
                          accounts_pb2.RevokeOAuthTokenRequest(token=form["token"], client_id=form["client_id"]))
        if reply.account_id:  # this replica forgets at once; the others hear it over NATS
            ctx.deps.auth.forget_account(reply.account_id)
    except Refused as err:
        return oauth_error(err.error, err.description)
    except ServiceError as err:
        return _refusal(err)
    return web.Response(status=200, headers=NO_STORE)


OAUTH_REFUSAL = "An RFC 6749 error: {error, error_description}"
SIGN_IN = ("OAuth 2.1 sign-in for the assistant connector (" + MCP_PATH + "): authorization code with PKCE (S256 "
           "only) for public clients, known by a client ID metadata document (an https client_id) or registered at "
           + REGISTER_PATH + ". The account user signs in on the dashboard and approves the scopes and businesses at "
           + AUTHORIZE_PATH + "; access tokens last 10 minutes, are bound to the connector's resource URI and work "
           "only on " + MCP_PATH + "; refresh tokens rotate on every use (one used twice revokes the sign-in).")
ROUTES = [
    Route("GET", RESOURCE_METADATA_PATH, protected_resource, "Protected-resource metadata (RFC 9728)", "oauth",
          auth=PUBLIC, response="OAuthProtectedResource", description=SIGN_IN),
    Route("GET", RESOURCE_METADATA_PATH + MCP_PATH, protected_resource,
          "Protected-resource metadata of the connector (RFC 9728, path form)", "oauth", auth=PUBLIC,
          response="OAuthProtectedResource", description="The same document, where RFC 9728 puts it for "
          + MCP_PATH + " (a 401 from the connector names it in WWW-Authenticate: Bearer resource_metadata)."),
    Route("GET", "/.well-known/oauth-authorization-server", authorization_server,
          "Authorization-server metadata (RFC 8414)", "oauth", auth=PUBLIC, response="OAuthServerMetadata",
          description=SIGN_IN),
    Route("GET", "/.well-known/openid-configuration", authorization_server,
          "Authorization-server metadata at the OpenID discovery path", "oauth", auth=PUBLIC,
          response="OAuthServerMetadata", description="The RFC 8414 document, for clients that look here first. "
          "Switchboard issues no ID tokens."),
    Route("POST", REGISTER_PATH, register, "Register an OAuth client (RFC 7591)", "oauth", auth=PUBLIC,
          own_body=OAUTH["OAuthClientMetadata"], response="OAuthClient", status=201,
          own_replies={400: (OAUTH_REFUSAL + ": invalid_client_metadata or invalid_redirect_uri", "OAuthError")},
          rpcs=(f"{ACCOUNTS}/RegisterOAuthClient",),
          description="Public clients only (token_endpoint_auth_method none, with PKCE): no client_secret is "
          "issued. redirect_uris are https, or http on a loopback address (any port matches at authorization, "
          "RFC 8252). Clients that can publish a client ID metadata document may skip registration."),
    Route("POST", TOKEN_PATH, token, "The token endpoint", "oauth", auth=PUBLIC, form=OAUTH["OAuthTokenForm"],
          response="OAuthTokens",
          own_replies={400: (OAUTH_REFUSAL + ": invalid_request, invalid_grant (a code or refresh token that is "
                             "unknown, expired, used, for another client or redirect_uri, or a PKCE verifier that "
                             "does not match), invalid_scope, invalid_target, unsupported_grant_type", "OAuthError"),
                       401: (OAUTH_REFUSAL + ": invalid_client", "OAuthError")},
          rpcs=(f"{ACCOUNTS}/ExchangeOAuthToken",),
          description="grant_type authorization_code (code, redirect_uri, client_id, code_verifier, resource) or "
          "refresh_token (refresh_token, client_id, optional scope to narrow, resource). Answers access_token (a "
          "JWT for the resource, 600 s), refresh_token (a new one each time: the old one is spent) and scope."),
    Route("POST", REVOKE_PATH, revoke, "Revoke a sign-in (RFC 7009)", "oauth", auth=PUBLIC,
          form=OAUTH["OAuthRevokeForm"], own_replies={400: (OAUTH_REFUSAL + ": invalid_request", "OAuthError")},
          rpcs=(f"{ACCOUNTS}/RevokeOAuthToken",),
          description="An access or refresh token of the client (client_id): the whole sign-in it belongs to is "
          "revoked, its tokens refused from the next request. An unknown token also answers 200 (RFC 7009)."),
]
