"""Playing a sent message the way Twilio and the carriers do: its status over time, and a status callback for
each change after `queued` POSTed to the message's StatusCallback URL.

The outcome follows from the To number's last four digits (the documented test numbers; 0001 never gets
here, the API refuses it): 0003 `undelivered` with 30003 (unreachable handset), 0006 `undelivered` with 30006
(landline), each after `sent`; 0005 `failed` with 30005 (unknown destination) straight from `queued`, as Twilio
reports a message it could not send at all; any other number `sent` then `delivered`.

A status callback carries MessageSid, SmsSid, AccountSid, From, To, MessageStatus, SmsStatus, ApiVersion,
ErrorCode when the message failed or was undelivered, and RawDlrDoneDate (the carrier receipt's YYMMDDhhmm)
on delivered and undelivered. It is signed (webhooks) and repeated on connection errors and 5xx.

The control plane can make the next messages' callbacks misbehave, to exercise receivers (`CallbackScript`):
the final status reported before `sent`, every callback sent twice, or signed with the wrong token.
Delays are multiplied by the time scale (SMS_SIM_TIME_SCALE; tests play a message in a fraction of a second).
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from providers.messaging.simulator import errors
from providers.messaging.simulator.messages import API_VERSION, Messages
from providers.messaging.simulator.webhooks import new_idempotency_token, post_with_retries
from providers.simulator_control import next_script

log = logging.getLogger(__name__)

REFUSED = "0001"  # the API refuses the send (400, 21211)
OUTCOMES = {  # last four digits of To -> (final status, error code)
    "0003": ("undelivered", errors.UNREACHABLE),
    "0005": ("failed", errors.UNKNOWN_DESTINATION),
    "0006": ("undelivered", errors.LANDLINE),
}
DELIVERED = ("delivered", None)
QUEUE_SECONDS, CARRIER_SECONDS = 1.0, 2.0  # queued -> sent, sent -> the carrier's receipt
CALLBACK_ATTEMPTS, CALLBACK_PAUSE = 3, 1.0
WRONG_TOKEN = "not-the-auth-token"


@dataclass
class CallbackScript:
    """How the next `times` sent messages report their statuses (control plane)."""

    reorder: bool = False  # the final status is reported before `sent`
    duplicate: bool = False  # every callback is sent twice
    bad_signature: bool = False  # signed with a wrong token
    times: int = 1


def outcome_for(to: str) -> tuple[str, int | None]:
    return OUTCOMES.get(to[-4:], DELIVERED)


def is_refused(to: str) -> bool:
    return to[-4:] == REFUSED


def carrier_done_date(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).strftime("%y%m%d%H%M")


@dataclass
class Delivery:
    messages: Messages
    auth_token: str
    time_scale: float = 1.0
    scripts: list[CallbackScript] = field(default_factory=list)
    tasks: set = field(default_factory=set)

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
        final, code = outcome_for(record["to"])
        steps = [(QUEUE_SECONDS, final, code)] if final == "failed" else \
            [(QUEUE_SECONDS, "sent", None), (CARRIER_SECONDS, final, code)]
        held: dict | None = None
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
    def callback_params(record: dict) -> dict[str, str]:
        status = record["status"]
        params = {"MessageSid": record["sid"], "SmsSid": record["sid"], "AccountSid": record["account_sid"],
                  "From": record["from"], "To": record["to"], "MessageStatus": status, "SmsStatus": status,
                  "ApiVersion": API_VERSION}
        if record["error_code"] is not None and status in ("failed", "undelivered"):
            params["ErrorCode"] = str(record["error_code"])
        if status in ("delivered", "undelivered"):
            params["RawDlrDoneDate"] = carrier_done_date()
        return params

    async def _report(self, record: dict, params: dict[str, str], script: CallbackScript) -> None:
        url = record.get("_status_callback")
        if not url:
            return
        signing_token = WRONG_TOKEN if script.bad_signature else self.auth_token
        idempotency_token = new_idempotency_token()  # a duplicate is the same request again
        for _ in range(2 if script.duplicate else 1):
            await post_with_retries(url, params, signing_token, attempts=CALLBACK_ATTEMPTS,
                                    pause=max(CALLBACK_PAUSE * self.time_scale, 0.01),
                                    what=f"status callback {params['MessageStatus']} of {record['sid']}",
                                    idempotency_token=idempotency_token)
