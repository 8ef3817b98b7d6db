"""The real SMTP sender against the catch-all process: a message arrives as sent (non-ASCII headers and body,
Reply-To, the Message-ID `send` returned) and is kept as an `.eml` file; the catch-all's read API (the `to`
filter, the raw file, deleting, its refusals); `check`; the failures and whether they are permanent (an
unreachable port, a server that never answers, a login or STARTTLS the server does not offer, addresses we
refuse ourselves, and a mail server refusing a recipient with 5xx and 4xx replies); and the folder read again
after a restart."""
import asyncio
import json
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from email import policy
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import Path

import aiohttp
import pytest
from aiosmtpd.smtp import SMTP

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.email.adapter import EmailError
from providers.email.smtp import SmtpSender

ROOT = Path(__file__).resolve().parents[2]
SENDER = "Switchboard <noreply@switchboard.test>"
PASSWORD = "s3cret-smtp-passw0rd"
FILE_NAME = re.compile(r"\d+-\d{8}T\d{6}\.\d{6}Z\.eml")


class CatchAll:
    """`python -m providers.email.catchall` as a child process, and its HTTP read API."""

    def __init__(self, folder: Path):
        self.mail, self.log, self.proc = folder / "mail", folder / "catchall.log", None
        self.smtp_port = free_port()
        self.http_port = free_port()
        while self.http_port == self.smtp_port:
            self.http_port = free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "providers.email.catchall", "--smtp-port", str(self.smtp_port),
                 "--dir", str(self.mail)],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin",
                     "SMTP_CATCHALL_HTTP_PORT": str(self.http_port)})  # the environment fallback
        wait_for_port(self.http_port, 20, self.proc, "email catch-all", self.log)
        wait_for_port(self.smtp_port, 5, self.proc, "email catch-all", self.log)

    def stop(self) -> int | None:
        stop_process(self.proc, signal.SIGTERM, 10)
        return self.proc.returncode if self.proc else None

    def sender(self, **options) -> SmtpSender:
        return SmtpSender("127.0.0.1", self.smtp_port, sender=SENDER, timeout=5.0, **options)

    async def request(self, method: str, path: str, expect: int = 200) -> tuple[dict, bytes]:
        async with aiohttp.ClientSession() as s, s.request(method, self.url + path) as r:
            body = await r.read()
            assert r.status == expect, body
            return dict(r.headers), body

    async def json(self, method: str, path: str, expect: int = 200):
        headers, body = await self.request(method, path, expect)
        assert headers["Content-Type"].startswith("application/json")
        return json.loads(body)

    async def messages(self, to: str | None = None) -> list[dict]:
        query = f"?to={to}" if to is not None else ""
        return (await self.json("GET", f"/messages{query}"))["messages"]

    def files(self) -> list[str]:
        return sorted(p.name for p in self.mail.iterdir())


@pytest.fixture(scope="module")
def catchall(tmp_path_factory):
    server = CatchAll(tmp_path_factory.mktemp("email-catchall"))
    server.start()
    yield server
    assert server.stop() == 0  # SIGTERM: a clean exit


@pytest.fixture
async def mail(catchall):
    """The catch-all, emptied first."""
    await catchall.json("DELETE", "/messages")
    return catchall


async def test_a_sent_message_arrives_as_sent(mail):
    subject = "Your booking — Grüße, Zoë ✓"
    body = "Hallo Zoë,\n\nyour table for 2 is booked.\n.\nA line that is only a dot, above; 日本語 below.\n日本語"
    sent_at = datetime.now(UTC)
    message_id = await mail.sender().send(to="Zoë Müller <zoe@example.com>", subject=subject, body=body,
                                          reply_to="Help Desk <help@switchboard.test>")
    assert re.fullmatch(r"<[^<>@\s]+@switchboard\.test>", message_id)  # on the sender's domain

    [received] = await mail.messages()
    assert received["from"] == SENDER and received["to"] == ["zoe@example.com"]  # the envelope recipient
    assert received["subject"] == subject
    assert received["body"] == body + "\n"  # a MIME text part ends with a line break
    assert received["message_id"] == message_id
    at = datetime.fromisoformat(received["received_at"].replace("Z", "+00:00"))
    assert abs(at - sent_at) < timedelta(seconds=30) and received["received_at"].endswith("Z")

    # The file in the folder, and the same bytes over HTTP.
    assert mail.files() == [f"{received['id']}.eml"] and FILE_NAME.fullmatch(mail.files()[0])
    headers, raw = await mail.request("GET", f"/messages/{received['id']}")
    assert headers["Content-Type"] == "message/rfc822"
    assert raw == (mail.mail / f"{received['id']}.eml").read_bytes()
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    assert parsed["Return-Path"] == "<noreply@switchboard.test>" and parsed["Delivered-To"] == "zoe@example.com"
    assert parsed["From"] == SENDER and parsed["To"] == "Zoë Müller <zoe@example.com>"
    assert parsed["Reply-To"] == "Help Desk <help@switchboard.test>" and parsed["Message-ID"] == message_id
    assert parsed["Subject"] == subject and "=?utf-8?" in raw.decode("ascii", "replace")  # RFC 2047 on the wire
    date = parsedate_to_datetime(parsed["Date"])
    assert date.tzinfo is not None and abs(date - sent_at) < timedelta(seconds=30)
    assert parsed.get_content_type() == "text/plain" and parsed.get_content_charset() == "utf-8"
    assert parsed["MIME-Version"] == "1.0"

    # One log line: who to whom about what, never the body.
    logged = mail.log.read_text()
    line = next(line for line in logged.splitlines() if received["id"] in line and "message" in line)
    # the addresses masked to their domains (core.masking), as every process logs them
    assert "***@switchboard.test" in line and "***@example.com" in line and subject in line
    assert "noreply@" not in logged and "zoe@" not in logged
    assert "your table" not in logged and "日本語" not in logged


async def test_each_send_has_its_own_message_id_and_reply_to_only_when_given(mail):
    sender = mail.sender()
    first = await sender.send(to="sam@example.com", subject="Plain ASCII", body="One")
    second = await sender.send(to="sam@example.com", subject="Plain ASCII", body="Two")
    assert first != second
    received = await mail.messages()
    assert [(m["message_id"], m["body"]) for m in received] == [(first, "One\n"), (second, "Two\n")]  # newest last
    _, raw = await mail.request("GET", f"/messages/{received[0]['id']}")
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    assert parsed["Reply-To"] is None and b"\r\nSubject: Plain ASCII\r\n" in raw


async def test_a_customers_mail_names_them_beside_us_from_our_address(mail):
    await mail.sender().send(to="sam@example.com", subject="Your quote", body="Hi", reply_to="owner@acme.test",
                             on_behalf_of="Zoë's\nPlumbing")
    [received] = await mail.messages()
    _, raw = await mail.request("GET", f"/messages/{received['id']}")
    parsed = BytesParser(policy=policy.default).parsebytes(raw)
    assert parsed["From"].addresses[0].display_name == "Zoë's Plumbing via Switchboard"  # one line, named
    assert parsed["From"].addresses[0].addr_spec == "noreply@switchboard.test"  # our address, never theirs
    assert parsed["Reply-To"] == "owner@acme.test" and received["reply_to"] == "owner@acme.test"


async def test_the_to_filter(mail):
    sender = mail.sender()
    for to in ("Alice@Example.com", "bob@example.com", "alice@other.test"):
        await sender.send(to=to, subject=f"for {to}", body="Hi")
    assert [m["subject"] for m in await mail.messages(to="alice")] == ["for Alice@Example.com", "for alice@other.test"]
    assert [m["to"] for m in await mail.messages(to="EXAMPLE.COM")] == [["Alice@Example.com"], ["bob@example.com"]]
    assert await mail.messages(to="carol") == []
    assert len(await mail.messages(to="")) == 3  # an empty filter is no filter


async def test_delete_and_the_apis_refusals(mail):
    sender = mail.sender()
    await sender.send(to="dana@example.com", subject="one", body="1")
    await sender.send(to="dana@example.com", subject="two", body="2")
    old = (await mail.messages())[0]["id"]
    assert await mail.json("DELETE", "/messages") == {"deleted": 2}
    assert await mail.messages() == [] and mail.files() == []
    assert await mail.json("DELETE", "/messages") == {"deleted": 0}
    assert "error" in await mail.json("GET", f"/messages/{old}", expect=404)
    assert "error" in await mail.json("GET", "/messages/..%2F..%2Fetc%2Fpasswd", expect=404)
    assert await mail.json("GET", "/nowhere", expect=404) == {"error": "not found: /nowhere"}
    assert "error" in await mail.json("POST", "/messages", expect=405)
    assert await mail.json("GET", "/health") == {"status": "ok"}


async def test_check_and_an_unreachable_server(mail):
    assert await mail.sender().check() is None
    assert await mail.messages() == []  # a check sends nothing

    gone = SmtpSender("127.0.0.1", free_port(), sender=SENDER, username="mailer", password=PASSWORD, timeout=2.0)
    with pytest.raises(EmailError) as err:
        await gone.check()
    assert err.value.permanent is False and err.value.message == "SMTP server unreachable: could not connect"
    with pytest.raises(EmailError) as err:
        await gone.send(to="erin@example.com", subject="Hi", body="Hi")
    assert err.value.permanent is False and "could not connect" in err.value.message
    assert PASSWORD not in repr(gone) and PASSWORD not in repr(err.value)


async def test_a_server_that_never_answers_times_out():
    connections = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)  # accepted, and no greeting ever comes

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        started = time.monotonic()
        with pytest.raises(EmailError) as err:
            await SmtpSender("127.0.0.1", port, sender=SENDER, timeout=0.3).check()
        assert err.value.permanent is False and err.value.message == "SMTP server timed out (connect)"
        assert time.monotonic() - started < 2 and len(connections) == 1
    finally:
        for writer in connections:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_login_and_starttls_only_when_asked_and_refused_when_not_offered(mail):
    # The catch-all offers neither AUTH nor STARTTLS: the other tests pass because we use neither unasked.
    for options, offer in (({"username": "mailer", "password": PASSWORD}, "AUTH"), ({"starttls": True}, "STARTTLS")):
        with pytest.raises(EmailError) as err:
            await mail.sender(**options).check()
        assert err.value.permanent is False and offer in err.value.message and PASSWORD not in err.value.message
        with pytest.raises(EmailError) as err:
            await mail.sender(**options).send(to="fay@example.com", subject="Hi", body="Hi")
        assert err.value.permanent is False and err.value.message.startswith("SMTP server cannot connect")
    assert await mail.messages() == []


@pytest.mark.parametrize("fields,reason", [
    ({"to": "not an address"}, "the recipient address is not one e-mail address"),
    ({"to": "gil@example.com, hal@example.com"}, "the recipient address is not one e-mail address"),
    ({"to": "gil@example.com\r\nBcc: hal@example.com"}, "the recipient address must be one line"),
    ({"subject": "Hi\r\nBcc: hal@example.com"}, "the subject must be one line"),
    ({"reply_to": "help@"}, "the reply-to address is not one e-mail address"),
    ({"to": "gil <gil@exa mple.com>"}, "the recipient address is not one e-mail address"),  # not gil@example.com
    ({"to": "Gil <gil smith@example.com>"}, "an address cannot be sent over SMTP"),  # aiosmtplib's own check
])
async def test_messages_we_refuse_to_send(mail, fields, reason):
    with pytest.raises(EmailError) as err:
        await mail.sender().send(**{"to": "gil@example.com", "subject": "Hi", "body": "Hi", **fields})
    assert err.value.permanent is True and err.value.message == reason
    assert await mail.messages() == []


class PickyMailServer:
    """A mail server that knows its mailboxes (aiosmtpd with a recipient policy): `nobody@` is refused for good
    (550, as for an unknown user), `busy@` for now (450, as when greylisting); everything else is taken."""

    def __init__(self):
        self.received: list[tuple[list[str], bytes]] = []
        self.sender: SmtpSender | None = None  # ours, pointed at this server

    async def handle_RCPT(self, server, session, envelope, address: str, rcpt_options: list[str]) -> str:
        if address.startswith("nobody@"):
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        if address.startswith("busy@"):
            return "450 4.2.1 Mailbox busy, try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        self.received.append((list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"


@pytest.fixture
async def picky():
    handler = PickyMailServer()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler, hostname="mx.example.com", loop=loop), "127.0.0.1", 0)
    handler.sender = SmtpSender("127.0.0.1", server.sockets[0].getsockname()[1], sender=SENDER, timeout=5.0)
    yield handler
    server.close()
    await server.wait_closed()


async def test_a_refused_recipient(picky):
    with pytest.raises(EmailError) as err:
        await picky.sender.send(to="nobody@example.com", subject="Hi", body="Hi")
    assert err.value.permanent is True
    assert err.value.message == ("SMTP server refused the recipient (550 5.1.1 <nobody@example.com>: Recipient "
                                 "address rejected: User unknown)")
    with pytest.raises(EmailError) as err:
        await picky.sender.send(to="busy@example.com", subject="Hi", body="Hi")
    assert err.value.permanent is False
    assert err.value.message == "SMTP server refused the recipient (450 4.2.1 Mailbox busy, try again later)"
    assert picky.received == []

    message_id = await picky.sender.send(to="ivy@example.com", subject="Hi", body="Hi")
    [(recipients, content)] = picky.received
    assert recipients == ["ivy@example.com"] and f"Message-ID: {message_id}".encode() in content


async def test_messages_survive_a_restart(mail):
    message_id = await mail.sender().send(to="jo@example.com", subject="Kept", body="Still here")
    [before] = await mail.messages()
    assert mail.stop() == 0
    mail.start()
    assert await mail.messages() == [before]  # read again from the folder
    await mail.sender().send(to="jo@example.com", subject="After", body="New")
    after = await mail.messages()
    assert next(m["message_id"] for m in after) == message_id and [m["subject"] for m in after] == ["Kept", "After"]
    assert int(after[1]["id"].split("-")[0]) == int(before["id"].split("-")[0]) + 1  # numbering goes on
