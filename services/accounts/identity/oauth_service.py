"""OAuth 2.1 sign-in for the assistant connector: clients, the account user's approval, codes and tokens.

A *grant* is one approval by the signed-in account user: a client, the scopes and the businesses approved, and the
resource (the connector's URI). Codes and refresh tokens belong to a grant and are stored hashed; access tokens are
short JWTs naming their grant (services.accounts.identity.oauth_tokens). Revoking a grant ends all of it at once: its
refresh tokens are refused, and the gateways drop cached principals of the account so its access tokens are too.
A code or refresh token used twice is taken as stolen (RFC 6749 10.5, OAuth 2.1 4.3.1): the grant is revoked.

Errors are `ServiceError`s whose `oauth_error` detail is the RFC 6749 error code; errors of an authorization request
that may go back to the client carry `redirect_to`, the client's redirect URI with the error (and state and iss).
Only a client the signed-in user has approved (a grant in force) gets its errors back: anyone can register a client
or publish a metadata document, and a link to its authorization request would otherwise send a visitor on to any
redirect URI with no click (RFC 6749 4.1.2.1 keeps the client's and redirect URI's errors local; so do we all the
errors of a client the user has not approved).
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar
from urllib.parse import urlencode

from core.errors import ServiceError
from core.ids import new_id, require_uuid, utcnow
from core.uow import UnitOfWork
from services.accounts import secret_keys
from services.accounts.domain import new_secret_token
from services.accounts.identity import oauth_domain as rules
from services.accounts.identity.client_documents import ClientDocuments
from services.accounts.identity.oauth_domain import OAuthError
from services.accounts.identity.oauth_tokens import AccessTokens
from services.accounts.identity.service import Identity, Principal
from services.accounts.oauth_repository import OAuthRepository
from services.accounts.records import (
    BusinessName,
    OAuthClient,
    OAuthCode,
    OAuthConnection,
    OAuthRefreshToken,
    OneUseCredential,
)
from services.accounts.repository import AccountsUnit

DOCUMENT_TTL = timedelta(hours=1)  # a client ID metadata document is fetched again after this long
CLIENT_ID_PREFIX = "sbc_"
CREDENTIALS = {"code": "authorization code", "refresh_token": "refresh token"}  # one-use, by their form field


@dataclass(frozen=True)
class AuthorizationRequest:
    """The query of GET /oauth/authorize, as sent (empty: absent)."""

    response_type: str = ""
    client_id: str = ""
    redirect_uri: str = ""
    scope: str = ""
    state: str = ""
    code_challenge: str = ""
    code_challenge_method: str = ""
    resource: str = ""


@dataclass(frozen=True)
class Authorization:
    """A valid authorization request, with what the consent page shows."""

    client: OAuthClient
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str
    challenge: str
    resource: str


@dataclass(frozen=True)
class Consent:
    authorization: Authorization
    account_id: str | None  # None: nobody is signed in
    businesses: list[BusinessName]  # oldest first


@dataclass(frozen=True)
class Tokens:
    access_token: str
    expires_in: int
    refresh_token: str
    scopes: tuple[str, ...]


Credential = TypeVar("Credential", bound=OneUseCredential)
# How a one-use credential is found by the hashes of its secret, and used for tokens (`OAuth._exchange` or
# `OAuth._rotate`).
Take = Callable[[OAuthRepository, list[str]], Awaitable[Credential | None]]
Redeem = Callable[[OAuthRepository, Credential, dict[str, str], datetime], Awaitable[Tokens]]


def refusal(err: OAuthError, redirect_to: str = "") -> ServiceError:
    code = "unauthorized" if err.error == "invalid_client" else "invalid_request"
    if redirect_to:
        return ServiceError(code, err.description, oauth_error=err.error, redirect_to=redirect_to)
    return ServiceError(code, err.description, oauth_error=err.error)


class OAuth:
    def __init__(self, identity: Identity, documents: ClientDocuments):
        self.identity = identity
        self.documents = documents
        self.issuer = identity.base_url
        self.resource = f"{identity.base_url}/api/mcp"
        self.tokens = AccessTokens(identity.keys, self.issuer, self.resource)

    @property
    def uow(self) -> UnitOfWork[AccountsUnit]:
        """The accounts unit of work: OAuth's storage is its `oauth` repository."""
        return self.identity.uow

    # -- clients -----------------------------------------------------------------------------

    async def register(self, metadata: dict[str, Any]) -> OAuthClient:
        """Dynamic client registration (RFC 7591) of a public client."""
        try:
            fields = rules.check_registration(metadata)
        except OAuthError as err:
            raise refusal(err) from None
        async with self.uow.transaction() as work:
            return await work.oauth.add_client(client_id=CLIENT_ID_PREFIX + new_secret_token(18),
                                               source="registration", created_at=utcnow(), **fields)

    async def _client(self, client_id: str) -> OAuthClient:
        """The client a client_id names: registered here, or described by its metadata document (fetched when
        not known or known for longer than DOCUMENT_TTL)."""
        rules.check_client_id(client_id)
        async with self.uow.read() as work:
            known = await work.oauth.client(client_id)
        if not rules.is_metadata_document_id(client_id, self.documents.allow_loopback):
            if known is None:
                raise OAuthError("invalid_client", f"unknown client_id {client_id!r}: register the client at "
                                 f"{self.issuer}/oauth/register or use a client ID metadata document URL")
            return known
        now = utcnow()
        if known is not None and known.fetched_at is not None and now - known.fetched_at < DOCUMENT_TTL:
            return known
        fields = rules.check_metadata_document(client_id, await self.documents.fetch(client_id))
        async with self.uow.transaction() as work:
            return await work.oauth.save_client_document(client_id=client_id, source="metadata_document",
                                                         created_at=now, fetched_at=now, **fields)

    # -- the authorization request and the account user's decision --------------------------

    def _redirect(self, uri: str, state: str, **params: str) -> str:
        query = {**params, **({"state": state} if state else {}), "iss": self.issuer}
        return f"{uri}{'&' if '?' in uri else '?'}{urlencode(query)}"

    async def _authorization(self, req: AuthorizationRequest, account_id: str | None) -> Authorization:
        """The request checked in RFC 6749's order: the client and its redirect URI first (their errors are shown
        to the user, never redirected), then the rest (errors go back to the client's redirect URI when the signed-in
        account, `account_id`, approved the client; else they are shown too)."""
        try:
            client = await self._client(req.client_id)
            redirect_uri = req.redirect_uri
            if not redirect_uri:
                if len(client.redirect_uris) != 1:
                    raise OAuthError("invalid_request", "redirect_uri is required: the client registered several")
                redirect_uri = client.redirect_uris[0]
            elif not rules.redirect_matches(list(client.redirect_uris), redirect_uri):
                raise OAuthError("invalid_request", f"redirect_uri {redirect_uri!r} is not one the client registered")
        except OAuthError as err:
            raise refusal(err) from None
        try:
            if req.response_type != "code":
                raise OAuthError("unsupported_response_type", "response_type must be code")
            challenge = rules.check_challenge(req.code_challenge or None, req.code_challenge_method or None)
            scopes = rules.requested_scopes(req.scope)
            resource = rules.check_resource(req.resource or self.resource, self.resource)
        except OAuthError as err:
            if not await self._approved(account_id, client.client_id):
                raise refusal(err) from None
            back = self._redirect(redirect_uri, req.state, error=err.error, error_description=err.description)
            raise refusal(err, back) from None
        return Authorization(client, redirect_uri, scopes, req.state, challenge, resource)

    async def _approved(self, account_id: str | None, client_id: str) -> bool:
        if account_id is None:
            return False
        async with self.uow.read() as work:
            return await work.oauth.has_grant(account_id, client_id)

    async def _signed_in(self, session_token: str) -> str | None:
        """The session's account, or None when nobody is signed in."""
        async with self.uow.read() as work:
            try:
                return await self.identity.session_account(work.accounts, session_token)
            except ServiceError:
                return None

    async def consent(self, session_token: str, req: AuthorizationRequest) -> Consent:
        """What the consent page shows: the checked request, and the signed-in account's businesses (none and
        account_id None when nobody is signed in: the page asks to sign in first)."""
        account_id = await self._signed_in(session_token)
        authorization = await self._authorization(req, account_id)
        if account_id is None:
            return Consent(authorization, None, [])
        async with self.uow.read() as work:
            return Consent(authorization, account_id, await work.oauth.businesses_named(account_id))

    async def decide(self, session_token: str, req: AuthorizationRequest, approve: bool, scopes: list[str],
                     business_ids: list[str]) -> str:
        """Where the browser goes next: back to the client with a code (approved) or access_denied."""
        authorization = await self._authorization(req, await self._signed_in(session_token))
        if not approve:
            return self._redirect(authorization.redirect_uri, authorization.state,
                                  error="access_denied", error_description="the account user declined")
        approved = tuple(s for s in authorization.scopes if s in scopes)
        if not approved:
            raise ServiceError("invalid_request", "approve at least one of the requested scopes")
        now = utcnow()
        code = new_secret_token()
        async with self.uow.transaction() as work:
            account_id = await self.identity.session_account(work.accounts, session_token)
            own = set(await work.oauth.business_ids_of(account_id))
            chosen = list(dict.fromkeys(b for b in business_ids if b in own))
            if not chosen:
                raise ServiceError("invalid_request", "approve at least one of your businesses")
            grant_id = new_id()
            await work.oauth.add_grant(id=grant_id, account_id=account_id,
                                       client_id=authorization.client.client_id, scopes=list(approved),
                                       business_ids=chosen, resource=authorization.resource, created_at=now)
            await work.oauth.add_code(code_hash=self.identity.hash(secret_keys.OAUTH_CODE, code), grant_id=grant_id,
                                      redirect_uri=authorization.redirect_uri, code_challenge=authorization.challenge,
                                      expires_at=now + rules.CODE_TTL)
        return self._redirect(authorization.redirect_uri, authorization.state, code=code)

    # -- the token endpoint ------------------------------------------------------------------

    async def token(self, form: dict[str, str]) -> Tokens:
        try:
            grant_type = form.get("grant_type", "")
            if grant_type == "authorization_code":
                return await self._exchange_code(form)
            if grant_type == "refresh_token":
                return await self._refresh(form)
            raise OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        except OAuthError as err:
            raise refusal(err) from None

    async def _exchange_code(self, form: dict[str, str]) -> Tokens:
        return await self._redeem(form, ("code", "code_verifier", "client_id", "redirect_uri"),
                                  lambda oauth, hashes: oauth.take_code(hashes), self._exchange,
                                  "the authorization code was already used; every token issued with it is revoked")

    async def _refresh(self, form: dict[str, str]) -> Tokens:
        return await self._redeem(form, ("refresh_token", "client_id"),
                                  lambda oauth, hashes: oauth.take_refresh_token(hashes), self._rotate,
                                  "the refresh token was already used (each is used once); the sign-in is revoked, "
                                  "sign in again")

    async def _redeem(self, form: dict[str, str], required: tuple[str, ...], take: Take[Credential],
                      use: Redeem[Credential], spent: str) -> Tokens:
        """Tokens for a one-use credential (the first required field: a code or a refresh token), taken and used in
        one transaction; a second use revokes the grant."""
        for field in required:
            if not form.get(field):
                raise OAuthError("invalid_request", f"{field} is required")
        what = CREDENTIALS[required[0]]
        purpose = secret_keys.OAUTH_CODE if required[0] == "code" else secret_keys.OAUTH_REFRESH_TOKEN
        now = utcnow()
        async with self.uow.transaction() as work:
            row = await take(work.oauth, self.identity.keys.hashes(purpose, form[required[0]]))
            if row is None or row.expires_at <= now or row.revoked_at is not None:
                raise OAuthError("invalid_grant", f"the {what} is invalid, expired or revoked")
            if row.used_at is None:
                return await use(work.oauth, row, form, now)
        raise await self._spent(row, spent)

    async def _exchange(self, oauth: OAuthRepository, row: OAuthCode, form: dict[str, str],
                        now: datetime) -> Tokens:
        self._check_client_and_resource(row, form)
        if form["redirect_uri"] != row.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the authorization request's")
        if not rules.pkce_holds(form["code_verifier"], row.code_challenge):
            raise OAuthError("invalid_grant", "code_verifier does not match the code_challenge (PKCE)")
        await oauth.use_code(row.code_hash, now)
        return await self._issue(oauth, row, tuple(row.scopes), now)

    async def _rotate(self, oauth: OAuthRepository, row: OAuthRefreshToken, form: dict[str, str],
                      now: datetime) -> Tokens:
        self._check_client_and_resource(row, form)
        scopes = tuple(row.scopes)
        if form.get("scope"):
            asked = rules.requested_scopes(form["scope"])
            if not set(asked) <= set(scopes):
                raise OAuthError("invalid_scope", f"the sign-in approved {' '.join(scopes)} only")
            scopes = asked
        await oauth.use_refresh_token(row.token_hash, now)
        return await self._issue(oauth, row, scopes, now)

    async def _spent(self, row: OneUseCredential, why: str) -> OAuthError:
        """A code or refresh token used a second time: someone else may hold it, so the grant is revoked (in a
        transaction of its own: the refusal must not undo it)."""
        async with self.uow.transaction() as work:
            account_id = await work.oauth.revoke_grant(row.grant_id, utcnow())
        if account_id:
            await self.identity.invalidate(account_id)
        return OAuthError("invalid_grant", why)

    def _check_client_and_resource(self, row: OneUseCredential, form: dict[str, str]) -> None:
        if form["client_id"] != row.client_id:
            raise OAuthError("invalid_grant", "this grant was issued to another client")
        if form.get("resource"):
            rules.check_resource(form["resource"], row.resource)

    async def _issue(self, oauth: OAuthRepository, row: OneUseCredential, scopes: tuple[str, ...],
                     now: datetime) -> Tokens:
        refresh = new_secret_token()
        await oauth.add_refresh_token(token_hash=self.identity.hash(secret_keys.OAUTH_REFRESH_TOKEN, refresh),
                                      grant_id=row.grant_id, created_at=now, expires_at=now + rules.REFRESH_TTL)
        access = self.tokens.issue(account_id=row.account_id, grant_id=row.grant_id,
                                   client_id=row.client_id, scopes=scopes, now=now, expires_at=now + rules.ACCESS_TTL)
        return Tokens(access, int(rules.ACCESS_TTL.total_seconds()), refresh, scopes)

    # -- revocation and use ------------------------------------------------------------------

    async def revoke(self, token: str, client_id: str) -> str | None:
        """RFC 7009: revoke the grant behind a refresh or access token of this client, answering its account. Unknown
        tokens, and another client's, are ignored (the endpoint answers 200 either way)."""
        now = utcnow()
        async with self.uow.transaction() as work:
            grant_id = None
            claims = self.tokens.read(token, check_expiry=False)
            if claims is not None and claims.client_id == client_id:
                grant_id = claims.grant_id
            elif (row := await work.oauth.take_refresh_token(
                    self.identity.keys.hashes(secret_keys.OAUTH_REFRESH_TOKEN, token))) is not None \
                    and row.client_id == client_id:
                grant_id = row.grant_id
            account_id = await work.oauth.revoke_grant(str(grant_id), now) if grant_id else None
        if account_id:
            await self.identity.invalidate(account_id)
        return account_id and str(account_id)

    async def authenticate(self, token: str) -> Principal:
        """The principal of a valid access token whose grant is in force: the approved scopes, and the approved
        businesses the account still has."""
        claims = self.tokens.read(token)
        if claims is None:
            raise ServiceError("unauthorized", "the access token is invalid or expired, or not for this resource")
        now = utcnow()
        async with self.uow.transaction() as work:
            grant = await work.oauth.grant(claims.grant_id)
            if grant is None or grant.revoked_at is not None:
                raise ServiceError("unauthorized", "this sign-in was revoked; sign in again")
            own = await work.accounts.standings(claims.account_id)
            await work.oauth.touch_grant(claims.grant_id, now)
        business_ids = [str(b) for b in grant.business_ids if str(b) in own]
        return Principal(key_id=claims.grant_id, account_id=claims.account_id, business_ids=business_ids,
                         scopes=list(claims.scopes), bound_business_id=business_ids[0] if len(business_ids) == 1
                         else None, expires_at=datetime.fromtimestamp(claims.expires_at, now.tzinfo),
                         standings={b: own[b] for b in business_ids})

    # -- the dashboard's list of connected clients -------------------------------------------

    async def connections(self, session_token: str) -> list[OAuthConnection]:
        async with self.uow.read() as work:
            return await work.oauth.connections_of(await self.identity.session_account(work.accounts, session_token))

    async def disconnect(self, session_token: str, grant_id: str) -> str:
        """Revoke one connected client of the session's account, answering the account."""
        require_uuid(grant_id, "id")
        async with self.uow.transaction() as work:
            account_id = await self.identity.session_account(work.accounts, session_token)
            if not await work.oauth.revoke_grant(grant_id, utcnow(), account_id):
                raise ServiceError("not_found", "no such connected client")
        await self.identity.invalidate(account_id)
        return str(account_id)

