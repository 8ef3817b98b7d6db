"""The export's rules and archive bytes (services/accounts/privacy/export_domain.py): each kind's progress, the
parts as one .tar.gz (concatenated gzip members) read back by tarfile and by GNU tar, and the signed link."""
import gzip
import io
import json
import shutil
import subprocess
import tarfile
import zlib
from datetime import UTC, datetime, timedelta

import pytest

from contracts import exports as exports_contract
from core import registry
from services.accounts.privacy import export_domain as rules

CREATED = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_every_kind_is_held_by_the_accounts_service_or_one_asked_for_pages():
    names = [kind.name for kind in exports_contract.KINDS]
    assert len(set(names)) == len(names)
    assert {kind.service for kind in exports_contract.KINDS} == {exports_contract.ACCOUNTS, *registry.EXPORT_SERVICES}
    assert names[:2] == ["workspace", "usage"]


def test_progress_moves_page_by_page_and_an_empty_page_or_no_cursor_ends_a_kind():
    progress = rules.initial_progress(exports_contract.KINDS[:3])
    assert rules.next_kind(progress) == 0
    progress = rules.with_page(progress, 0, 1, "")
    assert progress[0] == {"kind": "workspace", "records": 1, "pages": 1, "after": "", "done": True}
    assert rules.next_kind(progress) == 1
    progress = rules.with_page(progress, 1, 1000, "c1")
    assert progress[1] == {"kind": "usage", "records": 1000, "pages": 1, "after": "c1", "done": False}
    progress = rules.with_page(progress, 1, 0, "c2")  # a source answering nothing with a cursor: the kind ends
    assert progress[1]["done"] and progress[1]["records"] == 1000 and progress[1]["pages"] == 1
    progress = rules.with_page(progress, 2, 0, "")
    assert rules.next_kind(progress) is None


def archive(progress, pages):
    """The parts in order, as the job stores them: the stream's CRC-32 and size carried from one to the next."""
    parts, stream = [], rules.Stream()
    for kind, page, lines in pages:
        data, stream = rules.page_part(kind, page, lines, CREATED.timestamp(), stream, first=not parts)
        parts.append(data)
    parts.append(rules.final_part(rules.manifest("e1", "b1", CREATED, progress), CREATED.timestamp(), stream,
                                  first=not parts))
    return parts


def test_the_parts_in_order_are_one_tar_gz_with_a_member_per_page_and_the_manifest(tmp_path):
    progress = [{"kind": "calls", "records": 3, "pages": 2, "after": "", "done": True},
                {"kind": "leads", "records": 0, "pages": 0, "after": "", "done": True}]
    parts = archive(progress, [("calls", 1, ['{"id":"c1"}', '{"id":"c2"}']), ("calls", 2, ['{"id":"é"}'])])
    data = b"".join(parts)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz") as tar:  # streamed: one gzip member, read to its end
        assert [m.name for m in tar] == ["calls/000001.jsonl", "calls/000002.jsonl", "manifest.json"]
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        assert tar.getnames() == ["calls/000001.jsonl", "calls/000002.jsonl", "manifest.json"]
        assert tar.extractfile("calls/000001.jsonl").read().decode().splitlines() == ['{"id":"c1"}', '{"id":"c2"}']
        assert json.loads(tar.extractfile("calls/000002.jsonl").read()) == {"id": "é"}
        manifest = json.load(tar.extractfile("manifest.json"))
    assert manifest["format"] == "switchboard-export" and manifest["records"] == 3
    assert manifest["kinds"][0] == {"kind": "calls", "service": "calls", "records": 3,
                                    "files": ["calls/000001.jsonl", "calls/000002.jsonl"]}
    assert manifest["kinds"][1]["files"] == [] and manifest["created_at"] == "2026-11-29T12:00:00Z"
    assert gzip.decompress(data)[-1024:] == b"\0" * 1024
    assert zlib.decompressobj(31).decompress(data).endswith(b"\0" * 1024)  # a single member: no data left over
    if shutil.which("tar"):
        (tmp_path / "a.tar.gz").write_bytes(data)
        listed = subprocess.run(["tar", "-tzf", str(tmp_path / "a.tar.gz")], capture_output=True, check=True)
        assert listed.stdout.decode().split() == ["calls/000001.jsonl", "calls/000002.jsonl", "manifest.json"]


def test_the_same_page_makes_the_same_part_and_only_the_first_part_has_the_header():
    first = rules.page_part("calls", 1, ["{}"], 0, rules.Stream(), first=True)
    assert first == rules.page_part("calls", 1, ["{}"], 0, rules.Stream(), first=True)
    assert first[0].startswith(b"\x1f\x8b\x08")
    later, stream = rules.page_part("calls", 2, ["{}"], 0, first[1], first=False)
    assert not later.startswith(b"\x1f\x8b") and stream.size == 2 * first[1].size


def test_an_archive_of_one_part_is_whole():
    [only] = archive([], [])
    with tarfile.open(fileobj=io.BytesIO(only), mode="r|gz") as tar:
        assert [m.name for m in tar] == ["manifest.json"]


def test_a_link_is_valid_for_its_export_and_expiry_only():
    key = b"k" * 32
    signature = rules.link_signature("v1", key, "e1", 1000)
    kid, digest = rules.signed_kid(signature)
    assert kid == "v1" and rules.link_valid(key, "e1", 1000, digest)
    assert not rules.link_valid(key, "e1", 1001, digest) and not rules.link_valid(key, "e2", 1000, digest)
    assert not rules.link_valid(b"x" * 32, "e1", 1000, digest) and not rules.link_valid(None, "e1", 1000, digest)


@pytest.mark.parametrize("signature", ["", "v1", "v1.", "v1.abc", "." + "a" * 64])
def test_a_signature_of_another_shape_is_refused(signature):
    assert rules.signed_kid(signature) is None


def test_a_link_never_outlives_the_archive():
    now = CREATED.timestamp()
    assert rules.link_expires(now, 3600, CREATED + timedelta(days=7)) == int(now) + 3600
    assert rules.link_expires(now, 3600, CREATED + timedelta(minutes=5)) == int(now) + 300
