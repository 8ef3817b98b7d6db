"""billing's RPCs: signup, the card checkout and x402 renewals, the usage log and the balance, and the payment
providers' health."""
from __future__ import annotations

from datetime import UTC

from core.interceptors import Context
from core.messages import optional, set_timestamp
from core.pagination import Page, opt_datetime
from services.accounts.billing.checkouts import Checkouts, OpenInvoice
from services.accounts.billing.payments_service import Payments
from services.accounts.billing.signup import Signup
from services.accounts.billing.usage import Usage
from services.accounts.billing.x402_billing import X402Billing
from services.accounts.ports import Welcome
from services.accounts.records import UsageRecord
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc

USAGE_PAGE = (100, 500)


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


class BillingServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, signup: Signup, usage: Usage, payments: Payments, checkouts: Checkouts, x402: X402Billing,
                 welcome: Welcome):
        self.signup = signup
        self.usage = usage
        self.payments = payments
        self.checkouts = checkouts
        self.x402 = x402
        self.welcome = welcome

    async def Signup(self, request: accounts_pb2.SignupRequest, context: Context) -> accounts_pb2.SignupReply:
        done = await self.signup.signup(request.business_name, request.email, request.business_type,
                                          request.website, request.phone_forward_to, request.plan_id,
                                          request.client_ip, request.payment_signature, request.x402)
        reply = accounts_pb2.SignupReply(
            api_key=done.api_key, business_id=done.business_id, dashboard_url=done.dashboard_url,
            provisioning_deferred=done.provisioning_deferred, payment_capture=done.payment_capture,
            dashboard_magic_link=done.magic_link, agent_id=done.agent_id, phone_number=done.phone_number,
            checkout_url=done.checkout_url, payment_response=done.payment_response,
            payment_status=done.payment_status)
        set_timestamp(reply, "trial_ends_at", done.trial_ends_at)
        self.welcome.send(request.email, "/dashboard", welcome=True)
        return reply

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
        assert b is not None  # renew answers not_found without one
        reply = accounts_pb2.X402Renewal(
            business_id=str(b.id), payment_status=outcome.status, subscription_status=b.subscription_status,
            lifecycle_state=b.lifecycle_state, transaction=outcome.transaction,
            payment_response=outcome.settled.response_header if outcome.settled else "")
        set_timestamp(reply, "paid_through", b.paid_through)
        return reply

    async def RecordUsage(self, request: accounts_pb2.RecordUsageRequest, context: Context) -> accounts_pb2.RecordUsageReply:
        return accounts_pb2.RecordUsageReply(recorded=await self.usage.record_usage(
            [_usage(e) for e in request.entries]))

    async def ListUsage(self, request: accounts_pb2.ListUsageRequest, context: Context) -> accounts_pb2.ListUsageReply:
        paged = await self.usage.list_usage(opt_datetime(request, "start"), opt_datetime(request, "end"),
                                               Page.of(request.page, *USAGE_PAGE))
        return accounts_pb2.ListUsageReply(usage=[usage_message(r) for r in paged.rows], page=paged.info())

    async def GetBalance(self, request: accounts_pb2.GetBalanceRequest, context: Context) -> accounts_pb2.GetBalanceReply:
        return accounts_pb2.GetBalanceReply(businesses=[
            accounts_pb2.BalanceEntry(business_id=b.business_id, minutes_used=b.minutes_used,
                                      phone_numbers=b.phone_numbers, subscription_status=b.subscription_status)
            for b in await self.usage.balances()])

    async def CheckPaymentsProvider(self, request: accounts_pb2.CheckPaymentsProviderRequest, context: Context) -> accounts_pb2.PaymentsProviderStatus:
        overall, checkout, x402 = await self.payments.check()
        return accounts_pb2.PaymentsProviderStatus(status=overall, checkout=checkout, x402=x402)
