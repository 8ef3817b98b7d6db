"""Who is calling: API keys (made, listed, changed, revoked, authenticated into a principal), dashboard sessions
(a sign-in link redeemed into one, authenticated, ended) and the invalidation that tells every gateway to forget an
account's cached principals. Secrets are stored hashed (services.accounts.secret_keys)."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts import accounts as accounts_contract
from core.bus import AUTH_INVALIDATE_SUBJECT, EventBus
from core.errors import ServiceError, invalid, not_found
from core.ids import new_id, require_uuid, utcnow
from core.scopes import DEFAULT_SCOPES
from core.settings import Settings
from core.uow import UnitOfWork
from services.accounts import domain, secret_keys
from services.accounts.records import ApiKeyRecord, SessionRecord
from services.accounts.repository import AccountsRepository, AccountsUnit, HotPath
from services.accounts.secret_keys import SecretKeys

log = logging.getLogger(__name__)

UNSET = object()  # "leave as it is" for KeyChanges fields whose None means something


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
class KeyChanges:
    """What an update asks for; UNSET leaves a field alone (None clears business_id and expires_at)."""

    name: str | None = None
    scopes: list[str] | None = None
    business_id: object = UNSET  # a business id, or "" / None for every business of the account
    expires_at: object = UNSET
    expire: bool = False
    revoke: bool = False


class Identity:
    def __init__(self, uow: UnitOfWork[AccountsUnit], hot: HotPath, bus: EventBus, settings: Settings):
        # The unit of work and the hot path's statements on the raw pool (services.accounts.repository).
        self.uow = uow
        self.hot = hot
        self.bus = bus
        self.keys = SecretKeys.of(settings)
        self.base_url = settings.public_base_url

    def hash(self, purpose: str, value: str) -> str:
        """How `value`, a secret of `purpose` (services.accounts.secret_keys), is stored now."""
        return self.keys.hash(purpose, value)

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
