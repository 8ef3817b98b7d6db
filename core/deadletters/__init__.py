"""Dead letters: what a durable consumer gave up on, kept on the DEADLETTERS stream until an operator replays or
drops it.

A consumer (core.bus.DurableConsumer) gives up on a message when its last allowed delivery fails
(CONSUMER_MAX_DELIVER), when a delivery comes past that count with no outcome (the process handling the last one
died or hung past ack_wait), or when it can never be applied (a handler's PermanentError, an undecodable message, a
PROVIDER message without the gateway's proof). It then publishes a `DeadLetter` on `deadletter.<stream>.<consumer>`
and only once JetStream has stored it terminates the original: a message is never dropped without a trace.

Why the consumer, not JetStream's MAX_DELIVERIES advisory: the advisory is a plain NATS message (lost when no one
listens at that moment), carries neither the error nor the message (a collector would fetch it by sequence, from a
work-queue stream too) and is not sent for a handler's termination. So JetStream's own limit is off
(max_deliver -1, core.bus): the consumer alone decides, with the error in hand, and a dead letter it fails to store
is retried with the message rather than lost.

An outbox relay (core.outbox) stores one too, under the consumer name `outbox-<service>` (core.registry.
relay_consumer) on stream EVENTS: an event at the head of its outbox that NATS refused on OUTBOX_POISON_AFTER passes
while taking the events after it (a type its service's user may not publish, a subject no stream stores), which
would otherwise hold every later event of the service; its `sequence` is the outbox row's id (it never reached the
stream), and only once the dead letter is stored is the row marked published (its headers say so). Its replay
publishes the event on its subject for the first time (core.nats_auth.operator_permissions).

`python -m core.deadletters list|show|replay|drop` is the operator's command (core.deadletters.command; README,
"Operations: dead letters").
"""
from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from nats.js import JetStreamContext
from nats.js.api import StreamConfig
from nats.js.errors import NotFoundError

from core import provider_proof, registry

if TYPE_CHECKING:
    from nats.aio.msg import Msg

STREAM = registry.DEADLETTER_STREAM
SUBJECT_PREFIX = "deadletter."
# Its limits (how long a dead letter is kept for an operator to look, replay or drop; how many bytes) come from the
# settings, NATS_DEADLETTERS_* (core.bus.limits_of).
STREAM_CONFIG = StreamConfig(name=STREAM, subjects=[SUBJECT_PREFIX + ">"], duplicate_window=120.0)
ERROR_LIMIT = 2000  # characters of the error's message kept
# Headers JetStream sets on what it stores or delivers: not the publisher's, not sent again on a replay.
_SERVER_HEADERS = ("Nats-Stream", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Subject", "Nats-Last-Sequence",
                   "Nats-Num-Pending", "Status", "Description")
# Set on a replayed message: the dead letter it came from (`<stream sequence on DEADLETTERS>`).
REPLAY_HEADER = "Sb-Replay-Of"


def subject_of(stream: str, consumer: str) -> str:
    return f"{SUBJECT_PREFIX}{stream}.{consumer}"


@dataclass(frozen=True)
class DeadLetter:
    """One message a consumer gave up on: where it was, why, and the message itself (its payload and headers as
    published)."""

    stream: str
    consumer: str
    subject: str  # the original subject, where a replay publishes it again
    sequence: int  # on `stream` (an outbox relay's: its row's id in the outbox, never having reached the stream)
    deliveries: int
    error_type: str
    error: str
    at: str  # when the consumer gave up (ISO 8601, UTC)
    payload: bytes
    headers: dict[str, str]

    @classmethod
    def of(cls, msg: Msg, consumer: str, error: BaseException | str, at: datetime) -> DeadLetter:
        meta = msg.metadata
        kind, text = (type(error).__name__, str(error)) if isinstance(error, BaseException) else ("", error)
        headers = {k: v for k, v in (msg.headers or {}).items() if k not in _SERVER_HEADERS}
        return cls(stream=meta.stream, consumer=consumer, subject=msg.subject, sequence=meta.sequence.stream,
                   deliveries=meta.num_delivered, error_type=kind, error=truncated(text), at=at.isoformat(),
                   payload=msg.data, headers=headers)

    @property
    def message_id(self) -> str:
        """Its Nats-Msg-Id on DEADLETTERS: a consumer that stores it twice (it died before terminating the
        original) stores it once."""
        return f"{self.stream}.{self.sequence}.{self.consumer}"

    @property
    def dead_subject(self) -> str:
        return subject_of(self.stream, self.consumer)

    def to_json(self) -> bytes:
        record = asdict(self)
        record["payload"] = base64.b64encode(self.payload).decode()
        return json.dumps(record, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> DeadLetter:
        record = json.loads(data)
        record["payload"] = base64.b64decode(record["payload"])
        return cls(**record)

    def replay_headers(self, dead_sequence: int) -> dict[str, str]:
        """The headers of its replay: the original's, the payload unchanged (consumers dedupe on the event id in it:
        core.inbox), with a Nats-Msg-Id of the replay's own (`<original>.replay.<dead letter's sequence>`) so the
        stream's duplicate window does not drop it, while a second replay of the same dead letter within it is.
        A PROVIDER message keeps its id: the gateway signed it with the body (core.provider_proof), and its owner
        refuses a message whose proof does not verify."""
        headers = {**self.headers, REPLAY_HEADER: str(dead_sequence)}
        original = self.headers.get("Nats-Msg-Id")
        if original and provider_proof.HEADER not in self.headers:
            headers["Nats-Msg-Id"] = f"{original}.replay.{dead_sequence}"
        return headers

    def summary(self) -> dict[str, Any]:
        """What `list` shows of it."""
        return {"stream": self.stream, "consumer": self.consumer, "subject": self.subject, "sequence": self.sequence,
                "deliveries": self.deliveries, "error": f"{self.error_type}: {self.error}".lstrip(": "),
                "at": self.at}


def truncated(text: str, limit: int = ERROR_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def subject_matches(pattern: str, subject: str) -> bool:
    """NATS wildcard matching: `*` one token, `>` the rest (one token or more)."""
    tokens, parts = pattern.split("."), subject.split(".")
    for i, token in enumerate(tokens):
        if token == ">":
            return len(parts) > i
        if i >= len(parts) or (token != "*" and token != parts[i]):
            return False
    return len(parts) == len(tokens)


@dataclass(frozen=True)
class Filter:
    """Which dead letters an operator's command applies to (every one by default)."""

    stream: str | None = None
    consumer: str | None = None
    subject: str | None = None  # a NATS pattern of the original subject (`events.workspace.*`)
    error: str | None = None  # text in the error's type or message (any case)
    since: datetime | None = None
    until: datetime | None = None

    @property
    def dead_subject(self) -> str:
        """The subjects of DEADLETTERS to read: narrowed by stream and consumer when named."""
        return subject_of(self.stream or "*", self.consumer or "*")

    def matches(self, letter: DeadLetter) -> bool:
        at = datetime.fromisoformat(letter.at)
        return ((self.stream is None or letter.stream == self.stream)
                and (self.consumer is None or letter.consumer == self.consumer)
                and (self.subject is None or subject_matches(self.subject, letter.subject))
                and (self.error is None or self.error.lower() in f"{letter.error_type}: {letter.error}".lower())
                and (self.since is None or at >= self.since)
                and (self.until is None or at < self.until))


# -- on the stream (a JetStream context of an identity allowed DEADLETTERS: a consumer's process, the operator) ----

async def store(js: JetStreamContext, letter: DeadLetter, timeout: float) -> int:
    """Put the dead letter on DEADLETTERS, acknowledged by JetStream before this returns (raises otherwise); its
    sequence there (the first one's, when stored again within the duplicate window)."""
    ack = await js.publish(letter.dead_subject, letter.to_json(), stream=STREAM, timeout=timeout,
                           headers={"Nats-Msg-Id": letter.message_id})
    return ack.seq


async def stored(js: JetStreamContext, which: Filter) -> list[tuple[int, DeadLetter]]:
    """The dead letters `which` matches, oldest first, each with its sequence on DEADLETTERS."""
    found: list[tuple[int, DeadLetter]] = []
    sequence = 1
    while True:
        try:
            raw = await js.get_msg(STREAM, seq=sequence, subject=which.dead_subject, next=True)
        except NotFoundError:
            return found
        assert raw.seq is not None and raw.data is not None  # a stored message has both
        letter = DeadLetter.from_json(raw.data)
        if which.matches(letter):
            found.append((raw.seq, letter))
        sequence = raw.seq + 1


async def replay(js: JetStreamContext, dead_sequence: int, letter: DeadLetter, timeout: float) -> bool:
    """Publish the message again on its subject (its consumers get it again, with its deliveries counted anew), then
    drop the dead letter. False, the dead letter kept, when the stream dropped it as a duplicate (a PROVIDER message
    within its duplicate window: replay it a little later)."""
    ack = await js.publish(letter.subject, letter.payload, stream=letter.stream, timeout=timeout,
                           headers=letter.replay_headers(dead_sequence))
    if ack.duplicate:
        return False
    await js.delete_msg(STREAM, dead_sequence)
    return True


async def drop(js: JetStreamContext, dead_sequence: int) -> None:
    await js.delete_msg(STREAM, dead_sequence)
