"""Delivering the email queue as a use case: a mail server that cannot be reached means a retry with backoff,
then failed after the last try; a delivery lease keeps two workers off one email."""
import uuid
from datetime import timedelta

import sqlalchemy as sa

from contracts import messaging
from core.ids import utcnow
from deploy.local.servers import free_port
from providers.email.smtp import SmtpSender
from services.messaging import domain
from services.messaging.email_service import EmailDelivery
from services.messaging.repositories.unit import messaging_uow
from services.messaging.schema import emails


async def queued(engine, **extra) -> str:
    email_id, now = str(uuid.uuid4()), utcnow()
    async with engine.begin() as conn:
        await conn.execute(emails.insert().values(**{
            "id": email_id, "business_id": str(uuid.uuid4()), "kind": "api", "to_address": "x@example.com",
            "subject": "Hi", "body": "Hello.", "status": "approved", "next_attempt_at": now, "created_at": now,
            "updated_at": now, **extra}))
    return email_id


async def row_of(engine, email_id: str):
    async with engine.connect() as conn:
        return (await conn.execute(sa.select(emails).where(emails.c.id == email_id))).first()


def leased() -> dict:
    """A lease this test holds, so that the stack's own delivery loop leaves the email to it."""
    return {"lease_token": str(uuid.uuid4()), "lease_until": utcnow() + timedelta(minutes=1)}


async def test_an_unreachable_server_means_retries_then_failed(engine, database):
    nobody = SmtpSender("127.0.0.1", free_port(), sender="Switchboard <n@switchboard.local>", timeout=2)
    delivery = EmailDelivery(messaging_uow(database), nobody, interval=60, retry_scale=1)
    lease = leased()
    email_id = await queued(engine, attempts=messaging.EMAIL_ATTEMPTS - 2, **lease)
    await delivery.deliver(await row_of(engine, email_id), lease["lease_token"])
    first = await row_of(engine, email_id)
    assert (first.status, first.attempts, first.lease_token) == ("approved", messaging.EMAIL_ATTEMPTS - 1, None)
    assert first.last_error and first.next_attempt_at > utcnow() + timedelta(minutes=1)  # backed off
    lease = leased()
    async with engine.begin() as conn:
        await conn.execute(emails.update().where(emails.c.id == email_id).values(**lease))
    await delivery.deliver(await row_of(engine, email_id), lease["lease_token"])
    last = await row_of(engine, email_id)
    assert (last.status, last.attempts, last.next_attempt_at) == ("failed", messaging.EMAIL_ATTEMPTS, None)


async def test_a_leased_or_future_email_is_left_alone(engine, database, cfg):
    catchall = SmtpSender(cfg.smtp_host, cfg.smtp_port, sender="Switchboard <n@switchboard.local>", timeout=2)
    delivery = EmailDelivery(messaging_uow(database), catchall, interval=60, retry_scale=0)
    taken = await queued(engine, **leased())
    later = await queued(engine, next_attempt_at=utcnow() + timedelta(minutes=5))
    await delivery.deliver_due()  # (any other due email of the shared stack just goes out here)
    assert (await row_of(engine, taken)).attempts == 0 and (await row_of(engine, later)).attempts == 0


def test_the_backoff_doubles_up_to_an_hour():
    assert [domain.email_retry_delay(n).total_seconds() for n in (1, 2, 3)] == [30, 60, 120]
    assert domain.email_retry_delay(20) == timedelta(hours=1)
    assert domain.after_failed_send(1, permanent=True) == "failed"
    assert domain.after_failed_send(1, permanent=False) == "approved"
