"""identity's RPCs: API keys, dashboard sessions and sign-in links, and the OAuth connector's sign-in."""
from __future__ import annotations

from google.protobuf import json_format

from core.interceptors import Context
from core.messages import optional, set_timestamp
from core.pagination import opt_datetime
from services.accounts.identity.oauth_service import AuthorizationRequest, OAuth
from services.accounts.identity.service import UNSET, ApiKey, Identity, KeyChanges, Principal
from services.accounts.identity.sign_in import SignInLinks
from services.accounts.records import OAuthClient, OAuthConnection
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc


def key_message(view: ApiKey) -> accounts_pb2.ApiKey:
    k = view.key
    key = accounts_pb2.ApiKey(id=k.id, prefix=k.prefix, name=k.name, scopes=list(k.scopes),
                              is_active=view.is_active, key=view.secret)
    if k.business_id is not None:
        key.business_id = k.business_id
    set_timestamp(key, "created_at", k.created_at)
    set_timestamp(key, "last_used_at", k.last_used_at)
    set_timestamp(key, "expires_at", k.expires_at)
    return key


def principal_message(p: Principal) -> accounts_pb2.KeyPrincipal:
    principal = accounts_pb2.KeyPrincipal(key_id=p.key_id, account_id=p.account_id, business_ids=p.business_ids,
                                          scopes=p.scopes, business_id=p.bound_business_id, standings=p.standings)
    set_timestamp(principal, "expires_at", p.expires_at)
    return principal


def oauth_client_message(row: OAuthClient) -> accounts_pb2.OAuthClient:
    client = accounts_pb2.OAuthClient(client_id=row.client_id, client_name=row.client_name or "",
                                      redirect_uris=list(row.redirect_uris), grant_types=list(row.grant_types),
                                      client_uri=row.client_uri or "")
    set_timestamp(client, "created_at", row.created_at)
    return client


def connection_message(row: OAuthConnection) -> accounts_pb2.OAuthConnection:
    c = accounts_pb2.OAuthConnection(id=str(row.id), client_id=row.client_id, client_name=row.client_name or "",
                                     scopes=list(row.scopes), business_ids=[str(b) for b in row.business_ids])
    set_timestamp(c, "created_at", row.created_at)
    set_timestamp(c, "last_used_at", row.last_used_at)
    return c


def _authorization_request(m: accounts_pb2.OAuthAuthorization) -> AuthorizationRequest:
    return AuthorizationRequest(**{f.name: getattr(m, f.name) for f in m.DESCRIPTOR.fields})


class IdentityServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, identity: Identity, oauth: OAuth, sign_in: SignInLinks):
        self.identity = identity
        self.oauth = oauth
        self.sign_in = sign_in

    async def AuthenticateKey(self, request: accounts_pb2.AuthenticateKeyRequest, context: Context) -> accounts_pb2.KeyPrincipal:
        return principal_message(await self.identity.authenticate_key(request.key))

    async def AuthenticateSession(self, request: accounts_pb2.AuthenticateSessionRequest, context: Context) -> accounts_pb2.KeyPrincipal:
        return principal_message(await self.identity.authenticate_session(request.session_token))

    async def RedeemMagicLink(self, request: accounts_pb2.RedeemMagicLinkRequest, context: Context) -> accounts_pb2.DashboardSession:
        session = await self.identity.redeem_magic_link(request.token)
        reply = accounts_pb2.DashboardSession(session_token=session.token, account_id=session.account_id)
        set_timestamp(reply, "expires_at", session.expires_at)
        return reply

    async def SendSignInLink(self, request: accounts_pb2.SendSignInLinkRequest, context: Context) -> accounts_pb2.SendSignInLinkReply:
        self.sign_in.send(request.email, request.next_path)
        return accounts_pb2.SendSignInLinkReply()

    async def SignOut(self, request: accounts_pb2.SignOutRequest, context: Context) -> accounts_pb2.SignOutReply:
        return accounts_pb2.SignOutReply(sessions_ended=await self.identity.sign_out(request.session_token,
                                                                                    request.everywhere))

    async def ListKeys(self, request: accounts_pb2.ListKeysRequest, context: Context) -> accounts_pb2.ListKeysReply:
        return accounts_pb2.ListKeysReply(keys=[key_message(k) for k in
                                                await self.identity.list_keys(request.session_token)])

    async def CreateKey(self, request: accounts_pb2.CreateKeyRequest, context: Context) -> accounts_pb2.ApiKey:
        return key_message(await self.identity.create_key(
            request.session_token, optional(request, "name"), list(request.scopes) if request.scopes_given else None,
            optional(request, "business_id"), opt_datetime(request, "expires_at")))

    async def UpdateKey(self, request: accounts_pb2.UpdateKeyRequest, context: Context) -> accounts_pb2.ApiKey:
        expires_at = UNSET
        if request.clear_expires_at:
            expires_at = None
        if request.HasField("expires_at"):
            expires_at = opt_datetime(request, "expires_at")
        changes = KeyChanges(name=optional(request, "name"),
                             scopes=list(request.scopes) if request.scopes_given else None,
                             business_id=request.business_id if request.HasField("business_id") else UNSET,
                             expires_at=expires_at, expire=request.expire, revoke=request.revoke)
        return key_message(await self.identity.update_key(request.session_token, request.id, changes))

    async def RevokeKey(self, request: accounts_pb2.RevokeKeyRequest, context: Context) -> accounts_pb2.RevokeKeyReply:
        await self.identity.revoke_key(request.session_token, request.id)
        return accounts_pb2.RevokeKeyReply(success=True)

    # -- OAuth sign-in for the assistant connector --

    async def RegisterOAuthClient(self, request: accounts_pb2.RegisterOAuthClientRequest, context: Context) -> accounts_pb2.OAuthClient:
        return oauth_client_message(await self.oauth.register(json_format.MessageToDict(request.metadata)))

    async def StartOAuthConsent(self, request: accounts_pb2.OAuthConsentRequest, context: Context) -> accounts_pb2.OAuthConsent:
        consent = await self.oauth.consent(request.session_token, _authorization_request(request.authorization))
        a = consent.authorization
        return accounts_pb2.OAuthConsent(
            signed_in=consent.account_id is not None, client=oauth_client_message(a.client),
            redirect_uri=a.redirect_uri, scopes=a.scopes,
            businesses=[accounts_pb2.OAuthBusiness(id=str(b.id), name=b.name) for b in consent.businesses])

    async def DecideOAuthConsent(self, request: accounts_pb2.OAuthDecision, context: Context) -> accounts_pb2.OAuthRedirect:
        return accounts_pb2.OAuthRedirect(location=await self.oauth.decide(
            request.session_token, _authorization_request(request.authorization), request.approve,
            list(request.scopes), list(request.business_ids)))

    async def ExchangeOAuthToken(self, request: accounts_pb2.OAuthTokenRequest, context: Context) -> accounts_pb2.OAuthTokens:
        t = await self.oauth.token(dict(request.form))
        return accounts_pb2.OAuthTokens(access_token=t.access_token, expires_in=t.expires_in,
                                        refresh_token=t.refresh_token, scopes=t.scopes)

    async def RevokeOAuthToken(self, request: accounts_pb2.RevokeOAuthTokenRequest, context: Context) -> accounts_pb2.RevokeOAuthTokenReply:
        return accounts_pb2.RevokeOAuthTokenReply(
            account_id=await self.oauth.revoke(request.token, request.client_id) or "")

    async def AuthenticateAccessToken(self, request: accounts_pb2.AuthenticateAccessTokenRequest, context: Context) -> accounts_pb2.KeyPrincipal:
        return principal_message(await self.oauth.authenticate(request.token))

    async def ListOAuthConnections(self, request: accounts_pb2.ListOAuthConnectionsRequest, context: Context) -> accounts_pb2.ListOAuthConnectionsReply:
        return accounts_pb2.ListOAuthConnectionsReply(
            connections=[connection_message(r) for r in await self.oauth.connections(request.session_token)])

    async def RevokeOAuthConnection(self, request: accounts_pb2.RevokeOAuthConnectionRequest, context: Context) -> accounts_pb2.RevokeOAuthConnectionReply:
        return accounts_pb2.RevokeOAuthConnectionReply(
            account_id=await self.oauth.disconnect(request.session_token, request.id))

