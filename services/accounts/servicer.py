"""Accounts gRPC servicer: requests into the account use cases (services.accounts.service), results into
replies."""
from __future__ import annotations

from datetime import UTC

from google.protobuf import json_format

from core import standing
from core.bus import PROVIDER_STREAM
from core.grpc_server import Runtime
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page, opt_datetime
from providers import configured
from providers.payments.webhooks import EVENTS_SUBJECT
from services.accounts import calls_consumer, payments_service, standing_consumer
from services.accounts.agents_port import GrpcAgents
from services.accounts.billing import BillingWorker, payment_parts
from services.accounts.checkouts import Checkouts, OpenInvoice
from services.accounts.client_documents import ClientDocuments
from services.accounts.oauth_service import AuthorizationRequest, OAuth
from services.accounts.payments_service import Payments
from services.accounts.records import OAuthClient, OAuthConnection, UsageRecord, Workspace, WorkspaceProvisioning
from services.accounts.repository import PooledAccounts, accounts_units
from services.accounts.service import UNSET, Accounts, ApiKey, KeyChanges, Principal
from services.accounts.sign_in import SignInLinks
from services.accounts.x402_billing import X402Billing
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc

WORKSPACES_PAGE = (50, 100)
USAGE_PAGE = (100, 500)


def workspace_message(w: Workspace, provisioning: WorkspaceProvisioning | None = None) -> accounts_pb2.Workspace:
    """A workspace (and the signup's provisioning saga, when asked for)."""
    ws = accounts_pb2.Workspace(id=w.id, name=w.name, lifecycle_state=w.lifecycle_state,
                                metadata=struct(w.metadata), subscription_status=w.subscription_status,
                                timezone=w.timezone, standing=standing.standing(w.lifecycle_state, w.subscription_status),
                                plan_id=w.plan_id)
    if w.external_ref is not None:
        ws.external_ref = w.external_ref
    set_timestamp(ws, "created_at", w.created_at)
    set_timestamp(ws, "updated_at", w.updated_at)
    if w.paid_through is not None:
        set_timestamp(ws, "paid_through", w.paid_through)
    if w.trial_ends_at is not None:
        set_timestamp(ws, "trial_ends_at", w.trial_ends_at)
    if provisioning is not None:
        p = provisioning
        ws.provisioning.CopyFrom(accounts_pb2.Provisioning(
            status=p.status, step=p.step, agent_id=p.agent_id,
            phone_number=p.phone_number, forward_to=p.forward_to, attempts=p.attempts, last_error=p.last_error))
        if p.status in ("pending", "retrying"):
            set_timestamp(ws.provisioning, "next_attempt_at", p.next_attempt_at)
    return ws


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


def usage_message(r: UsageRecord) -> accounts_pb2.UsageEntry:
    e = accounts_pb2.UsageEntry(id=str(r.id), endpoint=r.endpoint, method=r.method, status_code=r.status_code,
                                cost_cents=r.cost_cents, api_key_id=r.api_key_id or "", account_id=r.account_id,
                                call_id=r.call_id, business_id=r.business_id)
    set_timestamp(e, "created_at", r.created_at)
    return e


def _usage(e: accounts_pb2.UsageEntry) -> UsageRecord:
    return UsageRecord(id=e.id, account_id=e.account_id, business_id=optional(e, "business_id"), api_key_id=e.api_key_id,
                 endpoint=e.endpoint, method=e.method, status_code=e.status_code, call_id=optional(e, "call_id"),
                 cost_cents=e.cost_cents, created_at=e.created_at.ToDatetime(tzinfo=UTC))


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


class AccountsServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, accounts: Accounts, payments: Payments, oauth: OAuth, sign_in: SignInLinks,
                 checkouts: Checkouts, x402: X402Billing):
        self.accounts = accounts
        self.payments = payments
        self.x402 = x402
        self.oauth = oauth
        self.sign_in = sign_in
        self.checkouts = checkouts

    async def Signup(self, request: accounts_pb2.SignupRequest, context: Context) -> accounts_pb2.SignupReply:
        done = await self.accounts.signup(request.business_name, request.email, request.business_type,
                                          request.website, request.phone_forward_to, request.plan_id,
                                          request.client_ip, request.payment_signature, request.x402)
        reply = accounts_pb2.SignupReply(
            api_key=done.api_key, business_id=done.business_id, dashboard_url=done.dashboard_url,
            provisioning_deferred=done.provisioning_deferred, payment_capture=done.payment_capture,
            dashboard_magic_link=done.magic_link, agent_id=done.agent_id, phone_number=done.phone_number,
            checkout_url=done.checkout_url, payment_response=done.payment_response,
            payment_status=done.payment_status)
        set_timestamp(reply, "trial_ends_at", done.trial_ends_at)
        self.sign_in.send(request.email, "/dashboard", welcome=True)
        return reply

    async def AuthenticateKey(self, request: accounts_pb2.AuthenticateKeyRequest, context: Context) -> accounts_pb2.KeyPrincipal:
        return principal_message(await self.accounts.authenticate_key(request.key))

    async def AuthenticateSession(self, request: accounts_pb2.AuthenticateSessionRequest, context: Context) -> accounts_pb2.KeyPrincipal:
        return principal_message(await self.accounts.authenticate_session(request.session_token))

    async def RedeemMagicLink(self, request: accounts_pb2.RedeemMagicLinkRequest, context: Context) -> accounts_pb2.DashboardSession:
        session = await self.accounts.redeem_magic_link(request.token)
        reply = accounts_pb2.DashboardSession(session_token=session.token, account_id=session.account_id)
        set_timestamp(reply, "expires_at", session.expires_at)
        return reply

    async def SendSignInLink(self, request: accounts_pb2.SendSignInLinkRequest, context: Context) -> accounts_pb2.SendSignInLinkReply:
        self.sign_in.send(request.email, request.next_path)
        return accounts_pb2.SendSignInLinkReply()

    async def OpenCheckout(self, request: accounts_pb2.OpenCheckoutRequest, context: Context) -> accounts_pb2.CheckoutLink:
        business_id, found = await self.checkouts.reopen(optional(request, "business_id"))
        link = accounts_pb2.CheckoutLink(business_id=business_id, checkout_url=found.url)
        if isinstance(found, OpenInvoice):
            link.invoice_id = found.id
        else:
            link.checkout_session_id = found.id
            link.expires_at.FromSeconds(found.expires_at)
        return link

    async def PayByX402(self, request: accounts_pb2.PayByX402Request, context: Context) -> accounts_pb2.X402Renewal:
        outcome = await self.x402.renew(optional(request, "business_id"), request.payment_signature)
        b = outcome.business
        reply = accounts_pb2.X402Renewal(
            business_id=str(b.id), payment_status=outcome.status, subscription_status=b.subscription_status,
            lifecycle_state=b.lifecycle_state, transaction=outcome.transaction,
            payment_response=outcome.settled.response_header if outcome.settled else "")
        set_timestamp(reply, "paid_through", b.paid_through)
        return reply

    async def SignOut(self, request: accounts_pb2.SignOutRequest, context: Context) -> accounts_pb2.SignOutReply:
        return accounts_pb2.SignOutReply(sessions_ended=await self.accounts.sign_out(request.session_token,
                                                                                    request.everywhere))

    async def ListKeys(self, request: accounts_pb2.ListKeysRequest, context: Context) -> accounts_pb2.ListKeysReply:
        return accounts_pb2.ListKeysReply(keys=[key_message(k) for k in
                                                await self.accounts.list_keys(request.session_token)])

    async def CreateKey(self, request: accounts_pb2.CreateKeyRequest, context: Context) -> accounts_pb2.ApiKey:
        return key_message(await self.accounts.create_key(
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
        return key_message(await self.accounts.update_key(request.session_token, request.id, changes))

    async def RevokeKey(self, request: accounts_pb2.RevokeKeyRequest, context: Context) -> accounts_pb2.RevokeKeyReply:
        await self.accounts.revoke_key(request.session_token, request.id)
        return accounts_pb2.RevokeKeyReply(success=True)

    async def GetWorkspace(self, request: accounts_pb2.GetWorkspaceRequest, context: Context) -> accounts_pb2.Workspace:
        return workspace_message(*await self.accounts.get_workspace(request.id))

    async def GetWorkspaceOwner(self, request: accounts_pb2.GetWorkspaceRequest, context: Context) -> accounts_pb2.WorkspaceOwner:
        owner = await self.accounts.workspace_owner(request.id)
        return accounts_pb2.WorkspaceOwner(business_id=owner.id, business_name=owner.name,
                                           account_id=owner.account_id, email=owner.email,
                                           email_confirmed=owner.email_confirmed_at is not None)

    async def ListWorkspaces(self, request: accounts_pb2.ListWorkspacesRequest, context: Context) -> accounts_pb2.ListWorkspacesReply:
        paged = await self.accounts.list_workspaces(Page.of(request.page, *WORKSPACES_PAGE))
        return accounts_pb2.ListWorkspacesReply(workspaces=[workspace_message(r) for r in paged.rows],
                                                page=paged.info())

    async def CreateWorkspace(self, request: accounts_pb2.CreateWorkspaceRequest, context: Context) -> accounts_pb2.CreatedWorkspace:
        created = await self.accounts.create_workspace(
            request.name, json_format.MessageToDict(request.metadata), optional(request, "external_ref"),
            optional(request, "timezone"), request.payment_signature)
        return accounts_pb2.CreatedWorkspace(workspace=workspace_message(created.workspace),
                                             payment_response=created.payment_response)

    async def UpdateWorkspace(self, request: accounts_pb2.UpdateWorkspaceRequest, context: Context) -> accounts_pb2.Workspace:
        metadata = json_format.MessageToDict(request.metadata) if request.HasField("metadata") else None
        return workspace_message(await self.accounts.update_workspace(
            request.id, optional(request, "name"), metadata, optional(request, "action"), optional(request, "timezone")))

    async def BusinessZones(self, request: accounts_pb2.BusinessZonesRequest, context: Context) -> accounts_pb2.BusinessZonesReply:
        return accounts_pb2.BusinessZonesReply(businesses=[
            accounts_pb2.ZonedBusiness(business_id=z.id, name=z.name, timezone=z.timezone)
            for z in await self.accounts.business_zones()])

    async def RecordUsage(self, request: accounts_pb2.RecordUsageRequest, context: Context) -> accounts_pb2.RecordUsageReply:
        return accounts_pb2.RecordUsageReply(recorded=await self.accounts.record_usage(
            [_usage(e) for e in request.entries]))

    async def ListUsage(self, request: accounts_pb2.ListUsageRequest, context: Context) -> accounts_pb2.ListUsageReply:
        paged = await self.accounts.list_usage(opt_datetime(request, "start"), opt_datetime(request, "end"),
                                               Page.of(request.page, *USAGE_PAGE))
        return accounts_pb2.ListUsageReply(usage=[usage_message(r) for r in paged.rows], page=paged.info())

    async def GetBalance(self, request: accounts_pb2.GetBalanceRequest, context: Context) -> accounts_pb2.GetBalanceReply:
        return accounts_pb2.GetBalanceReply(businesses=[
            accounts_pb2.BalanceEntry(business_id=b.business_id, minutes_used=b.minutes_used,
                                      phone_numbers=b.phone_numbers, subscription_status=b.subscription_status)
            for b in await self.accounts.balances()])

    async def CheckPaymentsProvider(self, request: accounts_pb2.CheckPaymentsProviderRequest, context: Context) -> accounts_pb2.PaymentsProviderStatus:
        overall, checkout, x402 = await self.payments.check()
        return accounts_pb2.PaymentsProviderStatus(status=overall, checkout=checkout, x402=x402)

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


def build(runtime: Runtime) -> AccountsServicer:
    s = runtime.settings
    agents = GrpcAgents(runtime.client("agents"))
    uow = accounts_units(runtime.db)
    parts = payment_parts(s, uow, agents)
    runtime.on_stop.extend(parts.closers)
    runtime.run(BillingWorker(parts, s.billing_interval_seconds))
    # The provider's events the gateway stored: retried until they apply (a database outage of any length loses
    # none); only one that can never apply is terminated.
    runtime.consume(payments_service.EVENTS_CONSUMER, parts.payments.apply_event, stream=PROVIDER_STREAM,
                    filter_subject=EVENTS_SUBJECT, max_deliver=-1)
    accounts = Accounts(uow, PooledAccounts(runtime.db), runtime.bus, s, parts.payments, parts.provisioning,
                        parts.x402, agents)
    runtime.consume(calls_consumer.CONSUMER, calls_consumer.CallUsage(accounts).handle,
                    batch=100, batched=True, filter_subject=calls_consumer.CALLS_SUBJECT)
    runtime.consume(standing_consumer.CONSUMER,
                    standing_consumer.StandingInvalidation(accounts).handle,
                    filter_subject=standing_consumer.SUBJECT)
    documents = ClientDocuments(allow_loopback=s.environment == "local")
    runtime.on_stop.append(documents.close)
    sign_in = SignInLinks(accounts, configured.mail(s))
    runtime.on_stop.append(sign_in.close)
    return AccountsServicer(accounts, parts.payments, OAuth(accounts, documents), sign_in,
                            Checkouts(uow, parts.payments), parts.x402)
