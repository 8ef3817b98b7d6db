"""A new hosted checkout for a business that has no subscription in force: a signup whose checkout link expired
(24 hours) before it was paid, or a canceled subscription to replace (resubscribe); a past-due subscription is
paid at its open invoice's hosted page instead (another card, kept on file). The rules are
payments_domain.checkout_refusal and checkout_trial_days.

The earlier checkout is expired first, so two subscriptions can never be started from two open links; if it was
paid meanwhile, nothing new is opened. The provider is called with no transaction held; the new session is then
stored on the business, provided its subscription did not come into force meanwhile. The Stripe customer of an
earlier subscription is reused. Completing the checkout moves the business as any checkout does
(payments_service): trialing after a signup's, active again after a resubscription, with the workspace resumed.
"""
from __future__ import annotations

from dataclasses import dataclass

from contracts import accounts, billing
from core import tenant
from core.errors import ServiceError, not_found
from core.ids import new_id
from core.uow import UnitOfWork
from providers.payments.adapter import Checkout
from services.accounts.billing import payments_domain as pay
from services.accounts.billing.payments_service import Payments
from services.accounts.repository import AccountsUnit


@dataclass(frozen=True)
class OpenInvoice:
    """A past-due subscription's open invoice: its hosted page takes another card (which then stays on file)."""
    id: str
    url: str


class Checkouts:
    def __init__(self, uow: UnitOfWork[AccountsUnit], payments: Payments):
        self.uow, self.payments = uow, payments

    async def reopen(self, business_id: str | None) -> tuple[str, Checkout | OpenInvoice]:
        """(business id, its new checkout, or a past-due subscription's open invoice); 409 conflict when it has
        a paid subscription in force."""
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            row = await work.accounts.checkout_facts(business_id)
        if row is None:
            raise not_found("workspace")
        if why := pay.checkout_refusal(row.lifecycle_state, row.subscription_status):
            raise ServiceError("conflict", why)
        if row.subscription_status == billing.PAST_DUE:
            return business_id, await self._open_invoice(row.subscription_id)
        price = pay.price_of(row.plan_id, self.payments.prices)
        if price is None:
            raise ServiceError("conflict", f"plan {row.plan_id} has no checkout price configured (CHECKOUT_PRICES)")
        if row.checkout_session_id and pay.starts_a_subscription(
                *await self.payments.expire_checkout(row.checkout_session_id), row.subscription_id):
            raise ServiceError("conflict", "the earlier checkout was just paid: the subscription starts within "
                               "seconds, nothing more to pay")
        checkout = await self.payments.open_checkout(
            business_id, row.email, price, pay.checkout_trial_days(row.subscription_status, accounts.TRIAL_DAYS),
            customer_id=row.customer_id, attempt=f"checkout-{new_id()}")
        async with self.uow.transaction() as work:
            current = await work.accounts.lock_business(business_id)
            if current is None:  # gone meanwhile (an unpaid signup undone)
                raise not_found("workspace")
            in_force = pay.checkout_refusal(current.lifecycle_state, current.subscription_status) is not None
            if not in_force:
                await work.accounts.change_business(business_id, {"checkout_session_id": checkout.id})
        if in_force:  # meanwhile: the new link must not be paid
            await self.payments.expire_checkout(checkout.id)
            raise ServiceError("conflict", "the subscription came into force meanwhile: nothing more to pay")
        return business_id, checkout

    async def _open_invoice(self, subscription_id: str | None) -> OpenInvoice:
        """A past-due subscription is not replaced (that would start a second one): its open invoice is paid."""
        invoice = await self.payments.open_invoice(subscription_id) if subscription_id else None
        if invoice is None or not invoice.get("hosted_invoice_url"):
            raise ServiceError("conflict", "the subscription is past_due but has no open invoice right now (the "
                               "provider is between two attempts); try again in a minute")
        return OpenInvoice(invoice["id"], invoice["hosted_invoice_url"])
