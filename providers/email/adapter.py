"""What the platform needs from an e-mail provider, independent of the protocol behind it.

The email queue sends one plain-text message to one recipient at a time and decides for itself whether to try
again, so a failure has to say one thing beyond what went wrong: whether trying again can help. SMTP says so in
its reply codes (RFC 5321 §4.2.1): a 5xx reply is a permanent refusal (mailbox unknown, message rejected,
credentials refused), a 4xx reply a transient one (greylisting, mailbox busy, server short of resources).
A failure to connect, a dropped connection or a time-out never reached a verdict, so it is transient too.

`EmailError.message` is safe to show an API user: it names the SMTP stage and the server's reply, never our
password and never the message body.
"""
from __future__ import annotations

from typing import Protocol


class EmailError(Exception):
    """The e-mail provider failed or refused a message.

    `permanent`: True when retrying cannot help (a 5xx SMTP reply such as a refused recipient, or a message we
    cannot send as given); False for connection problems, time-outs and 4xx replies.
    """

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        self.message = message
        self.permanent = permanent

    def __repr__(self) -> str:
        return f"EmailError({self.message!r}, permanent={self.permanent!r})"


class EmailSender(Protocol):
    async def send(self, *, to: str, subject: str, body: str, reply_to: str | None = None,
                   on_behalf_of: str | None = None) -> str:
        """Send one plain-text message to one address; the Message-ID it carried (`<...@sender-domain>`).
        `on_behalf_of`: the business a customer's mail is from (named in From beside ours).
        Never retried here: a send that timed out after the server took the message may still be delivered."""

    async def check(self) -> None:
        """Connect (EHLO, and NOOP) and raise `EmailError` when the server is unreachable or refuses us
        (health checks)."""
