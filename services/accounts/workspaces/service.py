"""The workspaces of an account: read (one, its owner, a page, their time zones), created (paid as the account pays:
billing's WorkspacePurchases) and changed (renamed, metadata merged, time zone, lifecycle moves)."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from contracts import accounts as accounts_contract
from core import tenant
from core.errors import ServiceError, not_found
from core.ids import require_uuid, utcnow
from core.pagination import Page, Paged
from core.records import record
from core.uow import UnitOfWork
from services.accounts import data_retention_rules as retention_rules
from services.accounts import domain, lifecycle
from services.accounts.ports import Invalidation, NewWorkspace, WorkspacePurchases
from services.accounts.records import Business, Workspace, WorkspaceOwner, WorkspaceProvisioning, Zone
from services.accounts.repository import AccountsUnit, HotPath


@dataclass(frozen=True)
class CreatedWorkspace:
    workspace: Workspace
    payment_response: str = ""  # x402: the settlement (the PAYMENT-RESPONSE header)


def workspace_of(business: Business) -> Workspace:
    """The workspace its owner reads of a business."""
    return record(Workspace, vars(business))


class Workspaces:
    def __init__(self, uow: UnitOfWork[AccountsUnit], hot: HotPath, purchases: WorkspacePurchases,
                 identity: Invalidation, teardown_grace: timedelta):
        self.uow = uow
        self.hot = hot
        self.purchases = purchases
        self.identity = identity
        self.teardown_grace = teardown_grace  # TEARDOWN_GRACE_DAYS: a teardown's data is deleted this long after

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
        (services.accounts.billing.workspace_billing): within its plan's limit, with no trial of its own."""
        who = tenant.require_account()
        if who.bound_business_id:
            raise ServiceError("forbidden", "this key is limited to one business and cannot create workspaces")
        form = NewWorkspace(domain.check_workspace_name(name, creating=True), metadata, external_ref,
                            domain.check_timezone(timezone) if timezone is not None else accounts_contract.DEFAULT_TIMEZONE)
        try:
            created = await self.purchases.create(who.account_id, form, payment_signature)
        except ServiceError as exc:
            if exc.code == "provider_error":  # the workspace may be kept, unpaid, until the provider answers
                await self.identity.invalidate(who.account_id)
            raise
        await self.identity.invalidate(who.account_id)
        return CreatedWorkspace(workspace_of(created.business), created.payment_response)

    async def update_workspace(self, business_id: str, name: str | None, metadata: dict[str, Any] | None, action: str | None,
                               timezone: str | None = None, retention: dict[str, int] | None = None) -> Workspace:
        """Rename, merge metadata into, set the retention of (the kinds named; data_retention_rules), or move the
        lifecycle of a workspace (emitting the action's event). A retention changed makes its retention job due at
        once: a shorter one applies within a round of the job."""
        require_uuid(business_id, "id")
        if not tenant.require_account().can_access(business_id):
            raise not_found("workspace")
        moved = False
        async with self.uow.transaction() as work:
            row = await work.accounts.lock_business(business_id)
            if row is None:
                raise not_found("workspace")
            values: dict[str, Any] = {}
            if name is not None:
                values["name"] = domain.check_workspace_name(name, creating=False)
            if metadata is not None:
                values["metadata"] = {**row.metadata, **metadata}
            if timezone is not None:
                values["timezone"] = domain.check_timezone(timezone)
            if retention:
                values["retention"] = retention_rules.changed(row.retention, retention)
                values["retention_next_at"] = utcnow()
            if action is not None:
                if action == "resume" and (why := self.purchases.resume_refusal(row)):
                    raise ServiceError("forbidden", why)
                if action == "resume":
                    values["paused_by_billing"] = False
                if action == "teardown" and domain.TRANSITIONS.get((row.lifecycle_state, action)) is not None:
                    values.update(domain.data_deletion_due(utcnow(), self.teardown_grace))
                row, moved = await lifecycle.move(work, row, action, values=values)
            elif values:
                changed = await work.accounts.change_business(row.id, {**values, "updated_at": utcnow()})
                assert changed is not None  # held for update above
                row = changed
        if moved and action == "teardown" and row.billed_on is not None:
            await self.purchases.torn_down(str(row.account_id), str(row.id))
        if moved:
            # The owner's own move takes effect on their next request (the standing consumer's
            # invalidation follows moments later, for every change of standing).
            await self.identity.invalidate(str(row.account_id))
        return workspace_of(row)
