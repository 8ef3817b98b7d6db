"""Subscriptions over time: checkout completion, the end of the trial, monthly renewals, failed payments and
their retries (dunning), and cancellation; each with the events Stripe sends for it.

Each subscription has a billing clock: the next moment (`trial_end`, `renewal` or `retry`) at a real-looking
date (trial start + trial days, then month after month; retries RETRY_DAYS apart). A timer plays it after the
simulated time to it multiplied by the time scale (time scale 0: never by itself); the control plane's
`advance` plays it at once. The objects' dates are the planned ones, whenever the moment is played.

- Checkout with a working card: a customer, a subscription (`trialing` with a trial, else `active`) and its
  first invoice (0 during the trial), paid. Events: `checkout.session.completed`,
  `customer.subscription.created`, `invoice.paid` (billing_reason `subscription_create`).
- Trial end / renewal, the card works: the next month's invoice is paid; the subscription is `active` in its
  new period. Events: `invoice.paid` (`subscription_cycle`), `customer.subscription.updated` with
  `previous_attributes` (`items` with the old period, `latest_invoice`, `status` when it changed).
- The card fails: the invoice stays open; the subscription enters the new period `past_due`. Events:
  `invoice.payment_failed` (with `next_payment_attempt`), `customer.subscription.updated`. Each retry that
  fails again sends `invoice.payment_failed`; a retry that works sends `invoice.paid` and
  `customer.subscription.updated` back to `active`. After the last retry fails the subscription is canceled
  (cancellation_details.reason `payment_failed`): `customer.subscription.deleted`.
- The customer pays the open invoice at its hosted page (`hosted_invoice_url`) with a card that works: the same
  events as a retry that works, and that card is the subscription's from then on.
- Cancel through the API: at once, `customer.subscription.deleted` (reason `cancellation_requested`).
"""
from __future__ import annotations

import asyncio
import copy
import logging

from providers.payments.simulator.events import Events
from providers.payments.simulator.objects import DAY, State, add_months, now, plan_object

log = logging.getLogger(__name__)

TRIAL_WILL_END_DAYS = 3  # Stripe's notice comes three days before a trial ends
RETRY_DAYS = (3, 5, 7)  # after the first failed attempt: three retries, then the subscription is canceled


class NothingToAdvance(Exception):
    pass


class Billing:
    def __init__(self, state: State, events: Events, time_scale: float, public_url: str):
        self.state, self.events, self.time_scale, self.public_url = state, events, time_scale, public_url
        self.timers: dict[str, asyncio.Task] = {}

    # -- checkout --------------------------------------------------------------------------------------------

    def complete_checkout(self, session: dict, card_number: str, fails: bool, needs_action: bool = False) -> dict:
        """The session paid with a card that works now (declines are refused before); the subscription."""
        at = now()
        data = session["_subscription_data"]
        trial_days = data.get("trial_period_days") or 0
        customer = self.state.customers.get(session["customer"] or "") or self.state.new_customer(
            email=session["customer_email"], card_number=card_number, at=at)
        sub = self.state.new_subscription(customer=customer, line_items=session["_line_items"],
                                          metadata=dict(data.get("metadata") or {}), trial_days=trial_days, at=at,
                                          fails=fails or needs_action)
        sub["_needs_action"] = needs_action
        period = (at, sub["_next_at"])
        invoice = self.state.new_invoice(sub=sub, billing_reason="subscription_create", at=at, period=period,
                                         trial=bool(trial_days), public_url=self.public_url)
        self.state.mark_paid(invoice, at)
        session.update(status="complete", payment_status="no_payment_required" if trial_days else "paid",
                       customer=customer["id"], subscription=sub["id"], invoice=invoice["id"],
                       customer_details={"address": None, "email": customer["email"], "name": None, "phone": None,
                                         "tax_exempt": "none", "tax_ids": []})
        self.events.emit("checkout.session.completed", session)
        self.events.emit("customer.subscription.created", sub)
        self.events.emit("invoice.paid", invoice)
        log.info("checkout %s complete: subscription %s %s", session["id"], sub["id"], sub["status"])
        self.schedule(sub)
        return sub

    def expire_session(self, session: dict) -> None:
        """An open session that can no longer be paid (expired by the API, or past its expires_at)."""
        session["status"] = "expired"
        self.events.emit("checkout.session.expired", session)
        log.info("checkout %s expired", session["id"])

    # -- the clock -------------------------------------------------------------------------------------------

    def schedule(self, sub: dict) -> None:
        self.unschedule(sub["id"])
        if sub["status"] == "canceled" or not self.time_scale:
            return
        delay = max(sub["_next_at"] - sub["_clock"], 0) * self.time_scale
        self.timers[sub["id"]] = asyncio.get_running_loop().create_task(self._after(sub["id"], delay))
        if sub["status"] == "trialing" and not sub.get("_trial_will_end_sent"):
            warn = max(sub["trial_end"] - TRIAL_WILL_END_DAYS * DAY - sub["_clock"], 0) * self.time_scale
            self.timers[f"{sub['id']}:trial_will_end"] = asyncio.get_running_loop().create_task(
                self._warn_later(sub["id"], warn))

    async def _warn_later(self, sub_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        self.timers.pop(f"{sub_id}:trial_will_end", None)
        sub = self.state.subscriptions.get(sub_id)
        if sub is not None and sub["status"] == "trialing":
            self.trial_will_end(sub)

    def trial_will_end(self, sub: dict) -> dict:
        """Stripe's notice three days before a trial ends (once per trial); the event."""
        sub["_trial_will_end_sent"] = True
        return self.events.emit("customer.subscription.trial_will_end", sub)

    def change_price(self, sub: dict, item_id: str, price: dict) -> None:
        """A plan change (an upgrade or downgrade, taking effect now without proration)."""
        previous = {"items": copy.deepcopy({"data": sub["items"]["data"]})}
        item = next(i for i in sub["items"]["data"] if i["id"] == item_id)
        item.update(price=price, plan=plan_object(price))
        self.events.emit("customer.subscription.updated", sub, previous=previous)

    def unschedule(self, sub_id: str) -> None:
        for key in (sub_id, f"{sub_id}:trial_will_end"):
            timer = self.timers.pop(key, None)
            if timer is not None and timer is not asyncio.current_task():
                timer.cancel()

    async def _after(self, sub_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        self.timers.pop(sub_id, None)
        sub = self.state.subscriptions.get(sub_id)
        if sub is not None and sub["status"] != "canceled":
            try:
                self.play(sub)
            except Exception:  # logged; the subscription's clock stops here
                log.exception("subscription %s: %s could not be played", sub_id, sub["_next"])

    def advance(self, sub: dict) -> tuple[str, list[str]]:
        """Play the subscription's next moment now: what it was and the ids of the events it made."""
        if sub["status"] == "canceled":
            raise NothingToAdvance(f"subscription {sub['id']} is canceled: nothing left to advance")
        self.unschedule(sub["id"])
        return self.play(sub)

    def play(self, sub: dict) -> tuple[str, list[str]]:
        moment, at = sub["_next"], sub["_next_at"]
        before = len(self.events.records)
        sub["_clock"] = at
        if moment == "retry":
            self._retry(sub, at)
        else:
            self._new_period(sub, at)
        self.schedule(sub)
        made = [r["event"]["id"] for r in self.events.records[before:]]
        log.info("subscription %s: %s played (%s)", sub["id"], moment, sub["status"])
        return moment, made

    def _new_period(self, sub: dict, start: int) -> None:
        end = add_months(start)
        previous = {"items": copy.deepcopy({"data": sub["items"]["data"]}), "latest_invoice": sub["latest_invoice"]}
        old_status = sub["status"]
        self.state.set_period(sub, start, end)
        invoice = self.state.new_invoice(sub=sub, billing_reason="subscription_cycle", at=start, period=(start, end),
                                         trial=False, public_url=self.public_url)
        if not sub["_fails"]:
            self.state.mark_paid(invoice, start)
            sub.update(status="active", _next="renewal", _next_at=end, _open_invoice=None, _retries=0)
            self.events.emit("invoice.paid", invoice)
        else:
            retry_at = start + RETRY_DAYS[0] * DAY
            self.state.mark_failed(invoice, retry_at)
            sub.update(status="past_due", _next="retry", _next_at=retry_at, _open_invoice=invoice["id"], _retries=0)
            self.events.emit("invoice.payment_failed", invoice)
            if sub.get("_needs_action"):  # the card asks the customer to authenticate: at the hosted invoice page
                self.events.emit("invoice.payment_action_required", invoice)
        if sub["status"] != old_status:
            previous["status"] = old_status
        self.events.emit("customer.subscription.updated", sub, previous=previous)

    def _retry(self, sub: dict, at: int) -> None:
        invoice = self.state.invoices[sub["_open_invoice"]]
        period_end = sub["items"]["data"][0]["current_period_end"]
        if not sub["_fails"]:
            self._paid_again(sub, invoice, at, period_end)
            return
        sub["_retries"] += 1
        if sub["_retries"] < len(RETRY_DAYS):
            retry_at = at + RETRY_DAYS[sub["_retries"]] * DAY
            self.state.mark_failed(invoice, retry_at)
            sub.update(_next="retry", _next_at=retry_at)
            self.events.emit("invoice.payment_failed", invoice)
            return
        self.state.mark_failed(invoice, None)
        self.events.emit("invoice.payment_failed", invoice)
        self.cancel(sub, reason="payment_failed", at=at)

    def _paid_again(self, sub: dict, invoice: dict, at: int, period_end: int) -> None:
        self.state.mark_paid(invoice, at)
        previous = {"status": sub["status"]}
        sub.update(status="active", _next="renewal", _next_at=period_end, _open_invoice=None, _retries=0)
        self.events.emit("invoice.paid", invoice)
        self.events.emit("customer.subscription.updated", sub, previous=previous)

    def pay_open_invoice(self, sub: dict, invoice: dict) -> None:
        """The customer paid a past-due subscription's open invoice at its hosted page, with a card that works
        (the subscription's card from now on): active again until the period's end, renewing from there."""
        self.unschedule(sub["id"])
        self.set_failing(sub, False)
        self._paid_again(sub, invoice, now(), sub["items"]["data"][0]["current_period_end"])
        self.schedule(sub)

    # -- cancellation ----------------------------------------------------------------------------------------

    def cancel(self, sub: dict, *, reason: str, at: int | None = None, request: dict | None = None) -> dict:
        at = at or now()
        self.unschedule(sub["id"])
        sub.update(status="canceled", canceled_at=at, ended_at=at, _next=None, _next_at=None)
        sub["cancellation_details"]["reason"] = reason
        self.events.emit("customer.subscription.deleted", sub, request=request)
        log.info("subscription %s canceled (%s)", sub["id"], reason)
        return sub

    def set_failing(self, sub: dict, fail: bool) -> None:
        sub["_fails"] = fail
        sub["_needs_action"] = sub.get("_needs_action", False) and fail

    def stop(self) -> None:
        for timer in list(self.timers.values()):
            timer.cancel()
        self.timers.clear()
