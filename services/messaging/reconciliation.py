"""Texts whose outcome we may never hear of, and the provider is asked about.

Texts of unknown outcome: the provider was asked to send and no answer came (a time-out, a dropped connection),
so the text may have gone out. The provider's status callback says what became of it (its URL names our message);
this worker also asks the provider itself, in case no callback comes: the provider's messages from our number to
the callee with the same body since the send are looked up, and the one found is recorded as the send's answer
(sms.sent, then callbacks move it on). One still not found after `give_up` never went out: failed (sms.failed).

Texts the provider took whose callbacks never settled them: the provider calls each status callback once (and once
more only when the connection failed), so one our gateway refused (it could not store it) is lost. A text still
without an outcome `check_after` past its last change is looked up by its sid and moved as a callback would move
it (`provider_service.apply_status`: forward only, with its events); an answer that changes nothing doubles the wait
before the next look, and texts older than UNSETTLED_DAYS are left as they are (a carrier that never reports
delivery leaves a text `sent` for good).

Provider calls are made with no connection held; each write re-checks, under the row's lock, that the message is
still unknown (a callback may have been first)."""
from __future__ import annotations

import logging
from datetime import timedelta

from core.background import Periodic
from core.ids import utcnow
from core.uow import UnitOfWork
from providers.messaging.adapter import MessagingProvider, ProviderError
from services.messaging import domain
from services.messaging.provider_service import apply_status
from services.messaging.records import Message
from services.messaging.repositories.unit import MessagingUnit
from services.messaging.service import Texts

log = logging.getLogger(__name__)
SETTLE = timedelta(seconds=5)  # a callback usually comes within seconds: ask the provider only after
BATCH = 50
UNSETTLED_DAYS = 3


class Reconciliation(Periodic):
    task_name = "sms-reconciliation"

    def __init__(self, uow: UnitOfWork[MessagingUnit], texts: Texts, sms: MessagingProvider, *, interval: float,
                 give_up: timedelta, check_after: timedelta):
        self.uow, self.texts, self.sms = uow, texts, sms
        self.interval, self.give_up, self.check_after = interval, give_up, check_after

    async def round(self) -> bool:
        await self.reconcile_due()
        await self.check_unsettled()
        return False

    async def reconcile_due(self) -> int:
        """Look into every text of unknown outcome that had time to settle; how many were settled."""
        async with self.uow.read() as work:
            rows = await work.messages.unknown_messages(utcnow() - SETTLE, BATCH)
        settled = 0
        for row in rows:
            settled += await self.reconcile(row)
        return settled

    async def reconcile(self, row: Message) -> bool:
        try:
            listed = await self.sms.list_messages(to=row.to_number, from_=row.from_number, page_size=BATCH)
        except ProviderError as exc:
            log.info("sms %s: the provider could not be asked (%s); next round", row.id, exc)
            return False
        async with self.uow.read() as work:  # the sids of our other texts: never this one's answer
            ours = await work.messages.known_sids([m["sid"] for m in listed if m.get("sid")], row.id)
        found = domain.sent_match(listed, row.body, row.created_at, ours)
        if found is not None:
            await self.texts.record_accepted(row, found)
            log.info("sms %s: the provider had it as %s", row.id, found.get("sid"))
            return True
        if utcnow() - row.created_at < self.give_up:
            return False
        return await self.texts.record_never_sent(row, f"the messaging provider has no record of it "
                                                       f"{self.give_up.total_seconds() / 60:g} minutes after the send")


    async def check_unsettled(self) -> int:
        """Ask the provider about every text it took whose check is due; how many it moved on."""
        now = utcnow()
        async with self.uow.read() as work:
            rows = await work.messages.unsettled_messages(now, self.check_after, now - timedelta(days=UNSETTLED_DAYS),
                                                          BATCH)
        moved = 0
        for row in rows:
            moved += await self.check(row)
        return moved

    async def check(self, row: Message) -> bool:
        """Move the text as the provider has it now; whether its status changed."""
        sid = row.provider_sid
        assert sid is not None  # an unsettled text is one the provider took
        try:
            found = await self.sms.get_message(sid)
        except ProviderError as exc:
            log.info("sms %s: the provider could not be asked about %s (%s); next round", row.id, sid, exc)
            return False
        status = str(found.get("status") or "")
        error = found.get("error_code")
        checks = row.status_checks + 1
        async with self.uow.transaction() as work:
            moved = await apply_status(work, row.id, {"MessageStatus": status, "MessageSid": sid,
                                                           **({"ErrorCode": str(error)} if error else {})})
            await work.messages.checked(row.id, checks, utcnow() + self.check_after * 2 ** checks)
        if moved:
            log.info("sms %s: no callback settled it; the provider has it %s", row.id, status)
        return moved
