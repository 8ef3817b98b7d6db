"""The data export page of one business: start an export of all its data, follow each export's progress (records per
kind; the page reloads itself while one is under way, with no script) and download a completed one's archive through
its signed link. Every action is the RPC the `/api/v1/exports` routes make, as the signed-in owner."""
from __future__ import annotations

from typing import Any

from aiohttp import web

from contracts.exports import DOWNLOAD_PATH
from core.settings import Settings
from gateway.auth import Principal
from gateway.context import deps
from gateway.dashboard import pages
from gateway.dashboard.forms import Form, form_token, same_site_form
from gateway.dashboard.pages import EXPORTS_PATH, signed_in
from gateway.dashboard.templates import page, when
from switchboard.v1 import accounts_pb2, common_pb2

EXPORTS_SHOWN = 10
REFRESH_SECONDS = 5  # while an export is queued or running


def _export_row(e: accounts_pb2.Export) -> dict[str, Any]:
    return {"id": e.id, "status": e.status, "records": e.records, "bytes": e.bytes,
            "kinds": [{"kind": k.kind, "records": k.records, "done": k.done} for k in e.kinds],
            "done_kinds": sum(1 for k in e.kinds if k.done), "created": when(e.created_at),
            "completed": when(e.completed_at), "expires": when(e.expires_at),
            "error": e.error if e.HasField("error") else None,
            "download": f"{DOWNLOAD_PATH}?id={e.id}&{e.download_query}" if e.HasField("download_query") else None,
            "link_expires": when(e.download_expires_at), "sha256": e.sha256 if e.HasField("sha256") else None}


async def _render(request: web.Request, session: str, principal: Principal, business_id: str, *, status: int = 200,
                  notice: str | None = None, error: str | None = None) -> web.Response:
    businesses = await pages.businesses_of(request, principal)
    business_id = pages.chosen(business_id, businesses)
    accounts = deps(request).clients["accounts"].as_caller(principal.tenant)
    listed = await accounts.ListExports(accounts_pb2.ListExportsRequest(
        business_id=business_id, page=common_pb2.PageRequest(limit=EXPORTS_SHOWN))) if business_id else None
    exports = [_export_row(e) for e in listed.exports] if listed else []
    under_way = any(e["status"] in ("queued", "running") for e in exports)
    return page("exports.html", status, title="Data export", active="exports", form_token=form_token(session),
                businesses=businesses, business_id=business_id, exports=exports, notice=notice, error=error,
                refresh=REFRESH_SECONDS if under_way else None, **_lifetimes(deps(request).settings))


def _lifetimes(settings: Settings) -> dict[str, str]:
    """How long an archive is kept and a link works, in words (the settings' EXPORT_RETENTION_HOURS and
    EXPORT_LINK_SECONDS)."""
    hours, minutes = settings.export_retention_hours, settings.export_link_seconds / 60
    kept = f"{hours / 24:g} days" if hours >= 48 and hours % 24 == 0 else f"{hours:g} hours"
    return {"kept": kept, "link_valid": f"{minutes / 60:g} hours" if minutes >= 120 else f"{minutes:g} minutes"}


async def exports(request: web.Request) -> web.StreamResponse:
    session, principal = await signed_in(request)
    return await _render(request, session, principal, request.query.get("business_id", ""))


async def create(request: web.Request) -> web.StreamResponse:
    async def act(principal: Principal, form: Form) -> dict[str, Any]:
        accounts = deps(request).clients["accounts"].as_caller(principal.tenant)
        await accounts.CreateExport(accounts_pb2.CreateExportRequest(business_id=str(form.get("business_id", ""))))
        return {"notice": "Export started: this page shows its progress and offers the archive once it is ready."}
    return await pages.business_form(request, _render, "started", act)


def add_routes(app: web.Application) -> None:
    app.router.add_get(EXPORTS_PATH, exports)
    app.router.add_post(EXPORTS_PATH, same_site_form(create))
