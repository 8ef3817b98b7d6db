"""Signup, a purchase first: a new account, its business, its first key and sign-in link, paid by x402 (provisioned
at once) or by the hosted card checkout it opens (provisioned once the checkout completes), at most
`signup_limit_per_hour` attempts from one address."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts import accounts as accounts_contract
from contracts import billing as billing_contract
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.scopes import DEFAULT_SCOPES
from core.settings import Settings
from core.uow import UnitOfWork
from providers.x402 import PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER
from providers.x402.server import Verified
from services.accounts import domain, secret_keys
from services.accounts.billing import payments_domain as pay
from services.accounts.billing.payments_service import Payments
from services.accounts.billing.x402_billing import X402Billing
from services.accounts.ports import Provisioner
from services.accounts.repository import AccountsUnit
from services.accounts.secret_keys import SecretKeys


@dataclass(frozen=True)
class SignedUp:
    api_key: str
    business_id: str
    dashboard_url: str
    magic_link: str
    trial_ends_at: datetime
    payment_capture: str
    provisioning_deferred: bool = True
    checkout_url: str | None = None
    agent_id: str | None = None
    phone_number: str | None = None
    payment_response: str = ""  # x402: the PAYMENT-RESPONSE header
    payment_status: str | None = None  # x402: settled, or pending while the settlement is reconciled


class Signup:
    def __init__(self, uow: UnitOfWork[AccountsUnit], settings: Settings, payments: Payments, x402: X402Billing,
                 provisioning: Provisioner):
        self.uow = uow
        self.payments = payments
        self.x402 = x402
        self.provisioning = provisioning
        self.keys = SecretKeys.of(settings)
        self.base_url = settings.public_base_url
        self.signup_limit = settings.signup_limit_per_hour
        self.checkout_prices = settings.checkout_prices

    async def signup(self, business_name: str, email: str, business_type: str, website: str, phone_forward_to: str,
                     plan_id: str, client_ip: str, payment_signature: str = "", x402: bool = False) -> SignedUp:
        """A new account, business, key and magic link, paid by x402 (`payment_signature`; provisioned at once)
        or by the hosted card checkout it opens (provisioned once the checkout completes)."""
        form = domain.validate_signup(business_name, email, business_type, website, phone_forward_to, plan_id,
                                      self.checkout_prices)
        await self._count_signup_attempt(client_ip or "-", utcnow())
        async with self.uow.read() as work:  # before any payment is asked for or taken
            if await work.accounts.email_taken(form.email):
                raise self._email_taken()
        business_id = new_id()
        if payment_signature or x402:
            return await self._signup_paid_by_x402(form, business_id, payment_signature)
        chosen = plan_id.strip()  # a price id names itself; a plan name stands for its offered price
        price = chosen if chosen in self.checkout_prices else pay.price_of(form.plan_id, self.checkout_prices)
        if price is None:
            raise ServiceError("validation_error", f"plan {form.plan_id} has no checkout price configured "
                               "(CHECKOUT_PRICES); pay with x402 or pick another plan")
        checkout = await self.payments.open_checkout(business_id, form.email, price, accounts_contract.TRIAL_DAYS)
        _, _, made = await self._create_account(form, business_id, payment_capture=billing_contract.HOSTED_CHECKOUT,
                                                subscription_status=billing_contract.INCOMPLETE, checkout_session_id=checkout.id)
        return SignedUp(**made, payment_capture=billing_contract.HOSTED_CHECKOUT, checkout_url=checkout.url)

    async def _signup_paid_by_x402(self, form: domain.SignupForm, business_id: str, header: str) -> SignedUp:
        """Verify the payment, make the account with the payment recorded pending, settle it (undoing the account
        when it is refused), then run the provisioning saga at once; an empty pool or a provider outage leaves it
        deferred, retried by itself. A settlement left unanswered keeps the account unpaid, its payment pending
        and reconciled (services.accounts.billing.x402_billing): payment_status pending, provisioned once settled."""
        terms = self.payments.signup_terms(form.plan_id)
        if not header:
            raise await self.payments.payment_required(
                terms, f"this signup asks to pay with x402: send the payment the "
                f"{PAYMENT_REQUIRED_HEADER} header describes in a {PAYMENT_SIGNATURE_HEADER} header")
        verified = await self.payments.verify_x402(terms, header)
        account_id, payment_id, made = await self._create_account(
            form, business_id, payment_capture=billing_contract.X402, subscription_status=billing_contract.INCOMPLETE, paying=verified)
        if payment_id is None:  # the payment paid for another signup already
            async with self.uow.transaction() as work:
                await work.accounts.delete_account(account_id)
            raise await self.payments.settle_refused(terms, pay.NONCE_USED)
        try:
            outcome = await self.x402.settle(payment_id, verified, lease_saga=True)
        except BaseException:  # cancelled mid-settlement: the pending payment is reconciled, the account stays
            raise
        if outcome.status == billing_contract.X402_FAILED:
            async with self.uow.transaction() as work:
                await work.accounts.delete_account(account_id)
            raise await self.payments.settle_refused(terms, outcome.reason or "")
        if outcome.status != billing_contract.X402_SETTLED:
            return SignedUp(**made, payment_capture=billing_contract.X402, payment_status=outcome.status)
        saga_row = await self.provisioning.run_now(business_id, outcome.saga_token or "")
        done = saga_row if saga_row is not None and saga_row.status == "done" else None
        return SignedUp(**made, payment_capture=billing_contract.X402, provisioning_deferred=done is None,
                        agent_id=done.agent_id if done else None,
                        phone_number=done.phone_number if done else None,
                        payment_response=outcome.settled.response_header if outcome.settled else "",
                        payment_status=outcome.status)

    @staticmethod
    def _email_taken() -> ServiceError:
        return ServiceError("email_exists", "an account with this email already exists; sign in instead")

    async def _create_account(self, form: domain.SignupForm, business_id: str, *, payment_capture: str,
                              subscription_status: str, paying: Verified | None = None,
                              **billing: Any) -> tuple[str, str | None, dict[str, Any]]:
        """The user, business, signup key, magic link, provisioning saga (waiting for the payment) and the x402
        payment `paying` for it recorded pending, in one transaction: the account id, the payment's id (None when
        that payment is recorded already) and SignedUp's common fields."""
        now = utcnow()
        account_id = new_id()
        api_key, prefix = domain.new_api_key()
        magic = domain.new_secret_token()
        trial_ends_at = now + domain.trial_length()
        async with self.uow.transaction() as work:
            if await work.accounts.email_taken(form.email) or not await work.accounts.add_user(
                    id=account_id, email=form.email, email_confirmed_at=None, created_at=now):
                raise self._email_taken()
            await work.accounts.add_business(
                id=business_id, account_id=account_id, name=form.business_name, lifecycle_state="active",
                metadata={}, business_type=form.business_type, website=form.website,
                phone_forward_to=form.phone_forward_to, plan_id=form.plan_id, subscription_status=subscription_status,
                payment_capture=payment_capture, trial_ends_at=trial_ends_at, created_at=now, updated_at=now,
                **billing)
            await work.accounts.add_key(id=new_id(), account_id=account_id, name=domain.SIGNUP_KEY_NAME,
                                   prefix=prefix, key_hash=self.keys.hash(secret_keys.API_KEY, api_key),
                                   scopes=list(DEFAULT_SCOPES), created_at=now)
            await work.accounts.add_magic_link(token_hash=self.keys.hash(secret_keys.SIGN_IN_LINK, magic),
                                          account_id=account_id, expires_at=now + accounts_contract.MAGIC_LINK_TTL)
            await self.provisioning.start(work, business_id, form.phone_forward_to)
            payment_id = await self.x402.record(work, business_id, pay.X402_SIGNUP, paying) if paying else None
        return account_id, payment_id, {"api_key": api_key, "business_id": business_id,
                "dashboard_url": f"{self.base_url}/dashboard", "trial_ends_at": trial_ends_at,
                            "magic_link": f"{self.base_url}/dashboard/login?token={magic}"}

    async def _count_signup_attempt(self, client_ip: str, now: datetime) -> None:
        """Record a signup attempt from this address, or refuse it past the hourly limit."""
        async with self.uow.transaction() as work:
            count, oldest = await work.accounts.count_signup_attempts(client_ip, now - domain.SIGNUP_WINDOW)
            if not domain.signup_allowed(count, self.signup_limit):
                wait = domain.signup_retry_after(oldest or now, now)
                raise ServiceError("rate_limited", f"at most {self.signup_limit} signups per hour from one address; "
                                   f"try again in {wait} seconds", retry_after=str(wait))
            await work.accounts.add_signup_attempt(client_ip, now)
