"""POST and GET /api/v1/exports and the archive's signed link through the gateway of the real stack: the 202 and its
body, the Idempotency-Key's replay, tenancy (another business's key on the read, the list and the download), scopes,
and the download itself: streamed with its headers, refused when its link expired (403) or was changed (404).

The job itself is tests/service/test_export_jobs.py; a whole export of a seeded business across the services is
tests/e2e/test_export.py. Until every service answers ExportPage, a job made here waits queued for its retry: the
download is checked on an export completed in the database (its parts made by the job's own rules)."""
import hashlib
import io
import json
import tarfile
import time
import uuid

import pytest
from yarl import URL

from contracts.exports import DOWNLOAD_PATH
from core import settings
from services.accounts.privacy import export_domain as rules
from services.accounts.secret_keys import EXPORT_LINK, SecretKeys
from tests.api import new_account
from tests.exports import completed_export
from tests.waiting import wait_until

PATH = "/api/v1/exports"
FIELDS = {"id", "business_id", "status", "kinds", "records", "bytes", "created_at", "completed_at", "expires_at",
          "error", "download_url", "download_expires_at", "sha256"}


@pytest.fixture
async def second_account(api):
    made = await new_account(api)
    yield made
    await made["dashboard"].close()


@pytest.fixture
def keys(stack, monkeypatch) -> SecretKeys:
    """The server secret's keys the stack's accounts service signs links with."""
    for name, value in stack.env().items():
        monkeypatch.setenv(name, value)
    return SecretKeys.of(settings.load())


async def fetch(api, url: str, key: str | None = None):
    """GET a link as a browser or curl would: the status, the body's bytes and the headers."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with api.session.get(URL(url, encoded=True), headers=headers, allow_redirects=False) as r:
        return r.status, await r.read(), r.headers


async def test_an_export_is_accepted_as_a_job_with_every_kind_and_an_idempotency_key_replays_it(api, account):
    key = {"Idempotency-Key": str(uuid.uuid4())}
    status, body, _ = await api.request("POST", PATH, key=account["key"], json={}, headers=key)
    assert status == 202, body
    assert set(body) == FIELDS and body["business_id"] == account["business_id"]
    assert body["status"] in ("queued", "running") and body["download_url"] is None
    assert [k["kind"] for k in body["kinds"]] == [kind.name for kind in rules.KINDS]
    status, replayed, _ = await api.request("POST", PATH, key=account["key"], json={}, headers=key)
    assert status == 202 and replayed["id"] == body["id"], replayed
    # One export of a business at a time: while the first is under way, a request answers it (when it is over
    # already, the request starts another).
    status, under_way, _ = await api.request("POST", PATH, key=account["key"])  # no body at all
    assert status == 202 and (under_way["id"] == body["id"] or under_way["status"] == "queued"), under_way
    await wait_until(lambda: api.request("GET", PATH, key=account["key"], params={"id": under_way["id"]}),
                     "the export to be over", lambda r: r[1]["status"] in ("completed", "failed"), timeout=60)
    status, other, _ = await api.request("POST", PATH, key=account["key"])
    assert status == 202 and other["id"] not in (body["id"], under_way["id"]), other
    status, read, _ = await api.request("GET", PATH, key=account["key"], params={"id": body["id"]})
    assert status == 200 and read["id"] == body["id"] and set(read) == FIELDS, read
    status, page, _ = await api.request("GET", PATH, key=account["key"], params={"limit": "1"})
    assert status == 200 and page["exports"][0]["id"] == other["id"] and page["has_more"], page
    status, bad, _ = await api.request("POST", PATH, key=account["key"], headers={"Idempotency-Key": "k" * 300})
    assert status == 400, bad


async def test_the_download_link_streams_the_archive_without_a_key(api, account, db):
    export_id, archive = await completed_export(db, account["business_id"])
    status, body, _ = await api.request("GET", PATH, key=account["key"], params={"id": export_id})
    assert status == 200 and body["status"] == "completed", body
    assert body["download_url"].startswith(f"{api.base}{DOWNLOAD_PATH}?id={export_id}&expires=")
    assert body["sha256"] == hashlib.sha256(archive).hexdigest() and body["bytes"] == len(archive)
    status, data, headers = await fetch(api, body["download_url"])
    assert status == 200 and data == archive
    assert headers["Content-Type"] == "application/gzip" and int(headers["Content-Length"]) == len(archive)
    assert headers["Content-Disposition"].startswith('attachment; filename="switchboard-export-')
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        assert tar.getnames() == ["workspace/000001.jsonl", "calls/000001.jsonl", "manifest.json"]
    status, data, _ = await fetch(api, body["download_url"], key=account["key"])  # its own key: served too
    assert status == 200 and data == archive
    status, again, _ = await api.request("GET", PATH, key=account["key"], params={"id": export_id})
    assert again["download_url"] and again["download_expires_at"], again  # signed afresh on each read


async def test_a_changed_or_expired_link_is_refused_and_says_what_to_do(api, account, db, keys):
    export_id, _ = await completed_export(db, account["business_id"])
    _, body, _ = await api.request("GET", PATH, key=account["key"], params={"id": export_id})
    url = URL(body["download_url"])
    signature, expires = url.query["signature"], int(url.query["expires"])
    changed = signature[:-1] + ("0" if signature[-1] != "0" else "1")
    for query in ({"signature": changed}, {"expires": str(expires + 60)}, {"id": str(uuid.uuid4())}):
        status, data, _ = await fetch(api, str(url.update_query(query)))
        assert status == 404 and json.loads(data)["error"]["code"] == "not_found", (query, data)
    status, data, _ = await fetch(api, str(url.update_query({"signature": "not-a-signature"})))
    assert status == 400, data
    past = int(time.time()) - 1
    kid, key = keys.signing_key(EXPORT_LINK)
    expired = url.update_query({"expires": str(past), "signature": rules.link_signature(kid, key, export_id, past)})
    status, data, _ = await fetch(api, str(expired))
    error = json.loads(data)["error"]
    assert status == 403 and error["code"] == "forbidden" and "GET /api/v1/exports" in error["message"], error


async def test_another_business_key_finds_nothing_and_may_not_export_for_it(api, account, second_account, db):
    export_id, _ = await completed_export(db, account["business_id"])
    _, body, _ = await api.request("GET", PATH, key=account["key"], params={"id": export_id})
    other = second_account["key"]
    status, found, _ = await api.request("GET", PATH, key=other, params={"id": export_id})
    assert status == 404 and found["error"]["code"] == "not_found", found
    status, page, _ = await api.request("GET", PATH, key=other, params={"limit": "100"})
    assert status == 200 and export_id not in [e["id"] for e in page["exports"]], page
    status, data, _ = await fetch(api, body["download_url"], key=other)
    assert status == 404 and json.loads(data)["error"]["code"] == "not_found", data
    status, refused, _ = await api.request("POST", PATH, key=other, json={"business_id": account["business_id"]})
    assert status == 403 and refused["error"]["code"] == "forbidden", refused
    status, refused, _ = await api.request("GET", PATH, key=other, params={"business_id": account["business_id"]})
    assert status == 403, refused


async def test_the_privacy_scopes_are_needed_and_not_given_by_default(api, account):
    default = account["read_key"]  # signup's key, with the default scopes
    status, body, _ = await api.request("POST", PATH, key=default, json={})
    assert status == 403 and "privacy:write" in body["error"]["message"], body
    status, body, _ = await api.request("GET", PATH, key=default)
    assert status == 403 and "privacy:read" in body["error"]["message"], body
    reader = (await account["dashboard"].create_key(name="privacy reader", scopes=["privacy:read"]))["key"]
    status, body, _ = await api.request("GET", PATH, key=reader)
    assert status == 200, body
    status, body, _ = await api.request("POST", PATH, key=reader, json={})
    assert status == 403 and "privacy:write" in body["error"]["message"], body
