"""A workspace made through the API (POST /api/v1/workspaces) belongs to its account's subscription.

The account's paying business is its first that pays for itself (the signup's, `SqlBilling.payer`). Its plan
limits how many workspaces the account may have (`core.plans.WORKSPACE_LIMITS`, torn-down ones not counted; 403
forbidden past it), and there is one trial per account: a new workspace gets none of its own.

- Paid by card: the workspace is one more unit of the payer's subscription at the payment provider (the item's
  quantity is the number of the account's workspaces billed there, prorated onto the next invoice). It is made
  unpaid (`incomplete`, held) under a lease, the provider is asked with no transaction held (an idempotency key of
  the workspace and the quantity: a retry is answered as the first attempt was), then it carries its payer's
  billing columns (`payments_domain.PAYER_COLUMNS`): its standing and billing's moves follow the payer's from then on
  (`carry_to_workspaces`), so a failed payment holds every workspace billed on the subscription. Adds are one at a
  time per account (the payer's row lock, and a live lease refuses a second one, 409). A request that dies after
  asking leaves the workspace unpaid with its lease running out; the billing worker finishes it (`finish_pending`).
  A workspace torn down leaves the subscription (`torn_down`); a canceled one keeps its unit (and its data) until
  it is torn down.
- Paid by x402: each further workspace pays its own period as the signup did (402 payment_required with the
  terms, then the paid retry): verified, recorded pending with the new workspace, settled with no transaction
  held (services.accounts.billing.x402_billing), undone when refused.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from contracts import billing as billing_contract
from core import leases, plans, standing
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.uow import UnitOfWork
from providers.payments.adapter import PaymentsError
from providers.x402 import PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER
from services.accounts import lifecycle
from services.accounts.billing import payments_domain as pay
from services.accounts.billing.payments_service import Payments, X402Terms
from services.accounts.billing.x402_billing import X402Billing
from services.accounts.ports import Created, NewWorkspace
from services.accounts.records import Business, LiveWorkspace
from services.accounts.repository import AccountsUnit

log = logging.getLogger(__name__)

WORKSPACES_PATH = "/api/v1/workspaces"
# How long a request has to add its workspace to the subscription before the billing worker takes it over (past the
# payments client's own bound: its timeout times its attempts).
ADD_LEASE = timedelta(seconds=60)
# When the provider did not answer: how soon the billing worker asks again.
RETRY_AFTER = timedelta(seconds=5)


class _PaymentUsed(Exception):
    """The x402 payment sent was recorded before (it paid for something else)."""


def limit_refusal(plan: str, count: int) -> str | None:
    """Why the account may not have one more workspace (None: it may): its plan's limit is reached."""
    limit = plans.WORKSPACE_LIMITS.get(plan, plans.WORKSPACE_LIMITS[plans.DEFAULT_PLAN])
    if count < limit:
        return None
    return (f"the {plan} plan allows {limit} workspaces per account and this account has {count}: tear one down "
            "(PATCH /api/v1/workspaces with action cancel, then teardown) or move to a larger plan")


def pending(row: Business | LiveWorkspace) -> bool:
    """Being added to its payer's subscription (unpaid until then)."""
    return row.billed_on is not None and row.subscription_status == billing_contract.INCOMPLETE and row.lease_until is not None


class WorkspaceBilling:
    def __init__(self, uow: UnitOfWork[AccountsUnit], payments: Payments, x402: X402Billing):
        self.uow, self.payments, self.x402 = uow, payments, x402

    async def create(self, account_id: str, form: NewWorkspace, payment_signature: str = "") -> Created:
        async with self.uow.read() as work:
            payer = await self._payer(work, account_id, lock=False)
            live = await work.billing.live_workspaces(account_id)
        self._refuse_unless_allowed(payer, len(live))  # before any payment is asked for
        if payer.payment_capture == billing_contract.X402:
            return await self._paid_by_x402(account_id, form, payment_signature, payer.plan_id)
        return await self._on_the_subscription(account_id, form)

    @staticmethod
    async def _payer(work: AccountsUnit, account_id: str, *, lock: bool = True) -> Business:
        """The account's paying business (held for update with `lock`)."""
        payer = await work.billing.payer(account_id, lock=lock)
        if payer is None:
            raise ServiceError("forbidden", "this account has no workspace that pays for it")
        return payer

    @staticmethod
    def _refuse_unless_allowed(payer: Business, count: int) -> None:
        if why := limit_refusal(payer.plan_id, count):
            raise ServiceError("forbidden", why)
        held = standing.standing("active", payer.subscription_status)
        if not standing.is_good(held):  # the new workspace would inherit it
            raise standing.refusal(held, "creating a workspace")

    def _row(self, account_id: str, form: NewWorkspace, **billing: Any) -> dict[str, Any]:
        now = utcnow()
        return dict(id=new_id(), account_id=account_id, name=form.name, lifecycle_state="active",
                    metadata=form.metadata, external_ref=form.external_ref, timezone=form.timezone,
                    subscription_status=billing_contract.INCOMPLETE, created_at=now, updated_at=now, **billing)

    # -- by card: one more unit of the subscription ---------------------------------------------------------

    async def _on_the_subscription(self, account_id: str, form: NewWorkspace) -> Created:
        token = new_id()
        async with self.uow.transaction() as work:
            payer = await self._payer(work, account_id)
            live = await work.billing.live_workspaces(account_id)
            self._refuse_unless_allowed(payer, len(live))
            if payer.subscription_id is None:
                raise ServiceError("conflict", "the account's subscription has not started yet: complete the "
                                   "signup's card checkout first")
            now = utcnow()
            if any(w.lease_until is not None and w.lease_until > now for w in live if pending(w)):
                raise ServiceError("conflict", "another workspace of this account is being added to its "
                                   "subscription; try again in a few seconds")
            row = await work.accounts.add_business(**self._row(
                account_id, form, billed_on=payer.id, plan_id=payer.plan_id, lease_token=token,
                lease_until=now + ADD_LEASE))  # the payer's trial and standing once added, none before
        return Created(await self._add(account_id, str(row.id), token))

    async def _add(self, account_id: str, business_id: str, token: str) -> Business:
        """Set the subscription's quantity to the account's workspaces billed on it (this one included), then mark
        every one of them that was waiting as billed; the workspace's row after."""
        async with self.uow.read() as work:
            payer = await self._payer(work, account_id, lock=False)
            billed = await work.billing.billed_on(str(payer.id))
        quantity = 1 + len(billed)
        assert payer.subscription_id is not None  # a workspace is added to a subscription that started (`create`)
        try:
            await self.payments.checkout.set_quantity(payer.subscription_id, quantity,
                                                      idempotency_key=f"workspace-{business_id}-{quantity}")
        except PaymentsError as exc:
            refused = exc.status is not None and 400 <= exc.status < 500 and exc.status not in (409, 429)
            log.warning("workspace %s: the subscription's quantity was not set (%r)", business_id, exc)
            if refused:
                async with self.uow.transaction() as work:
                    await work.billing.delete_pending_workspace(business_id, token)
                raise ServiceError("provider_error", f"the payment provider refused to add the workspace to the "
                                   f"subscription ({exc.message}); nothing was created") from None
            async with self.uow.transaction() as work:
                await work.billing.retry_pending_workspace(business_id, token, utcnow() + RETRY_AFTER)
            raise ServiceError("provider_error", f"the payment provider did not answer ({exc.message}); workspace "
                               f"{business_id} is kept unpaid and is added to the subscription within minutes, by "
                               "itself") from None
        async with self.uow.transaction() as work:
            payer = await self._payer(work, account_id)
            row = None
            for w in billed:
                if not pending(w):
                    continue
                current = await work.accounts.lock_business(str(w.id))
                if current is not None and pending(current):
                    current = await lifecycle.change(work, current, {
                        **{c: getattr(payer, c) for c in pay.PAYER_COLUMNS}, **leases.RELEASED})
                if str(w.id) == business_id:
                    row = current
        log.info("workspace %s billed on subscription %s (quantity %d)", business_id, payer.subscription_id,
                 quantity)
        assert row is not None  # it was made billed on its payer, under its lease, by this request
        return row

    def resume_refusal(self, business: Business) -> str | None:
        """Why the owner may not resume this business row (None: they may): payments_domain.owner_resume_refusal."""
        return pay.owner_resume_refusal(pay.Billing.of(business), utcnow(), self.payments.grace)

    async def torn_down(self, account_id: str, business_id: str) -> None:
        """A workspace billed on the subscription was torn down: its unit leaves the subscription (the rest of the
        period credited on the next invoice). Best effort, after the teardown: when the provider does not answer,
        the next workspace added sets the quantity right (it is always the count of the workspaces billed)."""
        async with self.uow.read() as work:
            payer = await self._payer(work, account_id, lock=False)
            billed = await work.billing.billed_on(str(payer.id))
        if payer.subscription_id is None or payer.payment_capture == billing_contract.X402:
            return
        quantity = 1 + len(billed)
        assert payer.subscription_id is not None  # a workspace is added to a subscription that started (`create`)
        try:
            await self.payments.checkout.set_quantity(payer.subscription_id, quantity,
                                                      idempotency_key=f"teardown-{business_id}-{quantity}")
        except PaymentsError as exc:
            log.warning("workspace %s torn down: the subscription's quantity was not lowered (%r)", business_id, exc)

    async def finish_pending(self) -> int:
        """Add the workspaces whose request died before it could (their lease ran out); how many."""
        async with self.uow.read() as work:
            due = await work.billing.pending_workspaces(utcnow())
        done = 0
        for w in due:
            async with self.uow.transaction() as work:
                token = await work.billing.take_lease(str(w.id), ADD_LEASE)
            if token is None:
                continue
            try:
                await self._add(str(w.account_id), str(w.id), token)
                done += 1
            except ServiceError as exc:
                log.warning("workspace %s: %s", w.id, exc.message)
        return done

    # -- by x402: each workspace pays its own period ---------------------------------------------------------

    def _terms(self, plan: str) -> X402Terms:
        return X402Terms(plan, f"{self.payments.base_url}{WORKSPACES_PATH}",
                         f"Switchboard {plan} plan: a further workspace, {billing_contract.X402_PERIOD.days} days")

    async def _paid_by_x402(self, account_id: str, form: NewWorkspace, header: str, plan: str) -> Created:
        terms = self._terms(plan)  # the payer's plan, read by create
        if not header:
            raise await self.payments.payment_required(
                terms, f"this account pays by x402: each further workspace pays its {billing_contract.X402_PERIOD.days} days as "
                f"the {PAYMENT_REQUIRED_HEADER} header describes; send the payment in a "
                f"{PAYMENT_SIGNATURE_HEADER} header")
        verified = await self.payments.verify_x402(terms, header)
        try:
            async with self.uow.transaction() as work:
                payer = await self._payer(work, account_id)
                self._refuse_unless_allowed(payer, len(await work.billing.live_workspaces(account_id)))
                row = await work.accounts.add_business(**self._row(account_id, form, plan_id=payer.plan_id,
                                                                   payment_capture=billing_contract.X402))
                payment_id = await self.x402.record(work, str(row.id), pay.X402_WORKSPACE, verified)
                if payment_id is None:  # this payment paid for something already: nothing is made
                    raise _PaymentUsed
        except _PaymentUsed:
            raise await self.payments.settle_refused(terms, pay.NONCE_USED) from None
        outcome = await self.x402.settle(payment_id, verified)
        if outcome.status == billing_contract.X402_FAILED:
            async with self.uow.transaction() as work:
                await work.billing.delete_business(str(row.id))
            raise await self.payments.settle_refused(terms, outcome.reason)
        return Created(outcome.business or row,
                       outcome.settled.response_header if outcome.settled else "")
