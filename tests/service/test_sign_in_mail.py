"""Asking for a sign-in link answers at once, before the address is looked up or any mail goes out, so neither the
answer nor its timing says whether the address has an account; the mail follows in the background."""
import asyncio
import time
import uuid

import sqlalchemy as sa

from providers.email.smtp import SmtpSender
from services.accounts.identity.sign_in import SignInLinks
from services.accounts.schema import magic_links, users

SLOW_SECONDS = 1.5


async def test_the_answer_never_waits_for_the_lookup_or_the_mail(accounts_of, engine):
    connections = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)  # a mail server that takes the connection and never greets

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    accounts = accounts_of()
    links = SignInLinks(accounts.identity, SmtpSender("127.0.0.1", server.sockets[0].getsockname()[1],
                                             sender="Switchboard <n@switchboard.local>", timeout=SLOW_SECONDS))
    known = f"known-{uuid.uuid4().hex[:8]}@example.com"
    account_id = str(uuid.uuid4())
    async with engine.begin() as conn:
        await conn.execute(users.insert().values(id=account_id, email=known, created_at=sa.func.now()))
    try:
        for address in (known, f"nobody-{uuid.uuid4().hex[:8]}@example.com"):
            started = time.monotonic()
            links.send(address, "/dashboard")
            assert time.monotonic() - started < 0.05, address  # answered before the lookup, let alone the mail
        await links.close()  # the background work ends: the mail server timed out
        assert len(connections) == 1  # only the known address got as far as the mail server
        async with engine.connect() as conn:
            mailed = (await conn.execute(sa.select(magic_links.c.mailed).where(
                magic_links.c.account_id == account_id))).scalars().all()
        assert mailed == [True]  # stored before the mail was tried, marked as mailed (its use confirms the address)
    finally:
        for writer in connections:
            writer.close()
        server.close()
        await server.wait_closed()
