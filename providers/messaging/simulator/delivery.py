"""Playing a sent message the way Twilio and the carriers do: its status over time, and a status callback for
each change after `queued` POSTed to the message's StatusCallback URL.

A message is `sent` about a second after it was queued, then `delivered` when the carrier's receipt comes (about
two seconds later). Twilio has no way to choose another outcome for a real send (its magic numbers work only with
test credentials, which play nothing and call back nothing: `magic`), so the simulator has one of its own, named
as such: the simulator-only delivery outcomes (control plane `POST /_simulator/delivery-outcomes`) make every text
to one number end with one carrier error, with the status Twilio reports it with: 30003, 30004, 30005, 30006,
30007 or 30008 `undelivered` after `sent` (a carrier's receipt), 30001 or 30002 `failed` straight from `queued`
(never sent).

A status callback carries MessageSid, SmsSid, AccountSid, From, To, MessageStatus, SmsStatus, ApiVersion,
ErrorCode when the message failed or was undelivered (the code alone: Twilio sends no ErrorMessage), and
RawDlrDoneDate (the carrier receipt's YYMMDDhhmm) on delivered and undelivered. It is signed (webhooks) and
delivered with Twilio's default connection settings: retried once when the connection failed, never on an
answer (a 5xx included).

The control plane can make the next messages' callbacks misbehave, to exercise receivers (`CallbackScript`):
the final status reported before `sent`, every callback sent twice, or signed with the wrong token.
Delays are multiplied by the time scale (SMS_SIM_TIME_SCALE; tests play a message in a fraction of a second).
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from providers.messaging.simulator import errors
from providers.messaging.simulator.messages import API_VERSION, Messages
from providers.messaging.simulator.webhooks import new_idempotency_token, post_with_retry
from providers.simulator_control import next_script

log = logging.getLogger(__name__)

DELIVERED = ("delivered", None)
QUEUE_SECONDS, CARRIER_SECONDS = 1.0, 2.0  # queued -> sent, sent -> the carrier's receipt
WRONG_TOKEN = "not-the-auth-token"


@dataclass
class CallbackScript:
    """How the next `times` sent messages report their statuses (control plane)."""

    reorder: bool = False  # the final status is reported before `sent`
    duplicate: bool = False  # every callback is sent twice
    bad_signature: bool = False  # signed with a wrong token
    times: int = 1


def carrier_done_date(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).strftime("%y%m%d%H%M")


@dataclass
class Delivery:
    messages: Messages
    auth_token: str
    time_scale: float = 1.0
    scripts: list[CallbackScript] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)  # simulator-only: To number -> its carrier error
    tasks: set[Any] = field(default_factory=set)

    def outcome_for(self, to: str) -> tuple[str, int | None]:
        """The final status of a text to `to` and its error code: delivered, unless a simulator-only outcome is
        set for the number."""
        code = self.outcomes.get(to)
        return DELIVERED if code is None else (errors.delivery_status(code), code)

    def start(self, sid: str) -> None:
        """Play a just-created message in the background."""
        task = asyncio.get_running_loop().create_task(self._play(sid, self._next_script()))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _next_script(self) -> CallbackScript:
        return next_script(self.scripts, CallbackScript)

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds * self.time_scale)

    async def _play(self, sid: str, script: CallbackScript) -> None:
        record = self.messages.get(sid)
        assert record is not None  # start() plays a message just created
        final, code = self.outcome_for(record["to"])
        steps = [(QUEUE_SECONDS, final, code)] if final == "failed" else \
            [(QUEUE_SECONDS, "sent", None), (CARRIER_SECONDS, final, code)]
        held: dict[str, Any] | None = None
        for n, (delay, status, error_code) in enumerate(steps):
            await self._sleep(delay)
            record = self.messages.move(sid, status, error_code)
            params = self.callback_params(record)
            if script.reorder and n < len(steps) - 1:
                held = params  # reported after the final status
                continue
            await self._report(record, params, script)
            if held is not None:
                await self._report(record, held, script)
                held = None

    @staticmethod
    def callback_params(record: dict[str, Any]) -> dict[str, str]:
        status = record["status"]
        params = {"MessageSid": record["sid"], "SmsSid": record["sid"], "AccountSid": record["account_sid"],
                  "From": record["from"], "To": record["to"], "MessageStatus": status, "SmsStatus": status,
                  "ApiVersion": API_VERSION}
        if record["error_code"] is not None and status in ("failed", "undelivered"):
            params["ErrorCode"] = str(record["error_code"])
        if status in ("delivered", "undelivered"):
            params["RawDlrDoneDate"] = carrier_done_date()
        return params

    async def _report(self, record: dict[str, Any], params: dict[str, str], script: CallbackScript) -> None:
        url = record.get("_status_callback")
        if not url:
            return
        signing_token = WRONG_TOKEN if script.bad_signature else self.auth_token
        idempotency_token = new_idempotency_token()  # a duplicate is the same request again
        for _ in range(2 if script.duplicate else 1):
            await post_with_retry(url, params, signing_token, idempotency_token=idempotency_token,
                                  what=f"status callback {params['MessageStatus']} of {record['sid']}")
