"""The catch-all's only state: a folder of `.eml` files, one per received message, that a developer can open in
any mail client and the HTTP API reads again on every request (so a restart, or a file deleted by hand, needs
no bookkeeping).

A file is named `<n>-<UTC timestamp>.eml` (`7-20250314T101502.123456Z.eml`); that name without `.eml` is the
message's id. `n` counts up from the highest number in the folder, so the listing's order is the order of
arrival, and the timestamp keeps an id unique after the folder was emptied and the count started again.

The file is the message exactly as the client sent it, after the trace headers a delivering server prepends:
`Return-Path: <envelope sender>`, one `Delivered-To:` per envelope recipient, then `Received:`. The envelope is
read back from that leading block (a `Delivered-To` further down belongs to the message itself), so a Bcc
recipient, who appears in no header, is still listed. Files are written under a hidden temporary name and then
renamed, so nobody reads half a message.
"""
from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime
from pathlib import Path
from typing import Any

FILE = re.compile(r"^(?P<n>\d+)-(?P<at>\d{8}T\d{6}\.\d{6}Z)\.eml$")
ID = re.compile(r"^\d+-\d{8}T\d{6}\.\d{6}Z$")
STAMP = "%Y%m%dT%H%M%S.%fZ"
HOSTNAME = "localhost"
PRODUCT = "Switchboard catch-all"


def text(value: object) -> str:
    """A header value or body as clean text: bytes the parser kept undecoded (raw UTF-8 in an SMTPUTF8 header)
    are read as UTF-8, anything else unreadable becomes U+FFFD (JSON cannot carry lone surrogates)."""
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def envelope(raw: bytes) -> tuple[str, list[str]]:
    """The envelope sender and recipients from the trace headers at the top of a stored file."""
    sender, recipients = "", list[str]()
    for line in raw.split(b"\n"):
        name, _, raw_value = line.rstrip(b"\r").partition(b":")
        value = raw_value.decode("utf-8", "replace").strip()
        if name == b"Return-Path" and not sender and not recipients:
            sender = value.removeprefix("<").removesuffix(">")
        elif name == b"Delivered-To":
            recipients.append(value)
        else:
            break
    return sender, recipients


def plain_body(message: EmailMessage) -> str:
    """The text/plain part, decoded, with `\n` line ends (SMTP carries CRLF); "" when there is none. It ends
    with a line break whether or not the sender's text did: a MIME text part always does."""
    part = message.get_body(preferencelist=("plain",))
    if part is None:
        return ""
    try:
        body = text(part.get_content())
    except (LookupError, ValueError):  # an unknown charset or a broken transfer encoding: show what we can
        payload = part.get_payload(decode=True)
        body = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    return body.replace("\r\n", "\n")


class Mailbox:
    """The folder of received messages."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def _files(self) -> list[tuple[int, str, Path]]:
        """(n, id, path) of every stored message, in the order they arrived."""
        found = []
        for path in self.folder.iterdir():
            match = FILE.match(path.name)
            if match and path.is_file():
                found.append((int(match["n"]), path.name.removesuffix(".eml"), path))
        return sorted(found)

    def save(self, content: bytes, *, mail_from: str, rcpt_tos: list[str], peer: str, helo: str | None) -> str:
        """Store one received message; its id. Synchronous: nothing else runs on the loop between picking the
        number and writing the file."""
        now = datetime.now(UTC)
        number = max((n for n, _, _ in self._files()), default=0) + 1
        message_id = f"{number}-{now.strftime(STAMP)}"
        trace = [f"Return-Path: <{mail_from}>", *(f"Delivered-To: {rcpt}" for rcpt in rcpt_tos),
                 f"Received: from {helo or 'unknown'} ({peer}) by {HOSTNAME} ({PRODUCT}) with ESMTP id {message_id}"
                 f"; {format_datetime(now)}"]
        data = "".join(f"{line}\r\n" for line in trace).encode("utf-8") + content
        temporary = self.folder / f".{message_id}.tmp"
        temporary.write_bytes(data)
        os.replace(temporary, self.folder / f"{message_id}.eml")
        return message_id

    def messages(self, to: str | None = None) -> list[dict[str, Any]]:
        """Every message, oldest first; with `to`, only those with a recipient containing it (any case)."""
        wanted = to.casefold() if to else None
        found = []
        for _, message_id, path in self._files():
            try:
                raw = path.read_bytes()
            except FileNotFoundError:  # deleted meanwhile
                continue
            summary = self.summary(message_id, raw)
            if wanted is None or any(wanted in rcpt.casefold() for rcpt in summary["to"]):
                found.append(summary)
        return found

    @staticmethod
    def summary(message_id: str, raw: bytes) -> dict[str, Any]:
        sender, recipients = envelope(raw)
        message = BytesParser(policy=policy.default).parsebytes(raw)
        named = FILE.match(f"{message_id}.eml")
        assert named is not None  # the ids come from the files' names, which FILE matched
        received = datetime.strptime(named["at"], STAMP).replace(tzinfo=UTC)
        return {"id": message_id,
                "from": text(message["From"]) if message["From"] is not None else sender,
                "to": recipients,
                "reply_to": text(message["Reply-To"]) if message["Reply-To"] is not None else None,
                "subject": text(message["Subject"] or ""),
                "body": plain_body(message),
                "message_id": text(message["Message-ID"]).strip() if message["Message-ID"] is not None else None,
                "received_at": received.isoformat(timespec="microseconds").replace("+00:00", "Z")}

    def raw(self, message_id: str) -> bytes | None:
        """The stored file, None when there is no such message (or the id is not one of ours)."""
        if not ID.match(message_id):
            return None
        try:
            return (self.folder / f"{message_id}.eml").read_bytes()
        except FileNotFoundError:
            return None

    def clear(self) -> int:
        """Delete every stored message; how many there were."""
        deleted = 0
        for _, _, path in self._files():
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            deleted += 1
        return deleted
