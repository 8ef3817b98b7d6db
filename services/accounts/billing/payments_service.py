"""Payments: the hosted card checkout a signup opens, the payment provider's webhook events, asking for and
verifying x402 payments (their settlement: services.accounts.billing.x402_billing), and billing's moves of workspaces
whose subscription went unpaid (payments_domain has the rules; services.accounts.billing runs them on time).

The provider's events are verified by the gateway with their signature (stripe.Webhook.construct_event) and
stored on the PROVIDER stream; a consumer here applies each (`apply_event`) once (the event id is stored in the
same transaction). They may come late or out of order: a subscription status is only set by an event newer than
the one that set it, `canceled` is final, and a checkout completing starts the signup's provisioning saga however
many times it is told.
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from contracts import billing
from core.bus import PermanentError
from core.errors import ServiceError
from core.ids import is_uuid, utcnow
from core.uow import UnitOfWork
from providers.payments.adapter import Checkout, PaymentsError, PaymentsProvider, invoice_subscription_id
from providers.status import provider_status
from providers.x402 import PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER
from providers.x402.server import FacilitatorUnavailable, MalformedPayment, PaymentRefused, Verified, X402Gate
from services.accounts import lifecycle
from services.accounts.billing import payments_domain as pay
from services.accounts.ports import Provisioner
from services.accounts.records import Business
from services.accounts.repository import AccountsUnit
from switchboard.v1 import events_pb2

if TYPE_CHECKING:
    from x402.schemas import PaymentRequired

log = logging.getLogger(__name__)

EVENTS_CONSUMER = "accounts-payment-events"

# Events that carry a subscription's state, and invoice outcomes.
SUBSCRIPTION_EVENTS = ("customer.subscription.created", "customer.subscription.updated",
                       "customer.subscription.deleted", "customer.subscription.paused",
                       "customer.subscription.resumed")


def _at(unix_seconds: int) -> datetime:
    return datetime.fromtimestamp(unix_seconds, tz=UTC)


class Payments:
    def __init__(self, uow: UnitOfWork[AccountsUnit], checkout: PaymentsProvider, gate: X402Gate | None,
                 provisioning: Provisioner, base_url: str, grace: timedelta, prices: dict[str, str]):
        self.uow = uow
        self.prices = prices  # CHECKOUT_PRICES: {price id: plan}
        self.checkout = checkout
        self.gate = gate
        self.provisioning = provisioning
        self.base_url = base_url
        self.grace = grace
        self.provision_soon: Callable[[], None] = lambda: None  # the billing worker's wake-up, once it runs

    # -- signup ----------------------------------------------------------------------------

    async def open_checkout(self, business_id: str, email: str, price_id: str, trial_days: int, *,
                            customer_id: str | None = None, attempt: str = "signup") -> Checkout:
        """A subscription checkout for a business: at signup (before its rows exist: an abandoned session is
        harmless), or a later `attempt` (a new checkout for the same customer, services.accounts.billing.checkouts)."""
        try:
            return await self.checkout.create_checkout(
                business_id=business_id, email=email, price_id=price_id, trial_days=trial_days,
                success_url=f"{self.base_url}/dashboard?checkout=complete",
                cancel_url=f"{self.base_url}/dashboard?checkout=canceled", customer_id=customer_id,
                idempotency_key=f"{attempt}-{business_id}")
        except PaymentsError as exc:
            log.warning("checkout for business %s failed: %r", business_id, exc)
            raise ServiceError("provider_error", f"the payment provider could not open a checkout ({exc.message}); "
                               "nothing was created, try again shortly") from None

    async def expire_checkout(self, session_id: str) -> tuple[str, str | None]:
        """Expire a business's earlier checkout if still open (so it cannot be paid beside a new one); its status
        after (expired, or complete when it was paid) and the subscription it started."""
        try:
            return await self.checkout.expire_checkout(session_id)
        except PaymentsError as exc:
            raise ServiceError("provider_error", f"the payment provider could not close the earlier checkout "
                               f"({exc.message}); try again shortly") from None

    def signup_terms(self, plan: str) -> X402Terms:
        return X402Terms(plan, f"{self.base_url}/api/v1/signup",
                         f"Switchboard {plan} plan: the trial and the month after it")

    async def open_invoice(self, subscription_id: str) -> dict[str, Any] | None:
        try:
            return await self.checkout.open_invoice(subscription_id)
        except PaymentsError as exc:
            raise ServiceError("provider_error", f"the payment provider could not find the open invoice "
                               f"({exc.message}); try again shortly") from None

    def x402_gate(self) -> X402Gate:
        """The x402 facilitator's gate; provider_error on a deployment without one."""
        if self.gate is None:
            raise ServiceError("provider_error", "x402 payments are not configured on this deployment "
                               "(X402_PAY_TO); use the card checkout")
        return self.gate

    async def x402_required(self, terms: X402Terms, refusal: str | None = None) -> PaymentRequired:
        """What an x402 payment on `terms` must be (`refusal`: why the last payment was not taken)."""
        gate = self.x402_gate()
        try:
            return await gate.requirements(
                pay.x402_amount(terms.plan), terms.resource, terms.description,
                error=refusal or f"{PAYMENT_SIGNATURE_HEADER} header is required")
        except FacilitatorUnavailable:
            raise _facilitator_down() from None

    async def payment_required(self, terms: X402Terms, message: str, refusal: str | None = None) -> ServiceError:
        """402 payment_required carrying fresh requirements (the PAYMENT-REQUIRED header's value)."""
        required = await self.x402_required(terms, refusal)
        return ServiceError("payment_required", message, payment_required=self.x402_gate().encode_required(required))

    async def verify_x402(self, terms: X402Terms, header: str) -> Verified:
        """The payment in a PAYMENT-SIGNATURE header, verified by the facilitator against the terms."""
        required = await self.x402_required(terms)
        try:
            return await self.x402_gate().verify(header, required)
        except MalformedPayment as exc:
            raise malformed_payment(exc) from None
        except PaymentRefused as exc:
            raise await self.payment_required(terms, f"the payment was refused ({exc.reason}); pay again as the "
                                              f"{PAYMENT_REQUIRED_HEADER} header describes", exc.reason) from None
        except FacilitatorUnavailable:
            raise _facilitator_down() from None

    async def settle_refused(self, terms: X402Terms, reason: str | None) -> ServiceError:
        return await self.payment_required(terms, f"the payment could not be settled ({reason}); pay again as the "
                                           f"{PAYMENT_REQUIRED_HEADER} header describes", reason)

    # -- provider events -----------------------------------------------------------------------

    async def apply_event(self, event: object) -> None:
        """The PROVIDER stream's consumer: one event as the gateway verified and stored it (Stripe's Event object),
        applied once. One that can never apply (not an event, or one a rule refuses) is PermanentError
        (terminated); anything else is retried."""
        event_id, kind, created, obj = _event_parts(event)
        try:
            applied = await self._apply(event_id, kind, created, obj)
        except ServiceError as exc:  # a rule refused it: it would be refused again
            raise PermanentError(f"payment event {event_id} ({kind}): {exc.message}") from None
        if applied and kind == "checkout.session.completed":
            self.provision_soon()

    async def _apply(self, event_id: str, kind: str, created: datetime, obj: dict[str, Any]) -> bool:
        """Apply an event in one transaction; False for one seen before."""
        async with self.uow.transaction() as work:
            named = pay.business_of_event(obj)
            business = await work.billing.lock_business_by(
                named if is_uuid(named or "") else None, _subscription_of(kind, obj),
                obj.get("customer") if isinstance(obj.get("customer"), str) else None)
            if not await work.billing.record_payment_event(event_id, kind, str(business.id) if business else None,
                                                           created, utcnow()):
                return False
            if business is None:
                log.info("payment event %s (%s) names no business of ours; acknowledged", event_id, kind)
                return True
            values = _event_values(kind, obj, created, business, self.prices)
            if kind == "checkout.session.completed" and obj.get("status", "complete") == "complete":
                await self.provisioning.resume(work, str(business.id))
            resubscribed = business.lifecycle_state == "canceled" and values.get("subscription_status") == billing.ACTIVE
            if values:
                business = await lifecycle.change(work, business, values)
            if resubscribed and kind == "checkout.session.completed":
                business, _ = await lifecycle.move(work, business, "resume", values={"paused_by_billing": False})
            if kind == "customer.subscription.deleted":
                await self.provisioning.cancel_waiting(work, str(business.id))
            if notice := pay.owner_notice(kind, obj, business.name, f"{self.base_url}/dashboard"):
                notify_owner(work, str(business.id), notice)
            business, _ = await self.apply_billing(work, business, utcnow())
            await self.carry_to_workspaces(work, business, utcnow())
        return True

    async def apply_billing(self, work: AccountsUnit, business: Business, now: datetime) -> tuple[Business, bool]:
        """Move the workspace as billing says (payments_domain.billing_move): the business row after, and whether
        its lifecycle state moved (as lifecycle.move answers)."""
        move = pay.billing_move(pay.Billing.of(business), now, self.grace)
        if move is None:
            return business, False
        action, reason = move
        moved = await lifecycle.move(work, business, action, reason=reason,
                                     values={"paused_by_billing": action == "pause"})
        log.info("billing: %s workspace %s (%s)", action, business.id, reason or "paid")
        return moved

    async def carry_to_workspaces(self, work: AccountsUnit, payer: Business, now: datetime) -> None:
        """The workspaces billed on `payer`'s subscription take its billing columns (payments_domain.PAYER_COLUMNS) and
        billing moves each as it does the payer: a failed payment holds them all, a paid one resumes them. One
        still being added (services.accounts.billing.workspace_billing) takes them once added."""
        for row in await work.billing.billed_on(str(payer.id), lock=True):
            if row.subscription_status == billing.INCOMPLETE and row.lease_until is not None:
                continue
            values = {c: getattr(payer, c) for c in pay.PAYER_COLUMNS if getattr(row, c) != getattr(payer, c)}
            if values:
                row = await lifecycle.change(work, row, values)
            await self.apply_billing(work, row, now)

    async def sweep(self) -> int:
        """Move every workspace billing has to move now (time passed: a grace period ran out); how many moved."""
        async with self.uow.read() as work:
            due = await work.billing.billing_due(utcnow(), self.grace)
        moved = 0
        for business_id in due:
            async with self.uow.transaction() as work:
                business = await work.accounts.lock_business(business_id)
                if business is not None and (await self.apply_billing(work, business, utcnow()))[1]:
                    moved += 1
        return moved

    # -- health --------------------------------------------------------------------------------

    async def check(self) -> tuple[str, str, str]:
        """(overall, checkout, x402) status of the payment providers."""
        async def checked(probe: Awaitable[object]) -> str:
            try:
                await probe
            except (PaymentsError, FacilitatorUnavailable) as exc:
                return provider_status(getattr(exc, "status", None))
            return "ok"
        if self.gate is None:
            checkout = await checked(self.checkout.check())
            return checkout, checkout, "not_configured"
        checkout, x402 = await asyncio.gather(checked(self.checkout.check()), checked(self.gate.check()))
        return (checkout if checkout != "ok" else x402), checkout, x402


@dataclass(frozen=True)
class X402Terms:
    """What an x402 payment is asked for: the plan (its monthly price), the resource it pays for and the line the
    payer's wallet shows."""
    plan: str
    resource: str
    description: str


def malformed_payment(exc: MalformedPayment) -> ServiceError:
    return ServiceError("validation_error", f"the {PAYMENT_SIGNATURE_HEADER} header is malformed: {exc}")


def _facilitator_down() -> ServiceError:
    return ServiceError("provider_error", "the x402 facilitator is unavailable; no account was made and nothing "
                        "was charged, try again shortly")


def notify_owner(work: AccountsUnit, business_id: str, notice: tuple[str, str]) -> None:
    """E-mail the business's owner (subject, body) through the email queue, when the caller's unit of work commits
    (the internal workspace.owner_notice event)."""
    work.emit(events_pb2.OwnerNotice(business_id=business_id, subject=notice[0], body=notice[1]), business_id)


def _event_parts(event: object) -> tuple[str, str, datetime, dict[str, Any]]:
    """A stored event's id, type, creation time and object; PermanentError when it is not a Stripe event."""
    data = event.get("data") if isinstance(event, dict) else None
    obj = data.get("object") if isinstance(data, dict) else None
    if not isinstance(event, dict) or not isinstance(event.get("id"), str) or not isinstance(event.get("type"), str) \
            or not isinstance(obj, dict):
        raise PermanentError("a stored payment event is a Stripe event: id, type, created and data.object")
    try:
        created = _at(int(event["created"]))
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        raise PermanentError(f"payment event {event['id']} has no valid created time") from None
    return event["id"], event["type"], created, obj


def _subscription_of(kind: str, obj: dict[str, Any]) -> str | None:
    """The provider subscription an event is about."""
    if kind.startswith("customer.subscription."):
        return obj.get("id")
    return invoice_subscription_id(obj)  # a checkout session's `subscription` is read the same way


def _event_values(kind: str, obj: dict[str, Any], created: datetime, business: Any,
                  prices: dict[str, str]) -> dict[str, Any]:
    """The business columns an event sets."""
    status = business.subscription_status
    if kind == "checkout.session.completed":
        # A checkout is the business's own subscription: one billed on its account's no longer follows that one.
        values: dict[str, Any] = {"customer_id": obj.get("customer"), "subscription_id": _subscription_of(kind, obj),
                                  "billed_on": None}
        if status == billing.INCOMPLETE:  # the subscription's own events may have come first
            values.update(subscription_status=billing.TRIALING, subscription_event_at=created)
        elif status == billing.CANCELED and values["subscription_id"] != business.subscription_id:  # resubscribed
            values.update(subscription_status=billing.ACTIVE, subscription_event_at=created, past_due_since=None,
                          paid_through=None)
        return {k: v for k, v in values.items()
                if v is not None or k in ("past_due_since", "paid_through", "billed_on")}
    if kind == "checkout.session.expired":
        return {"checkout_session_id": None} if obj.get("id") == business.checkout_session_id else {}
    replaced = business.subscription_id and _subscription_of(kind, obj) not in (None, business.subscription_id)
    if replaced:  # an event of the subscription a resubscription replaced
        return {}
    if kind in SUBSCRIPTION_EVENTS:
        ours = pay.our_status(obj.get("status", ""))
        if ours is None or not pay.applies(created, business.subscription_event_at, status):
            return {}
        values = {"subscription_status": ours, "subscription_event_at": created, "subscription_id": obj.get("id")}
        if (plan := pay.plan_of_subscription(obj, prices)) is not None:  # an upgrade or downgrade
            values["plan_id"] = plan
        if ours in (billing.TRIALING, billing.ACTIVE):
            values["past_due_since"] = None
        elif ours == billing.PAST_DUE and business.past_due_since is None:
            values["past_due_since"] = created
        if obj.get("customer"):
            values["customer_id"] = obj["customer"]
        return values
    if kind == "invoice.payment_failed" and status != billing.CANCELED and business.past_due_since is None:
        values = {"past_due_since": created}
        if pay.applies(created, business.subscription_event_at, status) and status != billing.INCOMPLETE:
            values.update(subscription_status=billing.PAST_DUE, subscription_event_at=created)
        return values
    if kind == "invoice.paid" and status == billing.PAST_DUE and pay.applies(created, business.subscription_event_at,
                                                                         status):
        return {"subscription_status": billing.ACTIVE, "subscription_event_at": created, "past_due_since": None}
    return {}
