"""Sign-in links by e-mail: the dashboard (and the connector's OAuth consent page) asks for one with the account's
address; the link signs the browser in once and goes on to the page that asked (the gateway keeps `next` on this
site when it redirects).

The answer never says whether the address has an account (no enumeration), and an account holds at most
MAX_PENDING unused links at a time, so the form cannot be used to flood a mailbox.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlencode

from core.contact import normalize_email
from core.errors import ServiceError
from core.ids import utcnow
from providers.email.adapter import EmailError, EmailSender
from services.accounts import store
from services.accounts.domain import new_secret_token
from services.accounts.service import Accounts

log = logging.getLogger(__name__)

LINK_TTL = timedelta(minutes=15)
MAX_PENDING = 5


class SignInLinks:
    def __init__(self, accounts: Accounts, sender: EmailSender):
        self.accounts, self.sender = accounts, sender

    async def send(self, email: str, next_path: str) -> None:
        """E-mail a sign-in link to the account with this address, if there is one (and not too many are pending)."""
        try:
            address = normalize_email(email)
        except ServiceError:  # answered like an unknown address
            return
        now = utcnow()
        token = new_secret_token()
        async with self.accounts.engine.begin() as conn:
            account_id = await store.account_by_email(conn, address)
            if account_id is None:
                return
            if await store.pending_magic_links(conn, account_id, now) >= MAX_PENDING:
                log.warning("sign-in link not sent: %d unused links are pending for account %s", MAX_PENDING,
                            account_id)
                return
            await store.insert_magic_link(conn, token_hash=self.accounts.hash(token), account_id=account_id,
                                          expires_at=now + LINK_TTL)
        link = f"{self.accounts.base_url}/dashboard/login?" + urlencode({"token": token, "next": next_path or
                                                                         "/dashboard"})
        try:
            await self.sender.send(to=address, subject="Your Switchboard sign-in link", body=(
                f"Open this link to sign in to Switchboard (it works once, within {LINK_TTL.seconds // 60} "
                f"minutes):\n\n{link}\n\nIf you did not ask to sign in, ignore this message."))
        except EmailError as exc:  # the user asks again; nothing is stored that needs undoing
            log.warning("sign-in link not sent: %s", exc.message)
