"""workspaces' RPCs: a workspace (with its signup's provisioning), its owner, a page of them, their time zones,
and creating and changing one."""
from __future__ import annotations

from google.protobuf import json_format

from core import standing
from core.interceptors import Context
from core.messages import optional, set_timestamp, struct
from core.pagination import Page
from services.accounts import data_retention_rules as retention_rules
from services.accounts.records import Workspace, WorkspaceProvisioning
from services.accounts.workspaces.service import Workspaces
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc

WORKSPACES_PAGE = (50, 100)


def workspace_message(w: Workspace, provisioning: WorkspaceProvisioning | None = None) -> accounts_pb2.Workspace:
    """A workspace (and the signup's provisioning saga, when asked for)."""
    ws = accounts_pb2.Workspace(id=w.id, name=w.name, lifecycle_state=w.lifecycle_state,
                                metadata=struct(w.metadata), subscription_status=w.subscription_status,
                                timezone=w.timezone, standing=standing.standing(w.lifecycle_state, w.subscription_status),
                                plan_id=w.plan_id)
    if w.external_ref is not None:
        ws.external_ref = w.external_ref
    set_timestamp(ws, "created_at", w.created_at)
    set_timestamp(ws, "updated_at", w.updated_at)
    if w.paid_through is not None:
        set_timestamp(ws, "paid_through", w.paid_through)
    if w.trial_ends_at is not None:
        set_timestamp(ws, "trial_ends_at", w.trial_ends_at)
    ws.retention.CopyFrom(accounts_pb2.Retention(**retention_rules.effective(w.retention)))
    set_timestamp(ws, "data_deletion_due_at", w.data_deletion_due_at)
    set_timestamp(ws, "data_deleted_at", w.data_deleted_at)
    if provisioning is not None:
        p = provisioning
        ws.provisioning.CopyFrom(accounts_pb2.Provisioning(
            status=p.status, step=p.step, agent_id=p.agent_id,
            phone_number=p.phone_number, forward_to=p.forward_to, attempts=p.attempts, last_error=p.last_error))
        if p.status in ("pending", "retrying"):
            set_timestamp(ws.provisioning, "next_attempt_at", p.next_attempt_at)
    return ws


class WorkspacesServicer(accounts_pb2_grpc.AccountsServicer):
    def __init__(self, workspaces: Workspaces):
        self.workspaces = workspaces

    async def GetWorkspace(self, request: accounts_pb2.GetWorkspaceRequest, context: Context) -> accounts_pb2.Workspace:
        return workspace_message(*await self.workspaces.get_workspace(request.id))

    async def GetWorkspaceOwner(self, request: accounts_pb2.GetWorkspaceRequest, context: Context) -> accounts_pb2.WorkspaceOwner:
        owner = await self.workspaces.workspace_owner(request.id)
        return accounts_pb2.WorkspaceOwner(business_id=owner.id, business_name=owner.name,
                                           account_id=owner.account_id, email=owner.email,
                                           email_confirmed=owner.email_confirmed_at is not None,
                                           phone_forward_to=owner.phone_forward_to)

    async def ListWorkspaces(self, request: accounts_pb2.ListWorkspacesRequest, context: Context) -> accounts_pb2.ListWorkspacesReply:
        paged = await self.workspaces.list_workspaces(Page.of(request.page, *WORKSPACES_PAGE))
        return accounts_pb2.ListWorkspacesReply(workspaces=[workspace_message(r) for r in paged.rows],
                                                page=paged.info())

    async def CreateWorkspace(self, request: accounts_pb2.CreateWorkspaceRequest, context: Context) -> accounts_pb2.CreatedWorkspace:
        created = await self.workspaces.create_workspace(
            request.name, json_format.MessageToDict(request.metadata), optional(request, "external_ref"),
            optional(request, "timezone"), request.payment_signature)
        return accounts_pb2.CreatedWorkspace(workspace=workspace_message(created.workspace),
                                             payment_response=created.payment_response)

    async def UpdateWorkspace(self, request: accounts_pb2.UpdateWorkspaceRequest, context: Context) -> accounts_pb2.Workspace:
        metadata = json_format.MessageToDict(request.metadata) if request.HasField("metadata") else None
        retention = ({kind: getattr(request.retention, kind) for kind in retention_rules.KINDS
                      if request.retention.HasField(kind)} if request.HasField("retention") else None)
        return workspace_message(await self.workspaces.update_workspace(
            request.id, optional(request, "name"), metadata, optional(request, "action"), optional(request, "timezone"),
            retention))

    async def BusinessZones(self, request: accounts_pb2.BusinessZonesRequest, context: Context) -> accounts_pb2.BusinessZonesReply:
        return accounts_pb2.BusinessZonesReply(businesses=[
            accounts_pb2.ZonedBusiness(business_id=z.id, name=z.name, timezone=z.timezone)
            for z in await self.workspaces.business_zones()])
