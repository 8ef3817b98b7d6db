"""Account use cases: signup, API keys and dashboard sessions, workspaces and their lifecycle, usage.
Callers are the servicer and the service-layer tests; the caller's tenant comes from core.tenant."""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from contracts import accounts as accounts_contract
from contracts import billing as billing_contract
from core import tenant
from core.bus import AUTH_INVALIDATE_SUBJECT, EventBus
from core.errors import ServiceError, invalid, not_found
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.pagination import Page, Paged
from core.records import record
from core.scopes import DEFAULT_SCOPES
from core.settings import Settings
from core.uow import UnitOfWork
from providers.x402 import PAYMENT_REQUIRED_HEADER, PAYMENT_SIGNATURE_HEADER
from providers.x402.server import Verified
from services.accounts import domain, lifecycle, secret_keys
from services.accounts import payments_domain as pay
from services.accounts.agents_port import AgentsPort
from services.accounts.payments_service import Payments
from services.accounts.provisioning_service import Provisioning
from services.accounts.records import (
    ApiKeyRecord,
    SessionRecord,
    UsageRecord,
    Workspace,
    WorkspaceOwner,
    WorkspaceProvisioning,
    Zone,
)
from services.accounts.repository import AccountsRepository, AccountsUnit, HotPath
from services.accounts.secret_keys import SecretKeys
from services.accounts.workspace_billing import NewWorkspace, WorkspaceBilling
from services.accounts.x402_billing import X402Billing

log = logging.getLogger(__name__)

UNSET = object()  # "leave as it is" for KeyChanges fields whose None means something


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


@dataclass(frozen=True)
class Principal:
    key_id: str
    account_id: str
    business_ids: list[str]
    scopes: list[str]
    bound_business_id: str | None
    expires_at: datetime | None
    standings: dict[str, str]  # each business's core.standing value


@dataclass(frozen=True)
class Session:
    token: str
    account_id: str
    expires_at: datetime


@dataclass(frozen=True)
class ApiKey:
    """A stored key as the owner sees it; `secret` only right after creation."""

    key: ApiKeyRecord
    is_active: bool
    secret: str | None = None


@dataclass(frozen=True)
class CreatedWorkspace:
    workspace: Workspace
    payment_response: str = ""  # x402: the settlement (the PAYMENT-RESPONSE header)


@dataclass(frozen=True)
class KeyChanges:
    """What an update asks for; UNSET leaves a field alone (None clears business_id and expires_at)."""

    name: str | None = None
    scopes: list[str] | None = None
    business_id: object = UNSET  # a business id, or "" / None for every business of the account
    expires_at: object = UNSET
    expire: bool = False
    revoke: bool = False


@dataclass(frozen=True)
class CallCost:
    """A call to bill in the usage log, from its call.completed or call.failed event."""

    business_id: str
    call_id: str
    duration_seconds: int
    cost_cents: int
    at: datetime


@dataclass(frozen=True)
class Balance:
    business_id: str
    minutes_used: int
    phone_numbers: int
    subscription_status: str


class Accounts:
    def __init__(self, uow: UnitOfWork[AccountsUnit], hot: HotPath, bus: EventBus, settings: Settings,
                 payments: Payments, provisioning: Provisioning, x402: X402Billing, agents: AgentsPort):
        # The unit of work and the hot path's statements on the raw pool (services.accounts.repository).
        self.uow = uow
        self.hot = hot
        self.agents = agents
        self.payments = payments
        self.x402 = x402
        self.provisioning = provisioning
        self.bus = bus
        self.keys = SecretKeys.of(settings)
        self.base_url = settings.public_base_url
        self.signup_limit = settings.signup_limit_per_hour
        self.checkout_prices = settings.checkout_prices
        self.workspace_billing = WorkspaceBilling(payments.uow, payments, x402) if payments else None
        self.grace = timedelta(hours=settings.payment_grace_hours)  # billing's, for the owner's resume

    def hash(self, purpose: str, value: str) -> str:
        """How `value`, a secret of `purpose` (services.accounts.secret_keys), is stored now."""
        return self.keys.hash(purpose, value)

    # -- signup ----------------------------------------------------------------------------

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
        and reconciled (services.accounts.x402_billing): payment_status pending, provisioned once settled."""
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
                                   prefix=prefix, key_hash=self.hash(secret_keys.API_KEY, api_key),
                                   scopes=list(DEFAULT_SCOPES), created_at=now)
            await work.accounts.add_magic_link(token_hash=self.hash(secret_keys.SIGN_IN_LINK, magic),
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

    # -- keys and sessions -------------------------------------------------------------------

    async def authenticate_key(self, key: str) -> Principal:
        if not key.startswith(domain.KEY_PREFIX):
            raise ServiceError("unauthorized", f"API key must start with {domain.KEY_PREFIX}")
        async with self.uow.read() as work:
            row = await work.accounts.key_by_hash(self.keys.hashes(secret_keys.API_KEY, key))
            if row is None or not domain.key_usable(row.revoked_at, row.expires_at, utcnow()):
                raise ServiceError("unauthorized", "API key is invalid, expired or revoked")
            if not self.keys.is_current(row.key_hash):  # its first use since a rotation
                await self.hot.rehash("api_keys", row.key_hash, self.hash(secret_keys.API_KEY, key))
            bound = str(row.business_id) if row.business_id is not None else None
            standings = await work.accounts.standings(row.account_id, bound)
        return Principal(key_id=str(row.id), account_id=str(row.account_id),
                         business_ids=[bound] if bound else list(standings), scopes=list(row.scopes),
                         expires_at=row.expires_at, bound_business_id=bound, standings=standings)

    async def authenticate_session(self, token: str) -> Principal:
        """The principal of a dashboard session: its account's businesses, and no scope check (a person signed in
        to the browser holds every scope of their own account)."""
        async with self.uow.read() as work:
            row = await self._live_session(work.accounts, token)
            standings = await work.accounts.standings(row.account_id)
        return Principal(key_id="", account_id=str(row.account_id), business_ids=list(standings), scopes=["*"],
                         expires_at=row.expires_at, bound_business_id=None, standings=standings)

    async def redeem_magic_link(self, token: str) -> Session:
        now = utcnow()
        async with self.uow.transaction() as work:
            link = await work.accounts.use_magic_link(self.keys.hashes(secret_keys.SIGN_IN_LINK, token), now)
            if link is None:
                raise ServiceError("unauthorized", "this sign-in link is invalid, expired or already used")
            account_id = str(link.account_id)
            if link.mailed:  # it reached the owner's mailbox: the address is theirs
                await work.accounts.confirm_email(account_id, now)
            await work.accounts.end_dead_sessions_of(account_id, now, accounts_contract.SESSION_IDLE)
            session = Session(domain.new_secret_token(), account_id, now + accounts_contract.SESSION_TTL)
            await work.accounts.add_session(token_hash=self.hash(secret_keys.SESSION, session.token),
                                       account_id=account_id, created_at=now, expires_at=session.expires_at, last_used_at=now)
        return session

    async def sign_out(self, token: str, everywhere: bool) -> int:
        """End this session (done already if it had ended), or with `everywhere` every session of its account and
        its unused sign-in links; how many sessions ended."""
        async with self.uow.transaction() as work:
            if not everywhere:
                return await work.accounts.end_session(self.keys.hashes(secret_keys.SESSION, token))
            account_id = await self.session_account(work.accounts, token)
            await work.accounts.expire_magic_links_of(account_id, utcnow())
            return await work.accounts.end_sessions_of(account_id)

    async def session_account(self, accounts: AccountsRepository, token: str) -> str:
        """The account of a live dashboard session (found in the caller's unit of work), recording this use."""
        return str((await self._live_session(accounts, token)).account_id)

    async def _live_session(self, accounts: AccountsRepository, token: str) -> SessionRecord:
        """The session row of a token (its account and expiry), recording this use; unauthorized when unknown,
        expired or idle too long."""
        if not token:
            raise ServiceError("unauthorized", "this needs a dashboard session: open your magic link first")
        now = utcnow()
        row = await accounts.session(self.keys.hashes(secret_keys.SESSION, token))
        if row is None or not domain.session_live(row.expires_at, row.last_used_at, now):
            raise ServiceError("unauthorized", "dashboard session is invalid or expired (it ends "
                               f"{accounts_contract.SESSION_IDLE.total_seconds() / 3600:g} hours after its last use or "
                               f"{accounts_contract.SESSION_TTL.days} days after sign-in); sign in again with a magic link")
        token_hash = row.token_hash
        if not self.keys.is_current(token_hash):  # its first use since a rotation
            token_hash = self.hash(secret_keys.SESSION, token)
            await self.hot.rehash("sessions", row.token_hash, token_hash)
        if domain.session_touch_due(row.last_used_at, now):
            await self.hot.touch_session(token_hash, now)
        return row

    async def _account_business(self, accounts: AccountsRepository, account_id: str, business_id: str) -> str:
        require_uuid(business_id, "business_id")
        if not await accounts.business_of_account(account_id, business_id):
            raise ServiceError("forbidden", "business_id is not one of your businesses")
        return business_id

    @staticmethod
    def _view(key: ApiKeyRecord, now: datetime, secret: str | None = None) -> ApiKey:
        return ApiKey(key, domain.key_usable(key.revoked_at, key.expires_at, now), secret)

    async def list_keys(self, session_token: str) -> list[ApiKey]:
        now = utcnow()
        async with self.uow.read() as work:
            rows = await work.accounts.keys_of(await self.session_account(work.accounts, session_token))
        return [self._view(r, now) for r in rows]

    async def create_key(self, session_token: str, name: str | None, scopes: list[str] | None,
                         business_id: str | None, expires_at: datetime | None) -> ApiKey:
        now = utcnow()
        name = domain.check_new_key_name(name)
        scopes = domain.check_scopes(scopes) if scopes is not None else list(DEFAULT_SCOPES)
        if expires_at is not None and expires_at <= now:
            raise invalid("expires_at must be in the future")
        key, prefix = domain.new_api_key()
        async with self.uow.transaction() as work:
            account_id = await self.session_account(work.accounts, session_token)
            if business_id:
                business_id = await self._account_business(work.accounts, account_id, business_id)
            row = await work.accounts.add_key(
                id=new_id(), account_id=account_id, business_id=business_id or None, name=name, prefix=prefix,
                key_hash=self.hash(secret_keys.API_KEY, key), scopes=scopes, created_at=now, expires_at=expires_at)
        return self._view(row, now, key)

    async def update_key(self, session_token: str, key_id: str, changes: KeyChanges) -> ApiKey:
        require_uuid(key_id, "id")
        now = utcnow()
        values: dict[str, Any] = {}
        if changes.name is not None:
            values["name"] = domain.check_key_name(changes.name)
        if changes.scopes is not None:
            values["scopes"] = domain.check_scopes(changes.scopes)
        if changes.expires_at is not UNSET:
            values["expires_at"] = changes.expires_at
        if changes.expire:
            values["expires_at"] = now
        async with self.uow.transaction() as work:
            account_id = await self.session_account(work.accounts, session_token)
            if changes.business_id is not UNSET:
                values["business_id"] = (await self._account_business(work.accounts, account_id, str(changes.business_id))
                                         if changes.business_id else None)
            row = await work.accounts.change_key(key_id, account_id, values,
                                                          revoke_at=now if changes.revoke else None)
            if row is None:
                raise not_found("API key")
        if values or changes.revoke:
            await self.invalidate(account_id)
        return self._view(row, now)

    async def revoke_key(self, session_token: str, key_id: str) -> None:
        require_uuid(key_id, "id")
        async with self.uow.transaction() as work:
            account_id = await self.session_account(work.accounts, session_token)
            if await work.accounts.change_key(key_id, account_id, {}, revoke_at=utcnow()) is None:
                raise not_found("API key")
        await self.invalidate(account_id)

    async def invalidate(self, account_id: str) -> None:
        """Tell every gateway to forget cached principals of this account (best effort; see gateway.auth)."""
        nc = self.bus.nc
        if nc is None or not nc.is_connected:
            return
        try:
            await nc.publish(AUTH_INVALIDATE_SUBJECT, account_id.encode())
            await nc.flush(timeout=1)
        except Exception as exc:  # noqa: BLE001 - the gateways' TTL bounds staleness
            log.warning("could not publish auth invalidation: %s", exc)

    # -- workspaces --------------------------------------------------------------------------

    async def get_workspace(self, business_id: str) -> tuple[Workspace, WorkspaceProvisioning | None]:
        require_uuid(business_id, "id")
        if not tenant.require_account().can_access(business_id):
            raise not_found("workspace")
        found = await self.hot.workspace(business_id)
        if found is None:
            raise not_found("workspace")
        return found

    async def workspace_owner(self, business_id: str) -> WorkspaceOwner:
        require_uuid(business_id, "id")
        if not tenant.require_account().can_access(business_id):
            raise not_found("workspace")
        async with self.uow.read() as work:
            row = await work.accounts.workspace_owner(business_id)
        if row is None:
            raise not_found("workspace")
        return row

    async def list_workspaces(self, page: Page) -> Paged:
        who = tenant.require_account()
        async with self.uow.read() as work:
            return await work.accounts.workspaces_page(list(who.business_ids), page)

    async def business_zones(self) -> list[Zone]:
        """The caller's businesses with their names and time zones, oldest first."""
        who = tenant.require_account()
        async with self.uow.read() as work:
            return await work.accounts.zones_of(list(who.business_ids))

    async def create_workspace(self, name: str, metadata: dict[str, Any], external_ref: str | None, timezone: str | None = None,
                               payment_signature: str = "") -> CreatedWorkspace:
        """A workspace of the caller's account, billed on its subscription or paid by x402 as the account pays
        (services.accounts.workspace_billing): within its plan's limit, with no trial of its own."""
        who = tenant.require_account()
        if who.bound_business_id:
            raise ServiceError("forbidden", "this key is limited to one business and cannot create workspaces")
        form = NewWorkspace(domain.check_workspace_name(name, creating=True), metadata, external_ref,
                            domain.check_timezone(timezone) if timezone is not None else accounts_contract.DEFAULT_TIMEZONE)
        try:
            created = await self._billing().create(who.account_id, form, payment_signature)
        except ServiceError as exc:
            if exc.code == "provider_error":  # the workspace may be kept, unpaid, until the provider answers
                await self.invalidate(who.account_id)
            raise
        await self.invalidate(who.account_id)
        return CreatedWorkspace(record(Workspace, created.row._mapping), created.payment_response)

    async def update_workspace(self, business_id: str, name: str | None, metadata: dict[str, Any] | None, action: str | None,
                               timezone: str | None = None) -> Workspace:
        """Rename, merge metadata into, or move the lifecycle of a workspace (emitting the action's event)."""
        require_uuid(business_id, "id")
        if not tenant.require_account().can_access(business_id):
            raise not_found("workspace")
        moved = False
        async with self.uow.transaction() as work:
            row: Any = await work.accounts.lock_business(business_id)  # a business row (no record yet)
            if row is None:
                raise not_found("workspace")
            values: dict[str, Any] = {}
            if name is not None:
                values["name"] = domain.check_workspace_name(name, creating=False)
            if metadata is not None:
                values["metadata"] = {**row.metadata, **metadata}
            if timezone is not None:
                values["timezone"] = domain.check_timezone(timezone)
            if action is not None:
                if action == "resume" and (why := pay.owner_resume_refusal(self._billing_of(row), utcnow(),
                                                                           self.grace)):
                    raise ServiceError("forbidden", why)
                if action == "resume":
                    values["paused_by_billing"] = False
                row, moved = await lifecycle.move(work, row, action, values=values)
            elif values:
                row = await work.accounts.change_business(row.id, {**values, "updated_at": utcnow()})
        if moved and action == "teardown" and row.billed_on is not None:
            await self._billing().torn_down(str(row.account_id), str(row.id))
        if moved:
            # The owner's own move takes effect on their next request (the standing consumer's
            # invalidation follows moments later, for every change of standing).
            await self.invalidate(str(row.account_id))
        return record(Workspace, row._mapping)

    def _billing(self) -> WorkspaceBilling:
        if self.workspace_billing is None:
            raise RuntimeError("these use cases were built without payments")
        return self.workspace_billing

    @staticmethod
    def _billing_of(row: Any) -> pay.Billing:
        return pay.Billing(row.lifecycle_state, row.subscription_status, row.paused_by_billing, row.past_due_since,
                           row.trial_ends_at, row.paid_through)

    # -- usage and balance -------------------------------------------------------------------

    async def record_usage(self, entries: list[UsageRecord]) -> int:
        """Bulk-append with COPY: this runs for every API request, batched by the gateways (each entry with its
        key)."""
        if not entries:
            return 0
        records: list[tuple[Any, ...]] = []
        last_used: dict[str, datetime] = {}
        for e in entries:
            key_id = e.api_key_id or ""
            if not (is_uuid(e.account_id) and is_uuid(key_id)):
                raise invalid("usage entries need account_id and api_key_id")
            records.append((e.id if is_uuid(e.id) else new_id(), e.account_id,
                            e.business_id if is_uuid(e.business_id or "") else None, key_id,
                            e.endpoint[:500], e.method[:10], e.status_code, e.call_id, e.cost_cents, e.created_at))
            last_used[key_id] = max(e.created_at, last_used.get(key_id, e.created_at))
        await self.hot.append_usage(records, last_used)
        return len(records)

    async def list_usage(self, start: datetime | None, end: datetime | None, page: Page) -> Paged:
        who = tenant.require_account()
        if start and end and start >= end:
            raise invalid("start must be before end")
        async with self.uow.read() as work:
            return await work.accounts.usage_page(who.account_id, who.bound_business_id or None, start, end, page)

    async def balances(self) -> list[Balance]:
        """Each business of the caller (oldest first) with its call minutes, its phone numbers (the agents service
        holds them: asked while the database is read) and its subscription status."""
        business_ids = tenant.require_account().business_ids

        async def read() -> tuple[list[Any], dict[str, int]]:
            async with self.uow.read() as work:
                return (await work.accounts.subscriptions_of(list(business_ids)),
                        await work.accounts.minutes_used(list(business_ids)))
        (rows, minutes), held = await asyncio.gather(read(), self.agents.number_counts())
        return [Balance(str(r.id), minutes.get(str(r.id), 0), held.get(str(r.id), 0), r.subscription_status)
                for r in rows]

    async def record_call_usage(self, costs: list[CallCost]) -> int:
        """Calls' minutes and costs in their businesses' usage logs, once per call, in one transaction; returns how
        many were new (a call already there, or of a business that is gone, adds nothing)."""
        if not costs:
            return 0
        async with self.uow.transaction() as work:
            accounts = await work.accounts.accounts_of({c.business_id for c in costs})
            return await work.accounts.append_call_usage([dict(
                id=new_id(), account_id=accounts[c.business_id], business_id=c.business_id, call_id=c.call_id,
                minutes=domain.billed_minutes(c.duration_seconds), cost_cents=max(0, c.cost_cents), created_at=c.at)
                for c in costs if c.business_id in accounts])
