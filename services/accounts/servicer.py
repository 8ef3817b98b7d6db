"""Accounts gRPC servicer: proto in, domain rules and store queries, proto out."""
from __future__ import annotations

import logging
import uuid
from datetime import datetime, timezone

import sqlalchemy as sa
from google.protobuf import json_format
from sqlalchemy.ext.asyncio import AsyncConnection

from core import plans, tenant
from core.bus import AUTH_INVALIDATE_SUBJECT
from core.db import Prepared
from core.errors import ServiceError, invalid, not_found
from core.grpc_server import Runtime
from core.ids import is_uuid, new_id, require_uuid, utcnow
from core.messages import optional, set_timestamp, struct
from core.outbox import add_event
from core.pagination import clamp_limit, opt_datetime, page_query, split_page
from core.scopes import DEFAULT_SCOPES
from services.accounts import domain
from services.accounts.store import (
    SCHEMA,
    api_keys,
    businesses,
    magic_links,
    outbox,
    sessions,
    signup_attempts,
    usage_log,
    users,
)
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc, common_pb2

log = logging.getLogger(__name__)

WORKSPACES_PAGE = (50, 100)
USAGE_PAGE = (100, 500)


def _workspace(row) -> accounts_pb2.Workspace:
    """From a row mapping (SQLAlchemy `row._mapping` or an asyncpg Record)."""
    ws = accounts_pb2.Workspace(id=str(row["id"]), name=row["name"], lifecycle_state=row["lifecycle_state"],
                                metadata=struct(row["metadata"]))
    if row["external_ref"] is not None:
        ws.external_ref = row["external_ref"]
    set_timestamp(ws, "created_at", row["created_at"])
    set_timestamp(ws, "updated_at", row["updated_at"])
    return ws


USAGE_COPY_COLUMNS = (usage_log.c.id, usage_log.c.account_id, usage_log.c.business_id, usage_log.c.api_key_id,
                      usage_log.c.endpoint, usage_log.c.method, usage_log.c.status_code, usage_log.c.call_id,
                      usage_log.c.cost_cents, usage_log.c.created_at)
TOUCH_KEYS_SQL = f"""
    UPDATE {SCHEMA}.api_keys AS k SET last_used_at = GREATEST(COALESCE(k.last_used_at, u.at), u.at)
    FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, at) WHERE k.id = u.id
"""
WORKSPACE_COLUMNS = (businesses.c.id, businesses.c.name, businesses.c.lifecycle_state, businesses.c.metadata,
                     businesses.c.external_ref, businesses.c.created_at, businesses.c.updated_at)
WORKSPACE_BY_ID = Prepared(sa.select(*WORKSPACE_COLUMNS).where(businesses.c.id == sa.bindparam("id")))


def _api_key(row, now: datetime) -> accounts_pb2.ApiKey:
    key = accounts_pb2.ApiKey(id=str(row.id), prefix=row.prefix, name=row.name, scopes=list(row.scopes),
                              is_active=domain.key_usable(row.revoked_at, row.expires_at, now))
    if row.business_id is not None:
        key.business_id = str(row.business_id)
    for field in ("created_at", "last_used_at", "expires_at"):
        set_timestamp(key, field, getattr(row, field))
    return key


class AccountsServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, runtime: Runtime):
        self.rt = runtime
        self.engine = runtime.engine
        self.secret = runtime.settings.secret_key.reveal()
        self.base_url = runtime.settings.public_base_url
        self.signup_limit = runtime.settings.signup_limit_per_hour
        self.checkout_prices = runtime.settings.checkout_prices

    # -- helpers -----------------------------------------------------------------

    def _hash(self, value: str) -> str:
        return domain.keyed_hash(self.secret, value)

    async def _invalidate(self, account_id: str) -> None:
        """Tell every gateway to forget cached principals of this account (best effort; see gateway.auth)."""
        nc = self.rt.bus.nc
        if nc is None or not nc.is_connected:
            return
        try:
            await nc.publish(AUTH_INVALIDATE_SUBJECT, account_id.encode())
            await nc.flush(timeout=1)
        except Exception as exc:  # noqa: BLE001 - the gateways' TTL bounds staleness
            log.warning("could not publish auth invalidation: %s", exc)

    async def _session_account(self, conn: AsyncConnection, token: str) -> str:
        if not token:
            raise ServiceError("unauthorized", "key management needs a dashboard session: open your magic link first")
        row = (await conn.execute(sa.select(sessions.c.account_id, sessions.c.expires_at)
                                  .where(sessions.c.token_hash == self._hash(token)))).first()
        if row is None or row.expires_at <= utcnow():
            raise ServiceError("unauthorized", "dashboard session is invalid or expired; sign in again with a magic link")
        return str(row.account_id)

    async def _account_business(self, conn: AsyncConnection, account_id: str, business_id: str) -> str:
        require_uuid(business_id, "business_id")
        found = await conn.scalar(sa.select(businesses.c.id).where(businesses.c.id == business_id,
                                                                    businesses.c.account_id == account_id))
        if found is None:
            raise ServiceError("forbidden", "business_id is not one of your businesses")
        return business_id

    # -- signup ------------------------------------------------------------------

    async def _count_signup_attempt(self, client_ip: str, now: datetime) -> None:
        """Record a signup attempt from this address, or refuse it past the hourly limit."""
        recent = signup_attempts.c.created_at > now - domain.SIGNUP_WINDOW
        same_ip = signup_attempts.c.client_ip == client_ip
        async with self.engine.begin() as conn:
            # Serialise attempts per address so the limit holds under concurrency.
            await conn.execute(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext(client_ip))))
            await conn.execute(signup_attempts.delete().where(same_ip, ~recent))  # keep the table small
            count, oldest = (await conn.execute(sa.select(sa.func.count(), sa.func.min(signup_attempts.c.created_at))
                                                .where(same_ip, recent))).one()
            if not domain.signup_allowed(count, self.signup_limit):
                wait = domain.signup_retry_after(oldest, now)
                raise ServiceError("rate_limited", f"at most {self.signup_limit} signups per hour from one address; "
                                   f"try again in {wait} seconds", retry_after=wait)
            await conn.execute(signup_attempts.insert().values(client_ip=client_ip, created_at=now))

    async def Signup(self, request, context):
        form = domain.validate_signup(request.business_name, request.email, request.business_type, request.website,
                                      request.phone_forward_to, request.plan_id, self.checkout_prices)
        now = utcnow()
        account_id, business_id, key_id = new_id(), new_id(), new_id()
        api_key, prefix = domain.new_api_key()
        magic = domain.new_secret_token()
        trial_ends_at = now + domain.trial_length()
        await self._count_signup_attempt(request.client_ip or "-", now)
        async with self.engine.begin() as conn:
            taken = await conn.scalar(sa.select(users.c.id).where(users.c.email == form.email))
            if taken is not None:
                raise ServiceError("email_exists", "an account with this email already exists; sign in instead")
            try:
                await conn.execute(users.insert().values(id=account_id, email=form.email, email_confirmed_at=now, created_at=now))
            except sa.exc.IntegrityError:
                raise ServiceError("email_exists", "an account with this email already exists; sign in instead") from None
            await conn.execute(businesses.insert().values(
                id=business_id, account_id=account_id, name=form.business_name, lifecycle_state="active", metadata={},
                business_type=form.business_type, website=form.website, phone_forward_to=form.phone_forward_to,
                plan_id=form.plan_id, subscription_status="trialing", trial_ends_at=trial_ends_at,
                created_at=now, updated_at=now))
            await conn.execute(api_keys.insert().values(
                id=key_id, account_id=account_id, name="Signup Key", prefix=prefix, key_hash=self._hash(api_key),
                scopes=list(DEFAULT_SCOPES), created_at=now))
            await conn.execute(magic_links.insert().values(
                token_hash=self._hash(magic), account_id=account_id, expires_at=now + domain.MAGIC_LINK_TTL))
        reply = accounts_pb2.SignupReply(
            api_key=api_key, business_id=business_id, dashboard_url=f"{self.base_url}/dashboard",
            provisioning_deferred=True, payment_capture=domain.HOSTED_CHECKOUT,
            dashboard_magic_link=f"{self.base_url}/dashboard/login?token={magic}")
        set_timestamp(reply, "trial_ends_at", trial_ends_at)
        return reply

    # -- keys and sessions -------------------------------------------------------

    async def AuthenticateKey(self, request, context):
        if not request.key.startswith(domain.KEY_PREFIX):
            raise ServiceError("unauthorized", "API key must start with svc_live_")
        now = utcnow()
        async with self.engine.connect() as conn:
            row = (await conn.execute(sa.select(api_keys).where(api_keys.c.key_hash == self._hash(request.key)))).first()
            if row is None or not domain.key_usable(row.revoked_at, row.expires_at, now):
                raise ServiceError("unauthorized", "API key is invalid, expired or revoked")
            if row.business_id is not None:
                business_ids = [str(row.business_id)]
            else:
                business_ids = [str(b) for b in (await conn.scalars(
                    sa.select(businesses.c.id).where(businesses.c.account_id == row.account_id))).all()]
        principal = accounts_pb2.KeyPrincipal(key_id=str(row.id), account_id=str(row.account_id),
                                              business_ids=business_ids, scopes=list(row.scopes))
        if row.business_id is not None:
            principal.business_id = str(row.business_id)
        set_timestamp(principal, "expires_at", row.expires_at)
        return principal

    async def RedeemMagicLink(self, request, context):
        now = utcnow()
        async with self.engine.begin() as conn:
            row = (await conn.execute(
                magic_links.update()
                .where(magic_links.c.token_hash == self._hash(request.token), magic_links.c.used_at.is_(None),
                       magic_links.c.expires_at > now)
                .values(used_at=now).returning(magic_links.c.account_id))).first()
            if row is None:
                raise ServiceError("unauthorized", "this sign-in link is invalid, expired or already used")
            token = domain.new_secret_token()
            expires_at = now + domain.SESSION_TTL
            await conn.execute(sessions.insert().values(token_hash=self._hash(token), account_id=row.account_id,
                                                        created_at=now, expires_at=expires_at))
        reply = accounts_pb2.DashboardSession(session_token=token, account_id=str(row.account_id))
        set_timestamp(reply, "expires_at", expires_at)
        return reply

    async def ListKeys(self, request, context):
        now = utcnow()
        async with self.engine.connect() as conn:
            account_id = await self._session_account(conn, request.session_token)
            rows = (await conn.execute(sa.select(api_keys).where(api_keys.c.account_id == account_id)
                                       .order_by(api_keys.c.created_at.desc()))).all()
        return accounts_pb2.ListKeysReply(keys=[_api_key(r, now) for r in rows])

    async def CreateKey(self, request, context):
        now = utcnow()
        name = request.name.strip() if request.HasField("name") else ""
        if len(name) > 100:
            raise invalid("name must be at most 100 characters")
        scopes = domain.check_scopes(list(request.scopes)) if request.scopes_given else list(DEFAULT_SCOPES)
        expires_at = opt_datetime(request, "expires_at")
        if expires_at is not None and expires_at <= now:
            raise invalid("expires_at must be in the future")
        key, prefix = domain.new_api_key()
        async with self.engine.begin() as conn:
            account_id = await self._session_account(conn, request.session_token)
            business_id = None
            if request.HasField("business_id") and request.business_id:
                business_id = await self._account_business(conn, account_id, request.business_id)
            row = (await conn.execute(api_keys.insert().values(
                id=new_id(), account_id=account_id, business_id=business_id, name=name or domain.DEFAULT_KEY_NAME,
                prefix=prefix, key_hash=self._hash(key), scopes=scopes, created_at=now, expires_at=expires_at,
            ).returning(api_keys))).first()
        reply = _api_key(row, now)
        reply.key = key
        return reply

    async def UpdateKey(self, request, context):
        require_uuid(request.id, "id")
        now = utcnow()
        values: dict = {}
        if request.HasField("name"):
            if not request.name.strip() or len(request.name) > 100:
                raise invalid("name must be 1 to 100 characters")
            values["name"] = request.name.strip()
        if request.scopes_given:
            values["scopes"] = domain.check_scopes(list(request.scopes))
        if request.clear_expires_at:
            values["expires_at"] = None
        if request.HasField("expires_at"):
            values["expires_at"] = opt_datetime(request, "expires_at")
        if request.expire:
            values["expires_at"] = now
        if request.revoke:
            values["revoked_at"] = sa.func.coalesce(api_keys.c.revoked_at, now)  # first revocation time stays
        async with self.engine.begin() as conn:
            account_id = await self._session_account(conn, request.session_token)
            if request.HasField("business_id"):
                values["business_id"] = (await self._account_business(conn, account_id, request.business_id)
                                         if request.business_id else None)
            query = api_keys.update().where(api_keys.c.id == request.id, api_keys.c.account_id == account_id)
            if values:
                row = (await conn.execute(query.values(**values).returning(api_keys))).first()
            else:
                row = (await conn.execute(sa.select(api_keys).where(api_keys.c.id == request.id,
                                                                     api_keys.c.account_id == account_id))).first()
            if row is None:
                raise not_found("API key")
        if values:
            await self._invalidate(account_id)
        return _api_key(row, now)

    async def RevokeKey(self, request, context):
        require_uuid(request.id, "id")
        async with self.engine.begin() as conn:
            account_id = await self._session_account(conn, request.session_token)
            row = (await conn.execute(
                api_keys.update().where(api_keys.c.id == request.id, api_keys.c.account_id == account_id)
                .values(revoked_at=sa.func.coalesce(api_keys.c.revoked_at, utcnow())).returning(api_keys.c.id))).first()
            if row is None:
                raise not_found("API key")
        await self._invalidate(account_id)
        return accounts_pb2.RevokeKeyReply(success=True)

    # -- workspaces --------------------------------------------------------------

    async def ListWorkspaces(self, request, context):
        who = tenant.require_account()
        if request.HasField("id"):
            require_uuid(request.id, "id")
            if not who.can_access(request.id):
                raise not_found("workspace")
            row = await WORKSPACE_BY_ID.fetchrow(self.rt.pool, id=request.id)
            if row is None:
                raise not_found("workspace")
            return accounts_pb2.ListWorkspacesReply(workspaces=[_workspace(row)], page=common_pb2.PageInfo(has_more=False))
        limit = clamp_limit(request.page.limit, *WORKSPACES_PAGE)
        query = sa.select(businesses).where(businesses.c.id.in_(who.business_ids))
        query = page_query(query, businesses.c.created_at, businesses.c.id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.created_at, r.id))
        return accounts_pb2.ListWorkspacesReply(workspaces=[_workspace(r._mapping) for r in rows],
                                                page=page)

    async def CreateWorkspace(self, request, context):
        who = tenant.require_account()
        if who.bound_business_id:
            raise ServiceError("forbidden", "this key is limited to one business and cannot create workspaces")
        name = request.name.strip()
        if not name or len(name) > 200:
            raise invalid("name is required (1 to 200 characters)")
        now = utcnow()
        async with self.engine.begin() as conn:
            row = (await conn.execute(businesses.insert().values(
                id=new_id(), account_id=who.account_id, name=name, lifecycle_state="active",
                metadata=json_format.MessageToDict(request.metadata), plan_id=plans.DEFAULT_PLAN,
                external_ref=optional(request, "external_ref"),
                subscription_status="trialing", trial_ends_at=now + domain.trial_length(), created_at=now, updated_at=now,
            ).returning(businesses))).first()
        await self._invalidate(who.account_id)
        return _workspace(row._mapping)

    async def UpdateWorkspace(self, request, context):
        who = tenant.require_account()
        require_uuid(request.id, "id")
        if not who.can_access(request.id):
            raise not_found("workspace")
        events = 0
        async with self.engine.begin() as conn:
            row = (await conn.execute(sa.select(businesses).where(businesses.c.id == request.id).with_for_update())).first()
            if row is None:
                raise not_found("workspace")
            values: dict = {}
            if request.HasField("name"):
                if not request.name.strip() or len(request.name) > 200:
                    raise invalid("name must be 1 to 200 characters")
                values["name"] = request.name.strip()
            if request.HasField("metadata"):
                values["metadata"] = {**row.metadata, **json_format.MessageToDict(request.metadata)}
            if request.HasField("action"):
                state, changed = domain.next_lifecycle_state(row.lifecycle_state, request.action)
                if changed:
                    values["lifecycle_state"] = state
                    event = domain.ACTION_EVENTS.get(request.action)
                    if event:
                        await add_event(conn, outbox, event(business_id=str(row.id), previous_state=row.lifecycle_state,
                                                            lifecycle_state=state), str(row.id))
                        events += 1
            if values:
                values["updated_at"] = utcnow()
                row = (await conn.execute(businesses.update().where(businesses.c.id == row.id)
                                          .values(**values).returning(businesses))).first()
        if events:
            self.rt.events_committed()
        return _workspace(row._mapping)

    # -- usage and balance -------------------------------------------------------

    async def RecordUsage(self, request, context):
        """Bulk-append with COPY: this runs for every API request, batched by the gateways."""
        if not request.entries:
            return accounts_pb2.RecordUsageReply(recorded=0)
        rows, last_used = [], {}
        for e in request.entries:
            if not (is_uuid(e.account_id) and is_uuid(e.api_key_id)):
                raise invalid("usage entries need account_id and api_key_id")
            created = e.created_at.ToDatetime(tzinfo=timezone.utc)
            rows.append((uuid.UUID(e.id) if is_uuid(e.id) else uuid.uuid4(), uuid.UUID(e.account_id),
                         uuid.UUID(e.business_id) if e.HasField("business_id") and is_uuid(e.business_id) else None,
                         uuid.UUID(e.api_key_id), e.endpoint[:500], e.method[:10], e.status_code,
                         optional(e, "call_id"), e.cost_cents, created))
            last_used[e.api_key_id] = max(created, last_used.get(e.api_key_id, created))
        async with self.rt.pool.acquire() as conn, conn.transaction():
            await conn.copy_records_to_table(usage_log.name, schema_name=SCHEMA, records=rows,
                                             columns=[c.name for c in USAGE_COPY_COLUMNS])
            await conn.execute(TOUCH_KEYS_SQL, [uuid.UUID(k) for k in last_used], list(last_used.values()))
        return accounts_pb2.RecordUsageReply(recorded=len(rows))

    async def ListUsage(self, request, context):
        who = tenant.require_account()
        limit = clamp_limit(request.page.limit, *USAGE_PAGE)
        start, end = opt_datetime(request, "start"), opt_datetime(request, "end")
        if start and end and start >= end:
            raise invalid("start must be before end")
        query = sa.select(usage_log).where(usage_log.c.account_id == who.account_id)
        if who.bound_business_id:
            query = query.where(usage_log.c.business_id == who.bound_business_id)
        if start:
            query = query.where(usage_log.c.created_at >= start)
        if end:
            query = query.where(usage_log.c.created_at < end)
        query = page_query(query, usage_log.c.created_at, usage_log.c.id, request.page, limit)
        async with self.engine.connect() as conn:
            rows, page = split_page((await conn.execute(query)).all(), limit, lambda r: (r.created_at, r.id))
        entries = []
        for r in rows:
            e = accounts_pb2.UsageEntry(id=str(r.id), endpoint=r.endpoint, method=r.method, status_code=r.status_code,
                                        cost_cents=r.cost_cents, api_key_id=str(r.api_key_id), account_id=str(r.account_id))
            if r.call_id is not None:
                e.call_id = r.call_id
            if r.business_id is not None:
                e.business_id = str(r.business_id)
            set_timestamp(e, "created_at", r.created_at)
            entries.append(e)
        return accounts_pb2.ListUsageReply(usage=entries, page=page)

    async def GetBalance(self, request, context):
        who = tenant.require_account()
        async with self.engine.connect() as conn:
            rows = (await conn.execute(sa.select(businesses.c.id, businesses.c.subscription_status)
                                       .where(businesses.c.id.in_(who.business_ids))
                                       .order_by(businesses.c.created_at))).all()
        # Minutes and numbers are owned by the calls and agents services: the gateway fills in the number
        # count from agents; minutes stay zero until calls land.
        return accounts_pb2.GetBalanceReply(businesses=[
            accounts_pb2.BalanceEntry(business_id=str(r.id), minutes_used=0, phone_numbers=0,
                                      subscription_status=r.subscription_status) for r in rows])


def build(runtime: Runtime) -> AccountsServicer:
    return AccountsServicer(runtime)
