"""The billing worker and the wiring of the payment use cases on the configured providers."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from core.background import Background
from core.rpc import Client
from core.settings import Settings
from providers.payments.client import StripePayments
from providers.x402.server import X402Gate
from services.accounts.payments_service import Payments
from services.accounts.provisioning_service import Provisioning
from services.accounts.x402_billing import X402Billing

log = logging.getLogger(__name__)


class BillingWorker(Background):
    """Every `interval` seconds (at once when woken): runs due provisioning sagas, billing's time-driven moves,
    the reconciliation of x402 payments whose settlement went unanswered, and the reminders of x402 periods
    about to end."""

    task_name = "billing-worker"

    def __init__(self, parts: PaymentParts, interval: float):
        self.parts = parts
        self.interval = interval
        self._wake = asyncio.Event()
        parts.payments.provision_soon = self._wake.set

    async def run(self) -> None:
        while True:
            try:
                while await self.parts.provisioning.run_due():
                    pass
                await self.parts.payments.sweep()
                await self.parts.x402.reconcile()
                await self.parts.x402.remind()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - e.g. the database is away; the next round tries again
                log.exception("billing worker round failed")
            try:
                await asyncio.wait_for(self._wake.wait(), self.interval)
            except asyncio.TimeoutError:
                pass
            self._wake.clear()


@dataclass(frozen=True)
class PaymentParts:
    payments: Payments
    provisioning: Provisioning
    x402: X402Billing
    closers: list


def payment_parts(s: Settings, engine: AsyncEngine, agents: Client,
                  events_committed: Callable[[], None]) -> PaymentParts:
    """The payments use cases and the provisioning saga on the configured providers, with the providers'
    closers (for the service and the service-layer tests)."""
    checkout = StripePayments(s.payments_api_url, s.payments_api_key.reveal(), timeout=s.payments_timeout_seconds)
    closers = [checkout.close]
    gate = None  # x402 needs an address to be paid to
    if s.x402_pay_to:
        gate = X402Gate(s.x402_facilitator_url, s.x402_pay_to, network=s.x402_network, asset=s.x402_asset,
                        asset_name=s.x402_asset_name, asset_version=s.x402_asset_version,
                        timeout=s.x402_timeout_seconds)
        closers.append(gate.close)
    provisioning = Provisioning(engine, agents, s.provisioning_retry_seconds)
    payments = Payments(engine, checkout, gate, s.payments_webhook_secret.reveal(), provisioning,
                        s.public_base_url, timedelta(hours=s.payment_grace_hours), events_committed, s.checkout_prices)
    # A pending payment is asked about again once a round of the worker comes, and never while a settlement of
    # it may still be under way (a settlement is bounded by twice the facilitator timeout).
    retry = timedelta(seconds=max(s.billing_interval_seconds, 2 * s.x402_timeout_seconds + 1))
    return PaymentParts(payments, provisioning, X402Billing(payments, retry), closers)
