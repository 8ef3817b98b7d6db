"""services.accounts.billing_repository's SqlBilling in memory, on a MemoryDatabase (schema.businesses,
schema.payment_events, schema.x402_payments; a business deleted takes its x402 payments and its provisioning saga
with it, as the foreign keys' ON DELETE CASCADE does), and the signup part of the accounts repository
(`MemorySignups`: schema.users, schema.signup_attempts, schema.magic_links), which tests/memory/accounts.py's
MemoryAccounts takes on."""
from __future__ import annotations

from core.ids import utcnow
from core.records import record
from services.accounts.records import Business, CheckoutFacts, LiveWorkspace, PendingWorkspace, X402Payment
from services.accounts.schema import (
    api_keys,
    businesses,
    magic_links,
    payment_events,
    provisionings,
    signup_attempts,
    users,
    x402_payments,
)
from tests.memory import MemoryConnection, Record, insert, take_lease, update


def _business(row):
    """A copy of the stored row as a Business (changing it changes nothing stored)."""
    return record(Business, Record(row)._mapping)


def _payment(row):
    return record(X402Payment, Record(row)._mapping)


class MemoryBilling:
    def __init__(self, conn: MemoryConnection):
        self.business_rows = conn.rows(businesses)
        self.event_rows = conn.rows(payment_events)
        self.payment_rows = conn.rows(x402_payments)
        self.saga_rows = conn.rows(provisionings)

    # -- businesses --

    async def business(self, business_id):
        row = self.business_rows.get((business_id,))
        return _business(row) if row is not None else None

    async def lock_business_by(self, business_id, subscription_id, customer_id):
        for column, value in (("id", business_id), ("subscription_id", subscription_id),
                              ("customer_id", customer_id)):
            row = next((row for row in self.business_rows.values() if value and row[column] == value), None)
            if row is not None:
                return _business(row)
        return None

    async def record_payment_event(self, event_id, kind, business_id, created_at, received_at):
        if (event_id,) in self.event_rows:
            return False
        insert(self.event_rows, payment_events, {"event_id": event_id, "type": kind, "business_id": business_id,
                                                 "created_at": created_at, "received_at": received_at})
        return True

    async def billing_due(self, now, grace):
        """store.billing_due's candidates (a NULL time compares as nothing, as in SQL)."""
        def due(b):
            if b["lifecycle_state"] == "active" and (
                    (b["subscription_status"] == "past_due" and b["past_due_since"] is not None
                     and b["past_due_since"] <= now - grace)
                    or (b["subscription_status"] == "incomplete" and b["trial_ends_at"] is not None
                        and b["trial_ends_at"] <= now)
                    or (b["paid_through"] is not None and b["paid_through"] <= now - grace)):
                return True
            if b["subscription_status"] == "canceled" and b["lifecycle_state"] in ("active", "paused"):
                return True
            return (b["lifecycle_state"] == "paused" and b["paused_by_billing"]
                    and b["subscription_status"] in ("trialing", "active") and b["past_due_since"] is None
                    and (b["paid_through"] is None or b["paid_through"] > now))
        return [row["id"] for row in self.business_rows.values() if due(row)]

    async def renewals_to_remind(self, now, ahead):
        return [b["id"] for b in self.business_rows.values()
                if b["payment_capture"] == "x402" and b["lifecycle_state"] == "active"
                and b["subscription_status"] == "active" and b["paid_through"] is not None
                and now < b["paid_through"] <= now + ahead and b["renewal_reminded_through"] != b["paid_through"]]

    async def delete_business(self, business_id):
        for rows in (self.payment_rows, self.saga_rows):
            for key in [key for key, row in rows.items() if row["business_id"] == business_id]:
                del rows[key]
        self.business_rows.pop((business_id,), None)

    # -- workspaces billed on the account's subscription --

    def _live(self, rows):
        return sorted((row for row in rows if row["lifecycle_state"] != "inactive"),
                      key=lambda row: (row["created_at"], row["id"]))

    async def payer(self, account_id, *, lock=True):
        return next((_business(row) for row in sorted(self.business_rows.values(),
                                                      key=lambda row: (row["created_at"], row["id"]))
                     if row["account_id"] == account_id and row["billed_on"] is None), None)

    async def live_workspaces(self, account_id):
        return [record(LiveWorkspace, row) for row in self._live(self.business_rows.values())
                if row["account_id"] == account_id]

    async def billed_on(self, payer_id, *, lock=False):
        return [_business(row) for row in self._live(self.business_rows.values()) if row["billed_on"] == payer_id]

    async def pending_workspaces(self, now):
        return [record(PendingWorkspace, row) for row in self.business_rows.values()
                if row["billed_on"] is not None and row["subscription_status"] == "incomplete"
                and row["lease_until"] is not None and row["lease_until"] <= now]

    async def take_lease(self, business_id, duration):
        return take_lease(businesses, self.business_rows.get((business_id,)), duration)

    def _held(self, business_id, token):
        """The row whose lease is still `token`'s (core.leases.held), or None."""
        row = self.business_rows.get((business_id,))
        return row if row is not None and row["lease_token"] == token else None

    async def delete_pending_workspace(self, business_id, token):
        row = self._held(business_id, token)
        if row is not None and row["subscription_status"] == "incomplete":
            await self.delete_business(business_id)

    async def retry_pending_workspace(self, business_id, token, at):
        row = self._held(business_id, token)
        if row is not None:
            update(businesses, row, {"lease_until": at})

    # -- x402 payments --

    def _by_authorization(self, payer, nonce):
        return next((row for row in self.payment_rows.values()
                     if nonce is not None and (row["payer"], row["nonce"]) == (payer, nonce)), None)

    async def add_x402_payment(self, **values):
        """False when its authorization (payer, nonce) is recorded already (the x402_payments_authorization index;
        a payment with no nonce never repeats one, as NULLs are distinct there)."""
        if self._by_authorization(values["payer"], values.get("nonce")) is not None:
            return False
        insert(self.payment_rows, x402_payments, values)
        return True

    async def x402_payment(self, *, id=None, payer=None, nonce=None, lock=False):
        row = self.payment_rows.get((id,)) if id else self._by_authorization(payer, nonce)
        return _payment(row) if row is not None else None

    async def change_x402_payment(self, payment_id, values):
        row = self.payment_rows.get((payment_id,))
        if row is not None:
            update(x402_payments, row, values)

    async def business_of_x402_payment(self, payment_id):
        row = self.payment_rows.get((payment_id,))
        return await self.business(row["business_id"]) if row is not None else None

    async def has_pending_x402(self, business_id):
        return any(row["business_id"] == business_id and row["status"] in ("pending", "unresolved")
                   for row in self.payment_rows.values())

    async def claim_due_x402_payments(self, limit, retry_after):
        now = utcnow()
        due = sorted((row for row in self.payment_rows.values() if row["status"] == "pending"
                      and row["next_attempt_at"] is not None and row["next_attempt_at"] <= now),
                     key=lambda row: row["next_attempt_at"])[:limit]
        return [_payment(update(x402_payments, row, {"attempts": row["attempts"] + 1,
                                                     "next_attempt_at": now + retry_after})._mapping)
                for row in due]


class MemorySignups:
    """The signup part of services.accounts.repository's AccountsRepository (store.py's statements of the same
    names): the address's attempts, the user, the signup's sign-in link, undoing an account whose payment did not
    settle, and what a new checkout of its business reads."""

    def __init__(self, conn: MemoryConnection):
        self.user_rows = conn.rows(users)
        self.attempt_rows = conn.rows(signup_attempts)
        self.link_rows = conn.rows(magic_links)
        self.api_key_rows = conn.rows(api_keys)
        self._billing = MemoryBilling(conn)

    async def count_signup_attempts(self, client_ip, since):
        """store.recent_signup_attempts: the address's attempts since `since` and the oldest of them; older ones
        are forgotten."""
        for key in [key for key, row in self.attempt_rows.items()
                    if row["client_ip"] == client_ip and row["created_at"] <= since]:
            del self.attempt_rows[key]
        recent = [row["created_at"] for row in self.attempt_rows.values() if row["client_ip"] == client_ip]
        return len(recent), min(recent, default=None)

    async def add_signup_attempt(self, client_ip, at):
        next_id = max((key[0] for key in self.attempt_rows), default=0) + 1  # the identity column's
        insert(self.attempt_rows, signup_attempts, {"id": next_id, "client_ip": client_ip, "created_at": at})

    async def email_taken(self, email):
        return any(row["email"] == email for row in self.user_rows.values())

    async def add_user(self, **values):
        if await self.email_taken(values["email"]):
            return False
        insert(self.user_rows, users, values)
        return True

    async def add_magic_link(self, **values):
        insert(self.link_rows, magic_links, values)

    async def checkout_facts(self, business_id):
        row = self._billing.business_rows.get((business_id,))
        if row is None:
            return None
        return record(CheckoutFacts, {**Record(row)._mapping, "email": self.user_rows[(row["account_id"],)]["email"]})

    async def delete_account(self, account_id):
        """store.delete_account: the account and everything made with it (its businesses' sagas and payments)."""
        for business_id in [row["id"] for row in self._billing.business_rows.values()
                            if row["account_id"] == account_id]:
            await self._billing.delete_business(business_id)
        for rows in (self.link_rows, self.api_key_rows):
            for key in [key for key, row in rows.items() if row["account_id"] == account_id]:
                del rows[key]
        self.user_rows.pop((account_id,), None)
