"""x402 payments that are never lost and never grant what was not paid: the signup's payment, renewals of the
paid period (POST /api/v1/subscription/x402), the reconciliation of settlements whose answer was lost, and the
owner's reminder before a period ends. The rules are payments_domain's (x402_grant, x402_renewal_refusal,
x402_fate).

A payment is recorded `pending` (with the payment and the requirements it matched) in the same transaction as
what it pays for (a signup's new account, or the locked renewing business), then settled at the facilitator with
no transaction held, then its outcome written. Until the outcome is written the pending row's next attempt lies
beyond the settlement's time bound, so the reconciler leaves it to the request (or takes it over when the process
died meanwhile).

When the facilitator's answer is lost (unreachable, timed out, or a 5xx after it may have moved the money), the
payment stays pending and the reconciler asks again by settling the same payment once more. The `exact` scheme's
authorization pays once, only us and exactly the amount: settling it again either takes it now, or is refused as
already used (the earlier settlement took it); both settle it. Any other refusal means nothing was taken: it
failed. Only a settled payment grants anything: a signup's workspace stays unpaid (held, its provisioning waiting)
while its payment is pending. An authorization that expired before the facilitator answered cannot be told apart
(the facilitator checks the expiry before the nonce): it is `unresolved`, the owner is told and an operator checks
the chain by payer and nonce (both stored).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from contracts import billing
from core import tenant
from core.errors import ServiceError, not_found
from core.ids import new_id, utcnow
from providers.x402 import PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER
from providers.x402.server import (
    FacilitatorUnavailable,
    MalformedPayment,
    PaymentRefused,
    Settled,
    Verified,
    authorization_of,
)
from services.accounts import lifecycle
from services.accounts.billing import payments_domain as pay
from services.accounts.billing.payments_service import Payments, X402Terms, malformed_payment, notify_owner
from services.accounts.records import Business, X402Payment
from services.accounts.repository import AccountsUnit

log = logging.getLogger(__name__)

RENEWAL_PATH = "/api/v1/subscription/x402"
# How long a request that recorded a payment has to settle it before the reconciler may take it over: past the
# settlement's own bound (twice the facilitator timeout).
SETTLE_MARGIN = timedelta(seconds=5)


@dataclass(frozen=True)
class Outcome:
    """Where a payment stands after a settlement attempt, and the business as it left it."""
    status: str  # payments_domain.X402_STATUSES
    business: Business | None = None
    settled: Settled | None = None
    reason: str | None = None
    saga_token: str | None = None  # a signup's provisioning, leased to the caller to run at once
    transaction: str | None = None


class X402Billing:
    def __init__(self, payments: Payments, retry: timedelta):
        self.payments = payments
        self.uow = payments.uow
        self.retry = retry  # the reconciler's wait between two questions about one payment

    @property
    def settle_lease(self) -> timedelta:
        return timedelta(seconds=2 * self.payments.x402_gate().timeout) + SETTLE_MARGIN

    # -- one payment -----------------------------------------------------------------------------------------

    async def record(self, work: AccountsUnit, business_id: str, purpose: str, verified: Verified) -> str | None:
        """Record a verified payment as pending, in the caller's unit of work; its id, or None when its
        authorization was recorded before (the same payment sent again)."""
        now = utcnow()
        payload, requirements = verified.stored()
        valid_before = verified.valid_before
        payment_id = new_id()
        added = await work.billing.add_x402_payment(
            id=payment_id, business_id=business_id, purpose=purpose, status=billing.X402_PENDING,
            payer=verified.payer.lower(), nonce=verified.nonce,
            valid_before=datetime.fromtimestamp(valid_before, UTC) if valid_before else None,
            network=verified.requirements.network, asset=verified.requirements.asset,
            amount=verified.requirements.amount, payload=payload, requirements=requirements,
            next_attempt_at=now + self.settle_lease, created_at=now)
        return payment_id if added else None

    async def settle(self, payment_id: str, verified: Verified, *, lease_saga: bool = False) -> Outcome:
        """Settle a recorded payment (no transaction held) and write what became of it. A lost answer leaves it
        pending, due for the reconciler at once."""
        try:
            settled = await self.payments.x402_gate().settle(verified)
        except PaymentRefused as exc:
            return await self._conclude(payment_id, billing.X402_FAILED, reason=exc.reason)
        except FacilitatorUnavailable as exc:
            log.warning("x402 payment %s: settlement unanswered (%s); reconciling", payment_id, exc.message)
            async with self.uow.transaction() as work:
                await work.billing.change_x402_payment(payment_id, {"next_attempt_at": utcnow(),
                                                                    "last_error": exc.message})
                business = await work.billing.business_of_x402_payment(payment_id)
            return Outcome(billing.X402_PENDING, business=business, reason=exc.message)
        outcome = await self._conclude(payment_id, billing.X402_SETTLED, transaction=settled.transaction,
                                       lease_saga=lease_saga)
        return Outcome(outcome.status, outcome.business, settled, saga_token=outcome.saga_token,
                       transaction=settled.transaction)

    async def _conclude(self, payment_id: str, fate: str, *, transaction: str | None = None,
                        reason: str | None = None, lease_saga: bool = False, notify: bool = False) -> Outcome:
        """Write a payment's fate; a settled one grants its period (payments_domain.x402_grant): the subscription
        active, a signup's provisioning due (leased to the caller with `lease_saga`), a workspace canceled with
        its subscription or paused by billing resumed. `notify`: e-mail the owner (the answer came late)."""
        now, token = utcnow(), None
        async with self.uow.transaction() as work:
            payment = await work.billing.x402_payment(id=payment_id, lock=True)
            if payment is None:  # its signup was undone meanwhile
                return Outcome(billing.X402_FAILED, reason=reason)
            if payment.status != billing.X402_PENDING:  # the reconciler concluded it first: its outcome stands
                return Outcome(payment.status, await work.billing.business(str(payment.business_id)),
                               reason=payment.last_error, transaction=payment.transaction)
            values: dict[str, Any] = {"status": fate, "next_attempt_at": None, "last_error": reason}
            if fate == billing.X402_SETTLED:
                values.update(transaction=transaction, settled_at=now)
            await work.billing.change_x402_payment(payment_id, values)
            business = await work.accounts.lock_business(str(payment.business_id))
            assert business is not None  # a payment goes with its business (schema.x402_payments' foreign key)
            if fate == billing.X402_SETTLED:
                resubscribed = business.subscription_status == billing.CANCELED
                business = await lifecycle.change(work, business, pay.x402_grant(
                    business.paid_through, business.trial_ends_at, now))
                token = await self.payments.provisioning.resume(work, str(business.id), lease=lease_saga)
                if resubscribed and business.lifecycle_state == "canceled":
                    business, _ = await lifecycle.move(work, business, "resume",
                                                       values={"paused_by_billing": False})
                business, _ = await self.payments.apply_billing(work, business, now)
                await self.payments.carry_to_workspaces(work, business, now)
            elif fate == billing.X402_UNRESOLVED:
                log.error("x402 payment %s of business %s: the authorization (payer %s, nonce %s) expired before the "
                          "facilitator answered; check the chain and settle it by hand", payment_id,
                          payment.business_id, payment.payer, payment.nonce)
            if notify:
                notify_owner(work, str(business.id), pay.x402_notice(
                    fate, business.name, pay.usdc(payment.amount), reason or "", business.paid_through,
                    f"{self.payments.base_url}/dashboard"))
        if fate == billing.X402_SETTLED and not lease_saga:
            self.payments.provision_soon()
        log.info("x402 payment %s: %s%s", payment_id, fate, f" ({reason})" if reason else "")
        return Outcome(fate, business, reason=reason, saga_token=token, transaction=transaction)

    # -- the reconciler --------------------------------------------------------------------------------------

    async def reconcile(self, limit: int = 10) -> int:
        """Ask the facilitator again about the pending payments that are due; how many were asked about."""
        if self.payments.gate is None:
            return 0
        async with self.uow.transaction() as work:
            due = await work.billing.claim_due_x402_payments(limit, self.retry)
        for row in due:
            assert row.payload is not None and row.requirements is not None  # recorded with the pending payment
            verified = Verified.from_stored(row.payload, row.requirements, row.payer)
            try:
                settled = await self.payments.gate.settle(verified)
            except PaymentRefused as exc:
                await self._conclude(str(row.id), pay.x402_fate(exc.reason), reason=exc.reason, notify=True,
                                     transaction=None)
            except FacilitatorUnavailable as exc:
                async with self.uow.transaction() as work:
                    await work.billing.change_x402_payment(str(row.id), {"last_error": exc.message})
            else:
                await self._conclude(str(row.id), billing.X402_SETTLED, transaction=settled.transaction, notify=True)
        return len(due)

    # -- renewal ---------------------------------------------------------------------------------------------

    def renewal_terms(self, business: Business) -> X402Terms:
        start = pay.x402_period_start(business.paid_through, business.trial_ends_at, utcnow())
        return X402Terms(business.plan_id, f"{self.payments.base_url}{RENEWAL_PATH}",
                         f"Switchboard {business.plan_id} plan: {billing.X402_PERIOD.days} days from {start:%Y-%m-%d}")

    async def renew(self, business_id: str | None, header: str) -> Outcome:
        """Pay a business's next period by x402: 402 with the terms without a payment, else verify, record,
        settle. The same payment sent again answers what became of it; 409 conflict when the business may not
        pay now (payments_domain.x402_renewal_refusal)."""
        business_id = tenant.pick_business(tenant.require_account(), business_id)
        async with self.uow.read() as work:
            business = await work.billing.business(business_id)
            if business is None:
                raise not_found("workspace")
            known = await self._recorded(work, header)
            if known is None:
                await self._refuse_unless_payable(work, business)
        terms = self.renewal_terms(business)
        if known is not None:  # sent again: the facilitator would refuse it as used, the outcome is ours
            return self._of_a_workspace(await self._known(known, business_id, terms))
        if not header:
            raise await self.payments.payment_required(
                terms, f"pay the next {billing.X402_PERIOD.days} days as the {PAYMENT_REQUIRED_HEADER} header "
                f"describes, in a {PAYMENT_SIGNATURE_HEADER} header")
        verified = await self.payments.verify_x402(terms, header)
        async with self.uow.transaction() as work:
            business = await work.accounts.lock_business(business_id)
            if business is None:
                raise not_found("workspace")
            await self._refuse_unless_payable(work, business)
            payment_id = await self.record(work, business_id, pay.X402_RENEWAL, verified)
        if payment_id is None:  # the same payment, sent twice at once: the first one settles it
            raise ServiceError("conflict", "this payment is being settled by another request; send it again to "
                               "see its outcome")
        outcome = await self.settle(payment_id, verified)
        if outcome.status == billing.X402_FAILED:
            raise await self.payments.settle_refused(terms, outcome.reason)
        return self._of_a_workspace(outcome)

    @staticmethod
    def _of_a_workspace(outcome: Outcome) -> Outcome:
        """A renewal's outcome, or not_found when its workspace was deleted meanwhile (it answers the workspace)."""
        if outcome.business is None:
            raise not_found("workspace")
        return outcome

    @staticmethod
    async def _recorded(work: AccountsUnit, header: str) -> X402Payment | None:
        """The payment a PAYMENT-SIGNATURE header carries, when it was recorded before (400 for a malformed one)."""
        if not header:
            return None
        try:
            payer, nonce = authorization_of(header)
        except MalformedPayment as exc:
            raise malformed_payment(exc) from None
        return await work.billing.x402_payment(payer=payer, nonce=nonce) if payer and nonce else None

    @staticmethod
    async def _refuse_unless_payable(work: AccountsUnit, business: Business) -> None:
        if why := pay.x402_renewal_refusal(business.lifecycle_state, business.subscription_status,
                                           business.payment_capture, business.paid_through, utcnow(),
                                           await work.billing.has_pending_x402(str(business.id))):
            raise ServiceError("conflict", why)

    async def _known(self, payment: X402Payment, business_id: str, terms: X402Terms) -> Outcome:
        """The answer to a payment sent again: what became of it, when it paid for this business."""
        if str(payment.business_id) != business_id or payment.status == billing.X402_FAILED:
            raise await self.payments.payment_required(
                terms, "this payment was used already; pay again as the "
                f"{PAYMENT_REQUIRED_HEADER} header describes", pay.NONCE_USED)
        async with self.uow.read() as work:
            business = await work.billing.business(business_id)
        return Outcome(payment.status, business, transaction=payment.transaction)

    # -- reminders -------------------------------------------------------------------------------------------

    async def remind(self) -> int:
        """E-mail the owners of x402 workspaces whose paid period ends soon (once per period); how many."""
        now = utcnow()
        async with self.uow.read() as work:
            due = await work.billing.renewals_to_remind(now, billing.X402_REMIND_BEFORE)
        for business_id in due:
            async with self.uow.transaction() as work:
                b = await work.accounts.lock_business(business_id)
                if b is None or b.paid_through is None or b.renewal_reminded_through == b.paid_through:
                    continue  # gone, no longer paid by the period, or another worker came first
                notify_owner(work, str(b.id), pay.renewal_reminder(
                    b.name, b.plan_id, b.paid_through, self.payments.grace, self.payments.base_url))
                await work.accounts.change_business(str(b.id), {"renewal_reminded_through": b.paid_through})
        return len(due)
