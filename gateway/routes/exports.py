"""Privacy: the export of a business's data, as a tracked job, and its archive through a signed link
(services.accounts.privacy exports)."""
from __future__ import annotations

import asyncio
from urllib.parse import quote

from aiohttp import web

from contracts.exports import DOWNLOAD_PATH
from contracts.exports import KINDS as EXPORT_KINDS
from core import deadlines
from core.rpc import AsCaller, Client
from core.text import IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_PATTERN
from gateway.convert import to_json
from gateway.dashboard.session_cookie import session_token
from gateway.route import PUBLIC, Reply, RequestContext, Route
from gateway.routes.calls import IDEMPOTENCY_HEADER
from gateway.routes.params import page_query, set_fields
from gateway.schemas import BUSINESS, EXPORT_CREATE, UUID
from switchboard.v1 import accounts_pb2

ACCOUNTS = "switchboard.v1.Accounts"
V1 = "/api/v1/exports"
DOWNLOAD = DOWNLOAD_PATH
READ, WRITE = "privacy:read", "privacy:write"
ERRORS = ("unauthorized", "forbidden", "bad_request")
# The archive's first part is served within this; then it streams at the listener's pace, each part read with its
# own deadline.
DOWNLOAD_START_SECONDS = 15.0
KINDS = ", ".join(f"{kind.name} ({kind.service})" for kind in EXPORT_KINDS)
JOB = ("The export runs as a job in the background, claimed under a lease by one replica of the accounts service at "
       "a time: it writes every kind of the business's records, in this order (each with the service holding it): "
       f"{KINDS}, a page at a time, each page a file <kind>/<NNNNNN>.jsonl of the archive (one JSON document a line, "
       "as the API shows the record; no secrets: webhook subscriptions without their signing secrets), and lastly "
       "manifest.json (format, version, the business, the records and files of each kind). A job taken over after "
       "a crash resumes at the page after the last one stored. status: queued (waiting for its next attempt: after "
       "a page failed, error says why; the wait doubles from EXPORT_RETRY_SECONDS up to an hour), running (kinds "
       "shows each kind's records so far and whether it is done; records and bytes the totals), completed "
       "(completed_at; sha256 is the archive's; download_url a signed link valid until download_expires_at; "
       "expires_at when the archive is deleted, EXPORT_RETENTION_HOURS after completion, 168 by default), failed "
       "(given up after EXPORT_MAX_ATTEMPTS attempts: start a new export) or expired (the archive was deleted).")


def _export(ctx: RequestContext, reply: accounts_pb2.Export) -> dict[str, object]:
    body = to_json(reply)
    query = body.pop("download_query", None)
    body["download_url"] = (f"{ctx.deps.settings.public_base_url}{DOWNLOAD}?id={quote(reply.id)}&{query}"
                            if query else None)
    return body


async def create(ctx: RequestContext) -> Reply:
    req = set_fields(accounts_pb2.CreateExportRequest(), ctx.body, "business_id")
    if IDEMPOTENCY_HEADER in ctx.request.headers:
        req.idempotency_key = ctx.request.headers[IDEMPOTENCY_HEADER]
    return _export(ctx, await ctx.rpc("accounts").CreateExport(req))


async def get_export(ctx: RequestContext) -> Reply:
    return _export(ctx, await ctx.rpc("accounts").GetExport(accounts_pb2.GetExportRequest(id=ctx.query["id"])))


async def list_exports(ctx: RequestContext) -> Reply:
    req = set_fields(accounts_pb2.ListExportsRequest(page=ctx.page_request()), ctx.query, "business_id")
    reply = await ctx.rpc("accounts").ListExports(req)
    return ctx.listing("exports", [_export(ctx, e) for e in reply.exports], reply.page)


async def _caller(ctx: RequestContext) -> Client | AsCaller:
    """The accounts client as whoever came with a key or a dashboard session (they find only their businesses'
    exports), or as nobody: the link alone is the credential."""
    d, request = ctx.deps, ctx.request
    client = d.clients["accounts"]
    if header := request.headers.get("Authorization"):
        return client.as_caller((await d.auth.authenticate(header)).tenant)
    if token := session_token(request, d.settings):
        return client.as_caller((await d.auth.authenticate_session(token)).tenant)
    return client


async def _read_detached(accounts: Client | AsCaller, request: accounts_pb2.ReadExportPartRequest
                         ) -> accounts_pb2.ExportPart:
    """The part read with its RPC's own deadline, not what is left of the route's."""
    async def run() -> accounts_pb2.ExportPart:
        part: accounts_pb2.ExportPart = await accounts.ReadExportPart(request)
        return part
    return await asyncio.create_task(run(), context=deadlines.detached())


async def download(ctx: RequestContext) -> Reply:
    """The archive, streamed a part at a time (never whole in memory here or in the accounts service)."""
    q = ctx.query
    accounts = await _caller(ctx)

    def part(n: int) -> accounts_pb2.ReadExportPartRequest:
        return accounts_pb2.ReadExportPartRequest(id=q["id"], expires=q["expires"], signature=q["signature"], part=n)

    first = await accounts.ReadExportPart(part(0))
    response = web.StreamResponse(headers={
        "Content-Type": "application/gzip", "Content-Length": str(first.bytes), "X-Content-Type-Options": "nosniff",
        "Content-Disposition": f'attachment; filename="{first.filename}"', "Cache-Control": "private, no-store"})
    await response.prepare(ctx.request)
    try:
        await response.write(first.data)
        for n in range(1, first.parts):
            # Each part with its RPC's own deadline: a large archive streams for longer than the route's limit.
            await response.write((await _read_detached(accounts, part(n))).data)
    except Exception:  # noqa: BLE001 - a part refused or lost, the listener gone: the headers are out, so no error
        # document can follow; the connection closes short of Content-Length and the client knows it is incomplete.
        response.force_close()
    return response


ROUTES = [
    Route("POST", V1, create, "Export a business's data (a job)", "privacy", scope=WRITE, body=EXPORT_CREATE,
          response="Export", status=202, errors=(*ERRORS, "invalid_request", "conflict"),
          rpcs=(f"{ACCOUNTS}/CreateExport",),
          headers={IDEMPOTENCY_HEADER: {
              "type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX, "pattern": IDEMPOTENCY_KEY_PATTERN,
              "description": "a unique value per request (e.g. a UUID): the same key of the business answers the "
              "export it made (202, as it stands now) instead of starting another"}},
          description="The body may be empty: business_id may be left out when the key reaches one business; a "
          "business not the key's is 403 forbidden, and a key spanning several without business_id is 400 "
          "bad_request. Answers 202 with the export, queued and started at once; poll GET /api/v1/exports?id= "
          "until it is completed, then fetch download_url. One export of a business runs at a time: while one is "
          "queued or running, a request answers that one (202, as it stands now). " + JOB),
    Route("GET", V1, list_exports, "List exports newest first, or read one with ?id=", "privacy", scope=READ,
          query=page_query(50, 100, id=UUID, business_id=BUSINESS), response=("ExportList", "Export"),
          read_one=get_export, errors=(*ERRORS, "not_found"),
          rpcs=(f"{ACCOUNTS}/ListExports", f"{ACCOUNTS}/GetExport"),
          description="Across the key's businesses (or the one business_id names). With ?id=: the export itself "
          "(schema Export) with a freshly signed download_url once completed; another business's is 404 "
          "not_found. " + JOB),
    Route("GET", DOWNLOAD, download, "An export's archive (a signed link)", "privacy", auth=PUBLIC,
          media="application/gzip", query={"type": "object", "properties": {
              "id": UUID, "expires": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1,
                                      "description": "Unix seconds"},
              "signature": {"type": "string", "pattern": "^v[0-9]{1,9}[.][0-9a-f]{64}$"}},
              "required": ["id", "expires", "signature"]},
          errors=("unauthorized", "forbidden", "not_found", "bad_request"),
          rpcs=(f"{ACCOUNTS}/ReadExportPart",), time_limit_seconds=DOWNLOAD_START_SECONDS,
          description="The download_url GET /api/v1/exports?id= answers: the link is the credential, like a "
          "presigned URL, so a browser or curl fetches it without a key; it stops working at its "
          "download_expires_at (EXPORT_LINK_SECONDS after it was made, an hour by default, and never after the "
          "archive's expires_at). Answers the .tar.gz (Content-Type application/gzip, Content-Disposition "
          "attachment with its file name, Content-Length its size), streamed part by part; its SHA-256 is the "
          "export's sha256. An expired link is 403 forbidden (read the export again for a new one); a changed "
          "link, an unknown export and an expired archive are 404 not_found. A request that also carries an API key "
          "or a dashboard session is served only an export of that caller's businesses (another business's is 404 "
          "not_found, as for any of its resources); an invalid key is 401."),
]
