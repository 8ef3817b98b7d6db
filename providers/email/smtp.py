"""The real e-mail sender: plain SMTP (RFC 5321) through `aiosmtplib`, to any relay that takes mail for us.

One connection per message. The queue sends at most a few messages a second, and a fresh connection cannot
inherit a half-finished transaction, a server-side idle time-out or a dropped socket from the last message;
the cost is one handshake per message. STARTTLS is negotiated only when `starttls=True` (never opportunistically:
a relay on the local network or the catch-all offers none), and we log in only when a username is set.

The message is built with the standard library's `EmailMessage`: From (our sender), To, Subject (RFC 2047
encoded when it is not ASCII), Date, a Message-ID on the sender's domain, Reply-To when given, and a plain-text
UTF-8 body. `send` returns that Message-ID, so the caller can record it and match bounces and replies later.

`send` is never retried here. A time-out or a dropped connection after the final `.` of DATA may come after
the server took the message, so a repeat could deliver it twice; the caller decides (and a repeat carries a new
Message-ID). Failures are `EmailError`s named by the SMTP stage, with the server's reply when there is one
(never our password), and `permanent` from the reply code: 5xx permanent, 4xx, connection problems and
time-outs transient (see `adapter`). `timeout` bounds each step (connecting, each command, the DATA transfer).
"""
from __future__ import annotations

import asyncio
import logging
import ssl
from email.message import EmailMessage
from email.utils import formataddr, formatdate, getaddresses, make_msgid, parseaddr

import aiosmtplib

from core.uow import forbid_provider_call
from providers.email.adapter import EmailError

log = logging.getLogger(__name__)

REPLY_MAX = 200  # characters of the server's reply kept in an error message


def mailbox(value: str, what: str) -> str:
    """The bare address of `addr` or `Name <addr>`; a permanent `EmailError` unless it is exactly one address."""
    if "\r" in value or "\n" in value:
        raise EmailError(f"the {what} address must be one line", permanent=True)
    pairs = getaddresses([value])
    address = pairs[0][1] if len(pairs) == 1 else ""
    local, at, domain = address.rpartition("@")
    # The parser is lenient: `a <a@exa mple.com>` reads as a@example.com. Never send to an address not written.
    if not (local and at and domain) or address not in value:
        raise EmailError(f"the {what} address is not one e-mail address", permanent=True)
    return address


class SmtpSender:
    """`EmailSender` over SMTP. `sender` is the From header (`addr` or `Name <addr>`); its address is also the
    envelope sender and its domain the Message-ID's."""

    def __init__(self, host: str, port: int, *, sender: str, username: str = "", password: str = "",
                 starttls: bool = False, timeout: float = 10.0):
        try:
            self.envelope_from = mailbox(sender, "sender")
        except EmailError:
            raise ValueError(f"the sender must be one e-mail address, `addr` or `Name <addr>`: {sender!r}") from None
        self.host, self.port = host, port
        self.sender = sender
        self.username = username
        self._password = password
        self.starttls = starttls
        self.timeout = timeout
        self.domain = self.envelope_from.rpartition("@")[2]
        self.name = parseaddr(sender)[0] or self.domain

    def __repr__(self) -> str:  # never the password
        return (f"SmtpSender({self.host!r}, {self.port!r}, sender={self.sender!r}, username={self.username!r}, "
                f"starttls={self.starttls!r})")

    # -- the API -------------------------------------------------------------------------------------------

    async def send(self, *, to: str, subject: str, body: str, reply_to: str | None = None,
                   on_behalf_of: str | None = None) -> str:
        recipient = mailbox(to, "recipient")
        message = self.compose(to=to, subject=subject, body=body, reply_to=reply_to, on_behalf_of=on_behalf_of)
        smtp = await self._connect()
        try:
            await smtp.send_message(message, sender=self.envelope_from, recipients=[recipient])
        except Exception as exc:  # noqa: BLE001 - any failure of the client is the provider's error
            smtp.close()
            raise self._error("send", exc) from None
        except asyncio.CancelledError:
            smtp.close()
            raise
        await self._quit(smtp)  # the server has the message: a failing QUIT changes nothing
        return str(message["Message-ID"])

    async def check(self) -> None:
        smtp = await self._connect()
        try:
            if smtp.is_ehlo_or_helo_needed:  # not yet said when neither STARTTLS nor a login happened
                await smtp.ehlo()
            await smtp.noop()
        except Exception as exc:  # noqa: BLE001 - any failure of the client is the provider's error
            smtp.close()
            raise self._error("check", exc) from None
        except asyncio.CancelledError:
            smtp.close()
            raise
        await self._quit(smtp)

    def compose(self, *, to: str, subject: str, body: str, reply_to: str | None = None,
                on_behalf_of: str | None = None) -> EmailMessage:
        """The message as it will be sent (the Message-ID is new on every call). Mail a customer sends through us
        names them (`on_behalf_of`) in the From display name, `<customer> via <our name>`, from our address: never
        mistaken for our own mail, and never forging theirs."""
        if reply_to is not None:
            mailbox(reply_to, "reply-to")
        message = EmailMessage()
        try:
            message["From"] = self.sender if on_behalf_of is None else formataddr(
                (f"{' '.join(on_behalf_of.split())} via {self.name}", self.envelope_from))
            message["To"] = to
            message["Subject"] = subject
        except ValueError:  # a line break in a header value: it would start another header
            raise EmailError("the subject must be one line", permanent=True) from None
        message["Date"] = formatdate(localtime=True)
        message["Message-ID"] = make_msgid(domain=self.domain)
        if reply_to is not None:
            message["Reply-To"] = reply_to
        message.set_content(body, charset="utf-8")
        return message

    # -- transport -----------------------------------------------------------------------------------------

    def _client(self) -> aiosmtplib.SMTP:
        return aiosmtplib.SMTP(hostname=self.host, port=self.port, timeout=self.timeout, start_tls=self.starttls,
                               username=self.username or None, password=self._password if self.username else None)

    async def _connect(self) -> aiosmtplib.SMTP:
        """Connected, greeted, upgraded to TLS and logged in as configured (a failure closes the connection)."""
        forbid_provider_call("the mail server")  # none while a unit of work is open (core.uow)
        smtp = self._client()
        try:
            await smtp.connect()
        except Exception as exc:  # noqa: BLE001 - any failure of the client is the provider's error
            raise self._error("connect", exc) from None
        return smtp

    @staticmethod
    async def _quit(smtp: aiosmtplib.SMTP) -> None:
        try:
            await smtp.quit()
        except (aiosmtplib.SMTPException, OSError):
            pass
        finally:
            smtp.close()

    def _error(self, stage: str, exc: Exception) -> EmailError:
        error = self._classify(stage, exc)
        log.warning("email %s via %s:%d failed (%s): %s", stage, self.host, self.port, type(exc).__name__,
                    error.message)
        return error

    def _classify(self, stage: str, exc: Exception) -> EmailError:
        if isinstance(exc, aiosmtplib.SMTPRecipientsRefused):  # our one recipient: it carries the reply
            refusals = exc.recipients
            if refusals:
                return self._refused("the recipient", refusals[0].code, refusals[0].message)
            return EmailError("SMTP server refused the recipient")
        if isinstance(exc, aiosmtplib.SMTPResponseException):
            what = {aiosmtplib.SMTPRecipientRefused: "the recipient", aiosmtplib.SMTPSenderRefused: "the sender",
                    aiosmtplib.SMTPDataError: "the message", aiosmtplib.SMTPAuthenticationError: "our credentials",
                    aiosmtplib.SMTPHeloError: "our greeting",
                    aiosmtplib.SMTPConnectResponseError: "the connection"}.get(type(exc), f"the {stage}")
            return self._refused(what, exc.code, exc.message)
        if isinstance(exc, (aiosmtplib.SMTPTimeoutError, TimeoutError)):
            return EmailError(f"SMTP server timed out ({stage})")
        if isinstance(exc, aiosmtplib.SMTPConnectError):
            return EmailError("SMTP server unreachable: could not connect")
        if isinstance(exc, aiosmtplib.SMTPServerDisconnected):
            return EmailError(f"SMTP server closed the connection ({stage})")
        if isinstance(exc, aiosmtplib.SMTPException):
            # No reply code: something the server does not offer. While connecting it is our configuration
            # (STARTTLS or AUTH asked of a server without them): transient, health shows it until it is fixed.
            # While sending it is this message (a non-ASCII address for a server without SMTPUTF8): permanent.
            return EmailError(f"SMTP server cannot {stage}: {self._safe(exc.message)[:REPLY_MAX]}",
                              permanent=stage == "send")
        if isinstance(exc, ssl.SSLError):
            return EmailError(f"SMTP server unreachable: TLS failure ({stage})")
        if isinstance(exc, OSError):
            return EmailError(f"SMTP server unreachable: connection lost ({stage})")
        if isinstance(exc, ValueError):  # aiosmtplib refuses an address it cannot put on a command line
            return EmailError("an address cannot be sent over SMTP", permanent=True)
        return EmailError(f"SMTP {stage} failed ({type(exc).__name__})")

    def _refused(self, what: str, code: int, reply: str) -> EmailError:
        detail = f"{code} {' '.join(self._safe(reply or '').split())[:REPLY_MAX]}".rstrip()
        return EmailError(f"SMTP server refused {what} ({detail})", permanent=500 <= code < 600)

    def _safe(self, text: str) -> str:
        """The server's text without our password (should a server ever echo it)."""
        return text.replace(self._password, "[redacted]") if self._password else text
