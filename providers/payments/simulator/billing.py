"""Subscriptions over time: checkout completion, the end of the trial, monthly renewals, failed payments and
their retries (dunning, as the account's settings say), and cancellation; each with the events Stripe sends for
it, stamped in the order things happened.

Each subscription has a billing clock: the next moment (`trial_end`, `renewal`, `payment` or `retry`) at a
real-looking date (trial start + trial days, then month after month; a renewal's payment an hour after its
invoice was drafted; retries as the dunning settings place them). A timer plays it after the simulated time to it
multiplied by the time scale (time scale 0: never by itself); the control plane's `advance` plays it at once.
The objects' dates are the planned ones, whenever the moment is played.

Events of one moment share a base second and each later step a later one (`created`); a subscription's events
never go back in time (a moment played within a second of the last gets the next second), so "the newer event
wins" can be told from `created`. Their default delivery order is the order below, which Stripe does not
guarantee (see `events` for shuffled delivery and holding them back).

- Checkout with a working card: a customer (`customer.created`, unless the session named one), the subscription
  (`customer.subscription.created`: `trialing`, or `incomplete` until its first payment), its first invoice made
  and finalized at once (`invoice.created`, `invoice.finalized`) and paid (`invoice.paid`,
  `invoice.payment_succeeded`; 0 during a trial); without a trial the subscription is then `active`
  (`customer.subscription.updated`); a second later `checkout.session.completed`.
- Trial end / renewal (the period's end): the subscription moves to its next period (`active` at a trial's end):
  `customer.subscription.updated` with `previous_attributes` (`items` with the old period, `latest_invoice`,
  `status` when it changed), and its invoice is drafted (`invoice.created`, `status: draft`,
  `automatically_finalizes_at` an hour on).
- Payment (FINALIZE_AFTER, an hour, after `invoice.created` was acknowledged; at most 72 hours after it was made,
  as Stripe waits for the endpoint): `invoice.finalized` (open, numbered, its hosted page), then the charge.
  Paid: `invoice.paid`, `invoice.payment_succeeded` (and `customer.subscription.updated` back to `active` if it was
  not). Declined: `invoice.payment_failed` with `next_payment_attempt` (and `invoice.payment_action_required` when
  the bank asks the customer to authenticate), the subscription `past_due` (`customer.subscription.updated`).
- Retries: the dunning settings (`Dunning`, Stripe's Revenue recovery settings): Smart Retries, by default 8 tries
  within 2 weeks (the simulator spreads them evenly over the window, where Stripe's model picks the times), or a
  custom schedule (retries N days after the previous attempt). Each retry that fails again sends
  `invoice.payment_failed` and `invoice.updated`; one that works sends `invoice.paid`,
  `invoice.payment_succeeded` and `customer.subscription.updated` back to `active`. When the last one fails the
  final action runs: `cancel` (the default: `customer.subscription.deleted`, cancellation_details.reason
  `payment_failed`), `unpaid` (`customer.subscription.updated`, status `unpaid`; later renewals draft invoices
  that are not charged) or `past_due` (left so; later renewals are charged as usual). The next period starts
  once the dunning of the open invoice is over (where a retry window outlasts the period, Stripe would start it
  meanwhile).
- The customer pays the open invoice at its hosted page (`hosted_invoice_url`) with a card that works: the same
  events as a retry that works, and that card is the subscription's from then on.
- Cancel through the API: at once, `customer.subscription.deleted` (reason `cancellation_requested`).
"""
from __future__ import annotations

import asyncio
import copy
import logging
from dataclasses import dataclass, replace
from typing import Any

from providers.payments.simulator import cards
from providers.payments.simulator.events import Events
from providers.payments.simulator.objects import DAY, HOUR, State, add_months, card_details, now, plan_object

log = logging.getLogger(__name__)

TRIAL_WILL_END_DAYS = 3  # Stripe's notice comes three days before a trial ends
FINALIZE_AFTER = HOUR  # a renewal's draft is finalized and charged an hour after invoice.created was acknowledged
FINALIZE_AT_MOST = 72 * HOUR  # ... or this long after it was made, if the endpoint never acknowledges it
FINAL_ACTIONS = ("cancel", "unpaid", "past_due")
SMART_WINDOWS = (7, 14, 21, 30, 60)  # days: 1, 2 or 3 weeks, 1 or 2 months
MAX_SMART_TRIES, MAX_CUSTOM_RETRIES, MAX_CUSTOM_DAYS = 8, 4, 30


class NothingToAdvance(Exception):
    pass


@dataclass(frozen=True)
class Dunning:
    """What the account's Revenue recovery settings say of a subscription's failed payment: Smart Retries
    (`attempts` tries within `window_days`) or a custom schedule (`days` after the previous attempt each), and
    what to do with the subscription when the last retry fails (`final_action`: cancel, unpaid, past_due).
    Stripe's defaults: Smart Retries, 8 tries within 2 weeks, then cancel the subscription."""

    mode: str = "smart"
    attempts: int = 8
    window_days: int = 14
    days: tuple[int, ...] = (3, 5, 7)
    final_action: str = "cancel"

    def schedule(self) -> list[int]:
        """Seconds after the first failed attempt at which each retry comes."""
        if self.mode == "smart":
            return [round(self.window_days * DAY * k / self.attempts) for k in range(1, self.attempts + 1)]
        offsets, total = [], 0
        for days in self.days:
            total += days * DAY
            offsets.append(total)
        return offsets

    def view(self) -> dict[str, Any]:
        retries = {"mode": "smart", "attempts": self.attempts, "window_days": self.window_days} \
            if self.mode == "smart" else {"mode": "custom", "days": list(self.days)}
        return {"retries": retries, "final_action": self.final_action}

    def updated(self, body: dict[str, Any]) -> tuple[Dunning, list[str]]:
        """These settings changed as a control-plane body says (`{"retries": {...}, "final_action": ...}`, either
        part), and what is wrong with it."""
        errors: list[str] = []
        changed = self
        if "final_action" in body:
            if body["final_action"] not in FINAL_ACTIONS:
                errors.append(f"final_action must be one of {', '.join(FINAL_ACTIONS)}")
            else:
                changed = replace(changed, final_action=body["final_action"])
        if "retries" in body:
            retries = body["retries"]
            if not isinstance(retries, dict) or retries.get("mode") not in ("smart", "custom"):
                errors.append('retries must be {"mode": "smart", "attempts", "window_days"} or '
                              '{"mode": "custom", "days": [...]}')
            elif retries["mode"] == "smart":
                attempts, window = retries.get("attempts", 8), retries.get("window_days", 14)
                if set(retries) - {"mode", "attempts", "window_days"} or not _count(attempts, MAX_SMART_TRIES) \
                        or window not in SMART_WINDOWS:
                    errors.append(f"smart retries: attempts 1-{MAX_SMART_TRIES} within window_days of "
                                  f"{', '.join(map(str, SMART_WINDOWS))}")
                else:
                    changed = replace(changed, mode="smart", attempts=attempts, window_days=window)
            else:
                days = retries.get("days")
                if set(retries) - {"mode", "days"} or not isinstance(days, list) \
                        or not 1 <= len(days) <= MAX_CUSTOM_RETRIES or not all(_count(d, MAX_CUSTOM_DAYS) for d in days):
                    errors.append(f"custom retries: days, a list of 1-{MAX_CUSTOM_RETRIES} retries, each 1-"
                                  f"{MAX_CUSTOM_DAYS} days after the previous attempt")
                else:
                    changed = replace(changed, mode="custom", days=tuple(days))
        return changed, errors

    @classmethod
    def parse(cls, retries: str | None, final_action: str | None) -> Dunning:
        """From the command line's words: `smart:<tries>/<days>` or `custom:<days>,<days>,...`, and a final
        action; ValueError says what is wrong."""
        body: dict[str, Any] = {}
        if retries:
            mode, _, rest = retries.partition(":")
            try:
                if mode == "smart":
                    tries, _, window = rest.partition("/")
                    body["retries"] = {"mode": "smart", "attempts": int(tries), "window_days": int(window)}
                elif mode == "custom":
                    body["retries"] = {"mode": "custom", "days": [int(d) for d in rest.split(",")]}
                else:
                    body["retries"] = {}
            except ValueError:
                body["retries"] = {}
        if final_action:
            body["final_action"] = final_action
        dunning, errors = cls().updated(body)
        if errors:
            raise ValueError("; ".join(errors))
        return dunning


def _count(value: object, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= high


class Billing:
    def __init__(self, state: State, events: Events, time_scale: float, public_url: str,
                 dunning: Dunning | None = None):
        self.state, self.events, self.time_scale, self.public_url = state, events, time_scale, public_url
        self.dunning = dunning or Dunning()
        self.timers: dict[str, asyncio.Task[Any]] = {}

    # -- events, in the order things happened ------------------------------------------------------------------

    @staticmethod
    def base(sub: dict[str, Any]) -> int:
        """The second a moment of the subscription happens at: now, and never at or before its last event."""
        stamp: int = sub["_stamp"]
        return max(now(), stamp + 1)

    def emit(self, sub: dict[str, Any], at: int, type_: str, obj: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        sub["_stamp"] = max(sub["_stamp"], at)
        return self.events.emit(type_, obj, at=at, **kwargs)

    # -- checkout --------------------------------------------------------------------------------------------

    def complete_checkout(self, session: dict[str, Any], card_number: str) -> dict[str, Any]:
        """The session paid with a card that works now (declines are refused before); the subscription."""
        at = now()
        data = session["_subscription_data"]
        trial_days = data.get("trial_period_days") or 0
        card = cards.card_of(card_number)
        details = card_details(card.brand if card else cards.brand_of(card_number),
                               card.funding if card else "credit", card_number[-4:])
        customer = self.state.customers.get(session["customer"] or "")
        new_customer = customer is None
        if customer is None:
            customer = self.state.new_customer(email=session["customer_email"], card=details, at=at)
            self.events.emit("customer.created", customer, at=at)
        else:  # the new card is the customer's from now on
            customer["_card"].update(details)
        sub = self.start_subscription(customer, session["_line_items"], dict(data.get("metadata") or {}), trial_days,
                                      card_number, at=at)
        session.update(status="complete", payment_status="no_payment_required" if trial_days else "paid",
                       customer=customer["id"], subscription=sub["id"], invoice=sub["latest_invoice"], url=None,
                       customer_details={"address": None, "business_name": None, "email": customer["email"],
                                         "individual_name": None, "name": None, "phone": None,
                                         "tax_exempt": "none", "tax_ids": []})
        self.emit(sub, at + 1, "checkout.session.completed", session)
        log.info("checkout %s complete: subscription %s %s (new customer: %s)", session["id"], sub["id"],
                 sub["status"], new_customer)
        return sub

    def start_subscription(self, customer: dict[str, Any], line_items: list[dict[str, Any]], metadata: dict[str, Any], trial_days: int,
                           card_number: str, at: int | None = None) -> dict[str, Any]:
        """A subscription of the customer (a checkout's, or one made through the API), its first invoice paid at
        once (0 during a trial), active without a trial; its clock started."""
        at = at or now()
        sub = self.state.new_subscription(customer=customer, line_items=line_items, metadata=metadata,
                                          trial_days=trial_days, at=at)
        self.set_card(sub, card_number)
        invoice = self.state.new_invoice(sub=sub, billing_reason="subscription_create", at=at,
                                         period=(at, sub["_next_at"]), trial=bool(trial_days))
        self.emit(sub, at, "customer.subscription.created", sub)
        self.emit(sub, at, "invoice.created", invoice)
        self.state.finalize(invoice, at, self.public_url)  # a subscription's first invoice: at once
        self.emit(sub, at, "invoice.finalized", invoice)
        self.state.mark_paid(invoice, at)
        self.emit(sub, at, "invoice.paid", invoice)
        self.emit(sub, at, "invoice.payment_succeeded", invoice)
        if not trial_days:
            sub["status"] = "active"
            self.emit(sub, at + 1, "customer.subscription.updated", sub, previous={"status": "incomplete"})
        self.schedule(sub)
        return sub

    def expire_session(self, session: dict[str, Any]) -> None:
        """An open session that can no longer be paid (expired by the API, or past its expires_at)."""
        session.update(status="expired", url=None)
        self.events.emit("checkout.session.expired", session)
        log.info("checkout %s expired", session["id"])

    # -- the card's fate -------------------------------------------------------------------------------------

    @staticmethod
    def set_card(sub: dict[str, Any], card_number: str) -> None:
        """The card later charges go to (off-session): how they end."""
        later = cards.later_decline(card_number)
        sub["_needs_action"] = later == "authentication_required"
        sub["_decline"] = None if sub["_needs_action"] else later

    @staticmethod
    def set_failing(sub: dict[str, Any], fail: bool) -> None:
        """The control plane's switch: every later charge is declined (`generic_decline`), or goes through."""
        sub["_decline"] = "generic_decline" if fail else None
        sub["_needs_action"] = sub["_needs_action"] and fail

    @staticmethod
    def charge(sub: dict[str, Any]) -> str | None:
        """An off-session charge of the subscription's card: None when it goes through, else why not."""
        declined: str | None = sub["_decline"]
        if declined:
            return declined
        return "authentication_required" if sub["_needs_action"] else None

    # -- the clock -------------------------------------------------------------------------------------------

    def schedule(self, sub: dict[str, Any]) -> None:
        self.unschedule(sub["id"])
        if sub["status"] == "canceled" or not self.time_scale or sub["_next"] is None:
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

    def trial_will_end(self, sub: dict[str, Any]) -> dict[str, Any]:
        """Stripe's notice three days before a trial ends (once per trial); the event."""
        sub["_trial_will_end_sent"] = True
        return self.emit(sub, self.base(sub), "customer.subscription.trial_will_end", sub)

    def change_item(self, sub: dict[str, Any], item_id: str, *, price: dict[str, Any] | None, quantity: int | None,
                    prorate: bool) -> None:
        """A change of one item taking effect now: a new price (an upgrade or downgrade, not prorated) and/or a
        new quantity, whose difference for the rest of the current period is a proration on the next invoice
        (none during a trial: nothing is charged for it)."""
        previous = {"items": copy.deepcopy({"data": sub["items"]["data"]})}
        item = next(i for i in sub["items"]["data"] if i["id"] == item_id)
        if price is not None:
            item.update(price=copy.deepcopy(price), plan=plan_object(price))
        if quantity is not None and quantity != item["quantity"]:
            if prorate and sub["status"] != "trialing":
                self.state.prorate(sub, item, quantity - item["quantity"], now())
            item["quantity"] = quantity
        self.emit(sub, self.base(sub), "customer.subscription.updated", sub, previous=previous)

    def unschedule(self, sub_id: str) -> None:
        for key in (sub_id, f"{sub_id}:trial_will_end"):
            timer = self.timers.pop(key, None)
            if timer is not None and timer is not asyncio.current_task():
                timer.cancel()

    async def _after(self, sub_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        sub = self.state.subscriptions.get(sub_id)
        if sub is not None and sub["_next"] == "payment":
            await self._acknowledged(sub)
        self.timers.pop(sub_id, None)
        if sub is not None and sub["status"] != "canceled":
            try:
                self.play(sub)
            except Exception:  # logged; the subscription's clock stops here
                log.exception("subscription %s: %s could not be played", sub_id, sub["_next"])

    async def _acknowledged(self, sub: dict[str, Any]) -> None:
        """Stripe finalizes a draft an hour after our endpoint acknowledged its invoice.created, or 72 hours after
        it was made: the timer, due an hour after it was made, waits for the acknowledgement."""
        record = self.events.by_id.get(sub.get("_draft_event") or "")
        if record is None or record["acked"].is_set():
            return
        try:
            await asyncio.wait_for(record["acked"].wait(), (FINALIZE_AT_MOST - FINALIZE_AFTER) * self.time_scale)
        except TimeoutError:
            return
        await asyncio.sleep(FINALIZE_AFTER * self.time_scale)

    def advance(self, sub: dict[str, Any]) -> tuple[str, list[str]]:
        """Play the subscription's next moment now: what it was and the ids of the events it made."""
        if sub["status"] == "canceled" or sub["_next"] is None:
            raise NothingToAdvance(f"subscription {sub['id']} is {sub['status']}: nothing left to advance")
        self.unschedule(sub["id"])
        return self.play(sub)

    def play(self, sub: dict[str, Any]) -> tuple[str, list[str]]:
        moment, at = sub["_next"], sub["_next_at"]
        before = len(self.events.records)
        sub["_clock"] = at
        if moment == "payment":
            self._pay_draft(sub, at)
        elif moment == "retry":
            self._retry(sub, at)
        else:
            self._new_period(sub, at)
        self.schedule(sub)
        made = [r["event"]["id"] for r in self.events.records[before:]]
        log.info("subscription %s: %s played (%s)", sub["id"], moment, sub["status"])
        return moment, made

    def _new_period(self, sub: dict[str, Any], start: int) -> None:
        """The period's end: the next one begins and its invoice is drafted (charged an hour later)."""
        end = add_months(start)
        previous = {"items": copy.deepcopy({"data": sub["items"]["data"]}), "latest_invoice": sub["latest_invoice"]}
        if sub["status"] == "trialing":
            previous["status"] = "trialing"
            sub["status"] = "active"
        self.state.set_period(sub, start, end)
        invoice = self.state.new_invoice(sub=sub, billing_reason="subscription_cycle", at=start, period=(start, end),
                                         trial=False)
        at = self.base(sub)
        self.emit(sub, at, "customer.subscription.updated", sub, previous=previous)
        if sub["status"] == "unpaid":  # Stripe drafts an unpaid subscription's invoices and leaves them so
            invoice.update(auto_advance=False, automatically_finalizes_at=None, next_payment_attempt=None)
            self.emit(sub, at, "invoice.created", invoice)
            sub.update(_next="renewal", _next_at=end)
            return
        created = self.emit(sub, at, "invoice.created", invoice)
        sub.update(_next="payment", _next_at=start + FINALIZE_AFTER, _draft=invoice["id"], _draft_event=created["id"])

    def _pay_draft(self, sub: dict[str, Any], at: int) -> None:
        """The draft is finalized and charged."""
        invoice = self.state.invoices[sub["_draft"]]
        sub.update(_draft=None, _draft_event=None)
        base = self.base(sub)
        self.state.finalize(invoice, at, self.public_url)
        self.emit(sub, base, "invoice.finalized", invoice)
        decline = self.charge(sub) if invoice["amount_due"] else None
        if decline is None:
            self._paid(sub, invoice, at, base)
            return
        retries = [at + offset for offset in self.dunning.schedule()]
        sub.update(_retries=retries, _open_invoice=invoice["id"], _final_action=self.dunning.final_action)
        self.state.mark_failed(invoice, retries[0] if retries else None)
        self.emit(sub, base, "invoice.payment_failed", invoice)
        if decline == "authentication_required":  # the customer authenticates at the hosted invoice page
            self.emit(sub, base, "invoice.payment_action_required", invoice)
        if sub["status"] != "past_due":
            previous = {"status": sub["status"]}
            sub["status"] = "past_due"
            self.emit(sub, base + 1, "customer.subscription.updated", sub, previous=previous)
        if retries:
            sub.update(_next="retry", _next_at=retries[0])
        else:
            self._final_action(sub, at, base + 1)

    def _retry(self, sub: dict[str, Any], at: int) -> None:
        invoice = self.state.invoices[sub["_open_invoice"]]
        base = self.base(sub)
        if self.charge(sub) is None:
            self._paid(sub, invoice, at, base)
            return
        retries = sub["_retries"][1:]
        previous = {"attempt_count": invoice["attempt_count"], "next_payment_attempt": invoice["next_payment_attempt"]}
        sub["_retries"] = retries
        self.state.mark_failed(invoice, retries[0] if retries else None)
        self.emit(sub, base, "invoice.payment_failed", invoice)
        self.emit(sub, base, "invoice.updated", invoice, previous=previous)
        if retries:
            sub.update(_next="retry", _next_at=retries[0])
        else:
            self._final_action(sub, at, base + 1)

    def _final_action(self, sub: dict[str, Any], at: int, stamp: int) -> None:
        """The last retry failed: what the dunning settings say (when the payment failed) is done."""
        action = sub.get("_final_action") or self.dunning.final_action
        sub["_retries"] = []
        if action == "cancel":
            self.cancel(sub, reason="payment_failed", at=at, stamp=stamp)
            return
        if action == "unpaid":
            previous = {"status": sub["status"]}
            sub["status"] = "unpaid"
            self.emit(sub, stamp, "customer.subscription.updated", sub, previous=previous)
        period_end = sub["items"]["data"][0]["current_period_end"]
        sub.update(_next="renewal", _next_at=max(period_end, at))

    def _paid(self, sub: dict[str, Any], invoice: dict[str, Any], at: int, base: int) -> None:
        """The invoice was paid (charged, retried, or at its hosted page): active until the period's end."""
        self.state.mark_paid(invoice, at)
        self.emit(sub, base, "invoice.paid", invoice)
        self.emit(sub, base, "invoice.payment_succeeded", invoice)
        period_end = sub["items"]["data"][0]["current_period_end"]
        sub.update(_next="renewal", _next_at=max(period_end, at), _open_invoice=None, _retries=[])
        if sub["status"] != "active":
            previous = {"status": sub["status"]}
            sub["status"] = "active"
            self.emit(sub, base + 1, "customer.subscription.updated", sub, previous=previous)

    def pay_open_invoice(self, sub: dict[str, Any], invoice: dict[str, Any], card_number: str) -> None:
        """The customer paid a past-due subscription's open invoice at its hosted page, with a card that works
        (the subscription's card from now on): active again until the period's end, renewing from there."""
        self.unschedule(sub["id"])
        self.set_card(sub, card_number)
        self._paid(sub, invoice, now(), self.base(sub))
        self.schedule(sub)

    # -- cancellation ----------------------------------------------------------------------------------------

    def cancel(self, sub: dict[str, Any], *, reason: str, at: int | None = None, request: dict[str, Any] | None = None,
               stamp: int | None = None) -> dict[str, Any]:
        at = at or now()
        self.unschedule(sub["id"])
        sub.update(status="canceled", canceled_at=at, ended_at=at, _next=None, _next_at=None)
        sub["cancellation_details"]["reason"] = reason
        self.emit(sub, stamp or self.base(sub), "customer.subscription.deleted", sub, request=request)
        log.info("subscription %s canceled (%s)", sub["id"], reason)
        return sub

    def stop(self) -> None:
        for timer in list(self.timers.values()):
            timer.cancel()
        self.timers.clear()
