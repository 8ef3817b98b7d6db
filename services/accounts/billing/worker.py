"""The billing worker and the wiring of the payment use cases on the configured providers."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from core.background import Periodic
from core.settings import Settings
from core.uow import UnitOfWork
from providers import configured
from services.accounts.billing.payments_service import Payments
from services.accounts.billing.workspace_billing import WorkspaceBilling
from services.accounts.billing.x402_billing import X402Billing
from services.accounts.ports import Provisioner
from services.accounts.repository import AccountsUnit


class BillingWorker(Periodic):
    """Every `interval` seconds (at once when woken): runs due provisioning sagas, billing's time-driven moves,
    the reconciliation of x402 payments whose settlement went unanswered, the reminders of x402 periods about to
    end, and the workspaces whose request died before adding them to the subscription."""

    task_name = "billing-worker"

    def __init__(self, parts: PaymentParts, interval: float):
        self.parts = parts
        self.interval = interval
        parts.payments.provision_soon = self.wake

    async def round(self) -> bool:
        while await self.parts.provisioning.run_due():
            pass
        await self.parts.payments.sweep()
        await self.parts.x402.reconcile()
        await self.parts.x402.remind()
        await self.parts.workspaces.finish_pending()
        return False


@dataclass(frozen=True)
class PaymentParts:
    payments: Payments
    provisioning: Provisioner
    x402: X402Billing
    workspaces: WorkspaceBilling
    closers: list[Callable[[], Awaitable[None]]]


def payment_parts(s: Settings, uow: UnitOfWork[AccountsUnit], provisioning: Provisioner) -> PaymentParts:
    """The payments use cases on the configured providers, moving on `provisioning` (the signup's saga), with the
    providers' closers (for the service and the service-layer tests)."""
    checkout, gate = configured.payments(s), configured.x402_gate(s)
    closers: list[Callable[[], Awaitable[None]]] = [checkout.close, *([gate.close] if gate else [])]
    payments = Payments(uow, checkout, gate, provisioning, s.public_base_url, timedelta(hours=s.payment_grace_hours),
                        s.checkout_prices)
    # A pending payment is asked about again once a round of the worker comes, and never while a settlement of
    # it may still be under way (a settlement is bounded by twice the facilitator timeout).
    retry = timedelta(seconds=max(s.billing_interval_seconds, 2 * s.x402_timeout_seconds + 1))
    x402 = X402Billing(payments, retry)
    return PaymentParts(payments, provisioning, x402, WorkspaceBilling(uow, payments, x402), closers)
