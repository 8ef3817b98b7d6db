"""Sign-in links by e-mail: the dashboard (and the connector's OAuth consent page) asks for one with the account's
address; the link signs the browser in once and goes on to the page that asked (the gateway keeps `next` on this
site when it redirects).

The answer never says whether the address has an account (no enumeration), and comes at once: the lookup and the
mail happen after it, so its timing says nothing either. An account holds at most MAX_PENDING unused links at a
time, so the form cannot be used to flood a mailbox.

A new account's owner gets one welcome mail with a link: signup takes the address on trust, and using any mailed
link confirms it (services.accounts.identity.service.redeem_magic_link). The platform mails nothing else to an address
until it is confirmed (services.messaging: the owner's notifications, the email queue).
"""
from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from urllib.parse import urlencode

from core.contact import normalize_email
from core.errors import ServiceError
from core.ids import utcnow
from providers.email.adapter import EmailError, EmailSender
from services.accounts import secret_keys
from services.accounts.domain import new_secret_token
from services.accounts.identity.service import Identity

log = logging.getLogger(__name__)

LINK_TTL = timedelta(minutes=15)
WELCOME_TTL = timedelta(days=2)
MAX_PENDING = 5


SIGN_IN_SUBJECT = "Your Switchboard sign-in link"
WELCOME_SUBJECT = "Welcome to Switchboard: confirm your address"


class SignInLinks:
    def __init__(self, identity: Identity, sender: EmailSender):
        self.identity, self.sender = identity, sender
        self._sending: set[asyncio.Task[None]] = set()

    def send(self, email: str, next_path: str, *, welcome: bool = False) -> None:
        """E-mail a sign-in link (`welcome`: the new account's welcome) to the account with this address, if there is
        one and not too many are pending: in the background, so the caller's answer never waits on it."""
        task = asyncio.create_task(self._send(email, next_path, welcome), name="sign-in-link")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, email: str, next_path: str, welcome: bool) -> None:
        try:
            address = normalize_email(email)
        except ServiceError:  # answered like an unknown address
            return
        now = utcnow()
        token = new_secret_token()
        async with self.identity.uow.transaction() as work:
            account_id = await work.accounts.account_by_email(address)
            if account_id is None:
                return
            if await work.accounts.pending_magic_links(account_id, now) >= MAX_PENDING:
                log.warning("sign-in link not sent: %d unused links are pending for account %s", MAX_PENDING,
                            account_id)
                return
            await work.accounts.add_magic_link(token_hash=self.identity.hash(secret_keys.SIGN_IN_LINK, token), account_id=account_id,
                                          expires_at=now + (WELCOME_TTL if welcome else LINK_TTL), mailed=True)
        link = f"{self.identity.base_url}/dashboard/login?" + urlencode({"token": token, "next": next_path or
                                                                         "/dashboard"})
        subject, body = (WELCOME_SUBJECT, (
            "Your Switchboard account is ready. Open this link to confirm this address and sign in to your dashboard "
            f"(it works once, within {WELCOME_TTL.days} days):\n\n{link}\n\nUntil it is confirmed, Switchboard sends "
            "nothing else to this address. If you did not sign up, ignore this message.")) if welcome else (
            SIGN_IN_SUBJECT, f"Open this link to sign in to Switchboard (it works once, within "
            f"{LINK_TTL.seconds // 60} minutes):\n\n{link}\n\nIf you did not ask to sign in, ignore this message.")
        try:
            await self.sender.send(to=address, subject=subject, body=body)
        except EmailError as exc:  # the user asks again; nothing is stored that needs undoing
            log.warning("sign-in link not sent: %s", exc.message)

    async def close(self) -> None:
        """Let the mails under way finish (each is bounded by the mail server's time-out)."""
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)
