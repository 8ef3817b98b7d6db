"""The catch-all's SMTP side: an `aiosmtpd` server on the running event loop (the aiohttp app's), so SMTP and
HTTP share one thread and one folder with no locking. `aiosmtpd`'s `Controller` would run the server on a loop
in a thread of its own; we only need what it does inside that thread, `loop.create_server` with an `SMTP`
protocol per connection, and do that on our loop instead.

The handler implements only `handle_DATA`: without a `handle_MAIL` or `handle_RCPT`, aiosmtpd takes every
sender and every recipient. 8BITMIME and SMTPUTF8 are offered, so any message a client can send is accepted.
"""
from __future__ import annotations

import asyncio
import logging
from email import policy
from email.parser import BytesParser

from aiosmtpd.smtp import SMTP, Envelope, Session

from providers.email.catchall.mailbox import HOSTNAME, PRODUCT, Mailbox, text

log = logging.getLogger("providers.email.catchall")


class CatchAllHandler:
    """Stores each message in the mailbox and logs who sent it to whom about what (never its body)."""

    def __init__(self, mailbox: Mailbox):
        self.mailbox = mailbox

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        peer = session.peer[0] if isinstance(session.peer, tuple) else str(session.peer)
        try:
            message_id = self.mailbox.save(content, mail_from=envelope.mail_from or "",
                                           rcpt_tos=list(envelope.rcpt_tos), peer=peer, helo=session.host_name)
        except OSError:
            log.exception("could not store a message from %s", envelope.mail_from)
            return "451 4.3.0 Error: could not store the message, try again later"
        subject = BytesParser(policy=policy.default).parsebytes(content, headersonly=True)["Subject"]
        log.info("message %s from %s to %s: %r", message_id, envelope.mail_from, ", ".join(envelope.rcpt_tos),
                 text(subject or ""))
        return f"250 2.0.0 OK saved as {message_id}"


async def start_smtp(mailbox: Mailbox, host: str, port: int) -> asyncio.AbstractServer:
    """Listening on `host:port` until the returned server is closed."""
    loop = asyncio.get_running_loop()
    handler = CatchAllHandler(mailbox)
    return await loop.create_server(
        lambda: SMTP(handler, hostname=HOSTNAME, ident=PRODUCT, enable_SMTPUTF8=True, loop=loop), host=host, port=port)
