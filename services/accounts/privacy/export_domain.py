"""Export of a business's data: the rules and the archive's bytes, with no I/O.

An export writes every kind of the business's records (contracts.exports.KINDS, in order, each held by one service: the accounts
service's own two it reads itself, the others it asks for with ExportPage) into one .tar.gz, a page at a time.
Each page becomes a tar member `<kind>/<NNNNNN>.jsonl` (one JSON document per line, as the public API shows the
record), its header, data and padding compressed by a deflate compressor of its own and flushed to a byte boundary:
one stored part. Blocks of independent compressors follow one another in one valid deflate stream, so the parts in
order are ONE gzip member (RFC 1952: the first part starts with its header, the last ends with its trailer, whose
CRC-32 and size are carried from part to part in `Stream`): every reader takes it, Python's streaming `tarfile` mode
too, which stops after the first of several gzip members. No step holds more than a page. The last part is
`manifest.json` (FORMAT, the business, the counts per kind, the members) and the tar's end-of-archive blocks.

A kind's progress, [{kind, records, pages, after, done}] in KINDS order, is stored with the part that advances it,
so a job taken over after a crash resumes at the page after the last one stored (`next_kind`), never writing a page
twice nor skipping one. A page answered empty ends its kind.

The download link is `?expires=<unix seconds>&signature=v<N>.<hex>`: HMAC-SHA256 over the export's id and the
expiry under the export-link subkey of the server secret's version N (services.accounts.secret_keys, so a rotation
keeps the links of the version before valid), never valid past the archive's own expiry.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import struct
import tarfile
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts.exports import BY_NAME, KINDS, Kind
from core.ids import rfc3339

QUEUED, RUNNING, COMPLETED, FAILED, EXPIRED = "queued", "running", "completed", "failed", "expired"
STATUSES = (QUEUED, RUNNING, COMPLETED, FAILED, EXPIRED)
ACTIVE = (QUEUED, RUNNING)
FORMAT = {"format": "switchboard-export", "version": 1}
MANIFEST = "manifest.json"
BLOCK = 512
END_OF_ARCHIVE = b"\0" * (2 * BLOCK)
GZIP_LEVEL = 6


def initial_progress(kinds: tuple[Kind, ...] = KINDS) -> list[dict[str, Any]]:
    return [{"kind": kind.name, "records": 0, "pages": 0, "after": "", "done": False} for kind in kinds]


def next_kind(progress: list[dict[str, Any]]) -> int | None:
    """The index of the first kind not done (None: every kind is written)."""
    return next((i for i, entry in enumerate(progress) if not entry["done"]), None)


def with_page(progress: list[dict[str, Any]], index: int, records: int, next_after: str) -> list[dict[str, Any]]:
    """The progress once a page of `records` of the kind at `index` is stored (an empty page ends the kind)."""
    entry = progress[index]
    done = not next_after or records == 0
    updated = {**entry, "records": entry["records"] + records, "pages": entry["pages"] + (1 if records else 0),
               "after": next_after if not done else "", "done": done}
    return [*progress[:index], updated, *progress[index + 1:]]


def member_name(kind: str, page: int) -> str:
    """The tar member of a kind's page (numbered from 1)."""
    return f"{kind}/{page:06d}.jsonl"


def jsonl(lines: list[str]) -> bytes:
    return "".join(f"{line}\n" for line in lines).encode()


def tar_member(name: str, data: bytes, mtime: float) -> bytes:
    """A tar member: its ustar header, its data and the padding to the next block."""
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
    return info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict") + data + b"\0" * (-len(data) % BLOCK)


@dataclass(frozen=True)
class Stream:
    """Where the archive's gzip stream stands after the parts stored so far: the CRC-32 and the size of what they
    hold uncompressed (its trailer needs both; unlike a compressor's state, they can be stored)."""

    crc32: int = 0
    size: int = 0


def gzip_header(mtime: float) -> bytes:
    """RFC 1952's header: deflate, no name, `mtime`, unknown OS."""
    return b"\x1f\x8b\x08\x00" + struct.pack("<I", int(mtime) & 0xFFFFFFFF) + b"\x00\xff"


def _deflated(raw: bytes, last: bool) -> bytes:
    """`raw` as deflate blocks of a compressor of its own, ended on a byte boundary (a sync flush), or as the stream's
    final block: blocks of independent compressors follow one another in one valid deflate stream."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(raw) + compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)


def _part(raw: bytes, stream: Stream, mtime: float, first: bool, last: bool) -> tuple[bytes, Stream]:
    after = Stream(zlib.crc32(raw, stream.crc32), stream.size + len(raw))
    data = (gzip_header(mtime) if first else b"") + _deflated(raw, last)
    if last:
        data += struct.pack("<II", after.crc32 & 0xFFFFFFFF, after.size & 0xFFFFFFFF)
    return data, after


def page_part(kind: str, page: int, lines: list[str], mtime: float, stream: Stream,
              first: bool) -> tuple[bytes, Stream]:
    """A page's part (the archive's first part starts with the gzip header) and the stream after it."""
    return _part(tar_member(member_name(kind, page), jsonl(lines), mtime), stream, mtime, first, last=False)


def manifest(export_id: str, business_id: str, created_at: datetime, progress: list[dict[str, Any]]) -> dict[str, Any]:
    return {**FORMAT, "export_id": export_id, "business_id": business_id, "created_at": rfc3339(created_at),
            "records": sum(entry["records"] for entry in progress),
            "kinds": [{"kind": e["kind"], "service": BY_NAME[e["kind"]].service if e["kind"] in BY_NAME else None,
                       "records": e["records"],
                       "files": [member_name(e["kind"], page) for page in range(1, e["pages"] + 1)]}
                      for e in progress]}


def final_part(document: dict[str, Any], mtime: float, stream: Stream, first: bool = False) -> bytes:
    """The manifest's member, the end of the archive, and the gzip trailer."""
    data = json.dumps(document, indent=2).encode()
    return _part(tar_member(MANIFEST, data, mtime) + END_OF_ARCHIVE, stream, mtime, first, last=True)[0]


def archive_name(business_id: str, created_at: datetime) -> str:
    return f"switchboard-export-{business_id[:8]}-{created_at:%Y%m%d-%H%M%S}.tar.gz"


# -- the signed download link ----------------------------------------------------------------------------------------

def link_digest(key: bytes, export_id: str, expires: int) -> str:
    return hmac.new(key, f"export.{export_id}.{expires}".encode(), hashlib.sha256).hexdigest()


def link_signature(kid: str, key: bytes, export_id: str, expires: int) -> str:
    return f"{kid}.{link_digest(key, export_id, expires)}"


def link_expires(now: float, link_seconds: int, archive_expires_at: datetime) -> int:
    """When a link made now stops working: after `link_seconds`, never past the archive's expiry."""
    return min(int(now) + link_seconds, int(archive_expires_at.timestamp()))


def signed_kid(signature: str) -> tuple[str, str] | None:
    """(kid, hex digest) of a signature as made by `link_signature`, or None when it is not of that shape."""
    kid, _, digest = signature.partition(".")
    if not kid or len(digest) != 64:
        return None
    return kid, digest


def link_valid(key: bytes | None, export_id: str, expires: int, digest: str) -> bool:
    return key is not None and hmac.compare_digest(link_digest(key, export_id, expires), digest)
