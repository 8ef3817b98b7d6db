"""NATS JetStream: the EVENTS and PROVIDER streams, publishing, and a durable consumer helper.

EVENTS subjects are `events.<type>` (e.g. `events.workspace.paused`). Messages carry the
JSON envelope, `Nats-Msg-Id = event_id` for broker-side dedup, and the W3C trace
context in headers.

PROVIDER holds the providers' webhook messages that need no answer (`provider.<provider>.<kind>`: the voice
provider's status updates and end-of-call reports, `provider.voice.messages`; SMS status callbacks,
`provider.sms.status`; payment events, `provider.payments.events`), stored by the gateway once it has verified
them (`EventBus.receive`, with `Nats-Msg-Id` = the provider's own identity of the message, else a hash of its
body), until the service that owns them has applied them from its durable consumer: a work queue, so an
acknowledged message is gone. Every provider webhook follows that one pattern (gateway.routes.providers); only
those whose answer the provider uses go to their owner over RPC instead. Each carries the gateway's signature
(core.provider_proof), checked by the consumer before its handler sees it.

Each process connects as its own NATS user (core.nats_auth: `login`), allowed what core.registry.BUS declares; it
creates only the streams it publishes to (`creates`) and waits for the others. Each stream is bounded (`max_age`,
`max_bytes` and what goes when full: settings NATS_EVENTS_*, NATS_PROVIDER_* and NATS_DEADLETTERS_*, `limits_of`),
and its creators give an existing stream the limits they were started with.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import nats
from google.protobuf.message import Message
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, DiscardPolicy, PubAck, RetentionPolicy, StreamConfig
from nats.js.errors import NotFoundError
from opentelemetry.trace import SpanKind

from core import costs, deadletters, events, metrics, nats_auth, provider_proof, registry, telemetry
from core.background import Background
from core.caller import KeyRing
from core.ids import is_uuid
from core.nats_auth import Login

if TYPE_CHECKING:
    from core.settings import Settings

log = logging.getLogger(__name__)

STREAM = registry.EVENTS_STREAM
SUBJECT_PREFIX = "events."
PROVIDER_STREAM = registry.PROVIDER_STREAM
PROVIDER_SUBJECT_PREFIX = "provider."
# Their limits come from the settings (limits_of); these are what the bus is started with otherwise (a test's).
STREAMS = {
    STREAM: StreamConfig(name=STREAM, subjects=[SUBJECT_PREFIX + ">"], duplicate_window=120.0),
    PROVIDER_STREAM: StreamConfig(name=PROVIDER_STREAM, subjects=[PROVIDER_SUBJECT_PREFIX + ">"],
                                  retention=RetentionPolicy.WORK_QUEUE, duplicate_window=120.0),
    registry.DEADLETTER_STREAM: deadletters.STREAM_CONFIG,
}


@dataclass(frozen=True)
class Limits:
    """What a stream keeps at most: messages younger than `max_age` seconds, `max_bytes` in all; `discard` says
    which go when it is full (OLD: the oldest; NEW: a new message is refused)."""
    max_age: float
    max_bytes: int
    discard: DiscardPolicy

    def differ(self, config: StreamConfig) -> bool:
        return (config.max_age, config.max_bytes, config.discard) != (self.max_age, self.max_bytes, self.discard)


def limits_of(settings: Settings) -> dict[str, Limits]:
    """Each stream's limits, from NATS_EVENTS_*, NATS_PROVIDER_* and NATS_DEADLETTERS_* (a full DEADLETTERS refuses
    a new dead letter: its message is retried on its own stream, never dropped)."""
    day = 24 * 3600.0
    return {STREAM: Limits(settings.nats_events_max_age_days * day, settings.nats_events_max_bytes,
                           DiscardPolicy(settings.nats_events_discard)),
            PROVIDER_STREAM: Limits(settings.nats_provider_max_age_days * day, settings.nats_provider_max_bytes,
                                    DiscardPolicy(settings.nats_provider_discard)),
            registry.DEADLETTER_STREAM: Limits(settings.nats_deadletters_max_age_days * day,
                                               settings.nats_deadletters_max_bytes, DiscardPolicy.NEW)}
# Publishes awaiting JetStream's acknowledgement at once, at most (nats-py's default, stated: publish_in_order
# reads it).
PUBLISH_ASYNC_MAX_PENDING = 4000
# Core NATS subject (not JetStream): gateways drop cached key principals of the account named in the message.
AUTH_INVALIDATE_SUBJECT = registry.AUTH_INVALIDATE_SUBJECT
_tracer = telemetry.tracer("switchboard.bus")


class HeardInvalidations:
    """Whether a cache that a NATS subscription keeps fresh (its messages say what to forget) may be used: only
    while connected, and not across a reconnection, when messages may have been missed: `forget` (which empties
    the cache) is called first. Until `attach` (subscribed) it is not to be used."""

    def __init__(self, forget: Callable[[], None]):
        self.forget = forget
        self.nc: Client | None = None
        self._reconnects = 0

    def attach(self, nc: Client) -> None:
        self.nc = nc
        self._reconnects = nc.stats["reconnects"]

    @property
    def trusted(self) -> bool:
        if self.nc is None or not self.nc.is_connected:
            return False
        reconnects = self.nc.stats["reconnects"]
        if reconnects != self._reconnects:
            self._reconnects = reconnects
            self.forget()
        return True


@dataclass(frozen=True)
class Outgoing:
    """A message for the EVENTS stream (EventBus.publish_in_order)."""
    event_type: str
    body: bytes
    event_id: str
    headers: dict[str, str]


@dataclass(frozen=True)
class Acknowledged:
    """What JetStream acknowledged of a batch (EventBus.publish_batch): `in_order` from the first on, up to the first
    not acknowledged; `later` after that one (stored, to be sent again for the order's sake: the stream drops the
    repeats by Nats-Msg-Id); `refusal`, why the first not acknowledged was not (None when all were)."""
    in_order: int
    later: int
    refusal: BaseException | None


def subject_for(event_type: str) -> str:
    return SUBJECT_PREFIX + event_type


def _tls(url: str, ca_file: str) -> ssl.SSLContext | None:
    """The TLS context of a tls:// URL: the server's certificate checked against `ca_file` (else the system's CAs)."""
    if not url.startswith("tls://") and not ca_file:
        return None
    return ssl.create_default_context(cafile=ca_file or None)


async def connect(url: str, name: str, login: Login | None = None, tls_ca: str = "") -> Client:
    """A connection that keeps reconnecting forever; callers survive NATS restarts. `login`: the identity it signs
    in as (core.nats_auth); `tls_ca`: the CA of the server's certificate (NATS_TLS_CA)."""

    last_warning = 0.0

    async def on_error(exc: Exception) -> None:
        if "permissions violation" in str(exc).lower():  # a subject core.registry.BUS does not declare
            log.error("%s: NATS refused: %s", name, exc)
            return
        # nats-py reports every failed (re)connect attempt here, twice a second while NATS is
        # down: say so at most every 10 seconds, in one short line.
        nonlocal last_warning
        now = time.monotonic()
        if now - last_warning >= 10:
            last_warning = now
            log.warning("%s: NATS at %s unreachable, retrying: %s", name, url, exc or type(exc).__name__)

    return await nats.connect(
        url,
        name=name,
        max_reconnect_attempts=-1,
        reconnect_time_wait=0.5,
        connect_timeout=2,
        error_cb=on_error,
        allow_reconnect=True,
        tls=_tls(url, tls_ca),
        **(login.options() if login else {}),
    )


def _requires_sign_in(nc: Client) -> bool:
    """Whether the server requires clients to authenticate (its INFO says so; nats-py keeps it only privately). A
    server that does not would take anyone's messages, whatever the platform's processes sign in as."""
    return bool(getattr(nc, "_server_info", {}).get("auth_required"))


class EventBus:
    """Publishes to the EVENTS stream (and the gateway to PROVIDER); creates the streams of `creates` when missing.

    `start()` returns at once: the connection is made (and remade) in the
    background, so a service starts and accepts writes while NATS is down;
    publishing raises `ConnectionError` until it is back. With a `login`, a server that lets anyone in is not used
    (as if down, with an error logged): the platform's permissions would mean nothing there.

    `keys`: the process's caller-context keys (core.caller), with which the gateway signs what it stores on PROVIDER
    and its consumers verify it (core.provider_proof).
    """

    def __init__(self, url: str, name: str, publish_timeout: float = 2.0, stream_replicas: int = 1, *,
                 login: Login | None = None, keys: KeyRing | None = None,
                 creates: tuple[str, ...] = (STREAM, PROVIDER_STREAM), tls_ca: str = "",
                 limits: dict[str, Limits] | None = None):
        self.url = url
        self.limits = limits or {}
        self.name = name
        self.login = login
        self.keys = keys
        self.creates = creates
        self.tls_ca = tls_ca
        self.stream_replicas = stream_replicas
        self.nc: Client | None = None
        self.js: JetStreamContext | None = None
        self.publish_timeout = publish_timeout
        self._streams_ready: set[str] = set()
        self._connecting: asyncio.Task[None] | None = None

    @classmethod
    def of(cls, settings: Settings, process: str, keys: KeyRing, connection_name: str | None = None) -> EventBus:
        """The bus of a registered process: signed in as its NATS user, creating the streams it publishes to."""
        use = registry.BUS.get(process, registry.BusUse())
        return cls(settings.nats_url, connection_name or process, stream_replicas=settings.nats_stream_replicas,
                   login=nats_auth.login_of(settings, process), keys=keys, creates=use.creates,
                   tls_ca=settings.nats_tls_ca, limits=limits_of(settings))

    @property
    def is_connected(self) -> bool:
        return self.nc is not None and self.nc.is_connected

    @property
    def connection(self) -> Client:
        """The NATS connection, once `wait_connected` has seen it made."""
        if self.nc is None:
            raise RuntimeError(f"{self.name}: not connected to NATS yet (await wait_connected first)")
        return self.nc

    async def _connect_until_up(self) -> None:
        while self.nc is None:
            try:
                nc = await connect(self.url, self.name, self.login, self.tls_ca)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried until NATS answers
                log.warning("nats %s unreachable (%s); retrying", self.url, exc)
                await asyncio.sleep(1.0)
                continue
            if self.login is not None and not _requires_sign_in(nc):
                await nc.close()
                log.error("%s: NATS at %s lets anyone connect without signing in: not used until it has the "
                          "platform's users (core.nats_auth; deploy/nats-auth-values.generated.yaml)", self.name,
                          self.url)
                await asyncio.sleep(5.0)
                continue
            self.js = nc.jetstream(timeout=self.publish_timeout, publish_async_max_pending=PUBLISH_ASYNC_MAX_PENDING)
            self.nc = nc
            for stream in self.creates:
                try:
                    await self.ensure_stream(stream)
                except Exception as exc:  # noqa: BLE001 - retried on first publish
                    log.warning("could not create stream %s yet: %s", stream, exc)

    def start(self) -> asyncio.Task[None]:
        """The task that connects (started on the first call)."""
        if self._connecting is None:
            self._connecting = asyncio.create_task(self._connect_until_up(), name=f"nats-{self.name}")
        return self._connecting

    async def wait_connected(self, timeout: float) -> bool:
        connecting = self.start()
        try:
            await asyncio.wait_for(asyncio.shield(connecting), timeout)
        except TimeoutError:
            return False
        return self.is_connected

    async def close(self) -> None:
        if self._connecting and not self._connecting.done():
            self._connecting.cancel()
        if self.nc is not None:
            # Publishes are acknowledged by JetStream before they return, so nothing is left to drain.
            await self.nc.close()

    def _config(self, name: str) -> StreamConfig:
        """The stream's configuration (STREAMS) with `stream_replicas` copies and this bus's limits for it."""
        config = dataclasses.replace(STREAMS[name], num_replicas=self.stream_replicas)
        limits = self.limits.get(name)
        if limits is None:
            return config
        return dataclasses.replace(config, max_age=limits.max_age, max_bytes=limits.max_bytes, discard=limits.discard)

    async def ensure_stream(self, name: str = STREAM) -> None:
        """Create the stream (of STREAMS, with `stream_replicas` copies and its `limits`) unless it exists, when
        this process is one of its creators (else ConnectionError until they have). A creator gives an existing
        stream its limits when they differ (logged); the stream keeps its copies (a warning says when they differ:
        `nats stream edit --replicas` changes them)."""
        if name in self._streams_ready:
            return
        if self.js is None:
            raise ConnectionError("not connected to NATS")
        try:
            info = await self.js.stream_info(name)
            if info.config.num_replicas != self.stream_replicas:
                log.warning("stream %s keeps %s copies, not the %s of NATS_STREAM_REPLICAS", name,
                            info.config.num_replicas, self.stream_replicas)
            limits = self.limits.get(name)
            if name in self.creates and limits is not None and limits.differ(info.config):
                log.info("stream %s: limits set to max_age %gs, max_bytes %d, discard %s", name, limits.max_age,
                         limits.max_bytes, limits.discard.value)
                await self.js.update_stream(dataclasses.replace(info.config, max_age=limits.max_age,
                                                                max_bytes=limits.max_bytes, discard=limits.discard))
        except NotFoundError:
            if name not in self.creates:
                raise ConnectionError(f"stream {name} does not exist yet (its publishers create it)") from None
            await self.js.add_stream(self._config(name))
        self._streams_ready.add(name)

    async def receive(self, subject: str, body: bytes, message_id: str) -> None:
        """Store a provider's message on the PROVIDER stream, acknowledged by JetStream before this returns (a
        repeat of `message_id` within the duplicate window is dropped). Raises ConnectionError when NATS does not
        take it, so that the provider is told to try again."""
        js = self.js  # set before the connection is
        if js is None or not self.is_connected:
            raise ConnectionError("not connected to NATS")
        costs.count(costs.PUBLISH, subject)
        headers = {**costs.carried(), "Nats-Msg-Id": message_id}
        if self.keys is not None:
            headers[provider_proof.HEADER] = provider_proof.sign(self.keys, subject, message_id, body)
        try:
            await self.ensure_stream(PROVIDER_STREAM)
            with telemetry.producer_span(_tracer, subject, headers):
                await js.publish(subject, body, stream=PROVIDER_STREAM, timeout=self.publish_timeout, headers=headers)
        except (TimeoutError, nats.errors.Error) as exc:
            raise ConnectionError(f"NATS did not store the message: {exc or type(exc).__name__}") from None

    async def publish_in_order(self, messages: list[Outgoing]) -> int:
        """Publish messages in this order without waiting for each acknowledgement (written to the connection
        together), then wait (publish_timeout) for them all; returns how many from the first on JetStream
        acknowledged. The count stops at the first failure, so a caller that sends the rest again keeps their order
        (and the broker drops, by Nats-Msg-Id, any of the rest it had stored after all). Raises ConnectionError when
        none went out."""
        return (await self.publish_batch(messages)).in_order

    async def publish_batch(self, messages: list[Outgoing]) -> Acknowledged:
        """`publish_in_order`, telling also how many of those after the first failure JetStream acknowledged and
        why that one failed: the outbox relay's evidence that one event is refused while the bus takes others
        (core.outbox.poisoned)."""
        js = self.js  # set before the connection is
        if js is None or not self.is_connected:
            raise ConnectionError("not connected to NATS")
        await self.ensure_stream()
        acks: list[asyncio.Future[PubAck]] = []
        stopped: BaseException | None = None
        try:
            for m in messages:
                costs.count(costs.PUBLISH, m.event_type)
                # Only a stall is waited for with a time-out: on Python 3.11 such a wait runs as a task, even when
                # it does not wait, and lets the client write each message to the socket alone (one system call
                # each, and as many reads for the server); without it a batch goes out in one write.
                stall = None if js.publish_async_pending() < PUBLISH_ASYNC_MAX_PENDING else self.publish_timeout
                subject, headers = subject_for(m.event_type), {**m.headers, "Nats-Msg-Id": m.event_id}
                # the outbox row's headers hold the trace of the change that wrote the event
                with telemetry.producer_span(_tracer, subject, headers, parent=m.headers):
                    acks.append(await js.publish_async(subject, m.body, wait_stall=stall, headers=headers))
        except Exception as exc:  # noqa: BLE001 - disconnected or stalled: wait for what went out
            log.warning("publishing stopped after %d of %d messages: %s", len(acks), len(messages), exc)
            stopped = exc
        if not acks:
            raise ConnectionError("event bus unavailable")
        await asyncio.wait(acks, timeout=self.publish_timeout)
        acknowledged = 0
        for ack in acks:
            if not ack.done() or ack.cancelled() or ack.exception() is not None:
                break
            acknowledged += 1
        refusal: BaseException | None = stopped
        if acknowledged < len(acks):
            refusal = self._refusal(acks[acknowledged], subject_for(messages[acknowledged].event_type))
        later = sum(1 for ack in acks[acknowledged + 1:]
                    if ack.done() and not ack.cancelled() and ack.exception() is None)
        for ack in acks:
            ack.cancel()  # no-op for those done; frees the client's slots for the others
        return Acknowledged(acknowledged, later, refusal if acknowledged < len(messages) else None)

    def _refusal(self, ack: asyncio.Future[PubAck], subject: str) -> BaseException:
        """Why a message was not acknowledged: JetStream's error, else the server's permissions violation for its
        subject (the server drops such a message, says so on the connection, and no acknowledgement comes), else
        the silence."""
        if ack.done() and not ack.cancelled() and ack.exception() is not None:
            return cast(BaseException, ack.exception())
        last = self.nc.last_error if self.nc is not None else None
        if last is not None and f'"{subject}"' in str(last):
            return last
        return TimeoutError(f"no acknowledgement within {self.publish_timeout:g} s")


class PermanentError(Exception):
    """Raised by a handler for an event that can never be processed: it is terminated, not retried."""


Handler = Callable[[dict[str, Any]], Awaitable[None]]
BatchHandler = Callable[[list[dict[str, Any]]], Awaitable[None]]


def business_event(message: dict[str, Any]) -> tuple[events.Envelope, Message]:
    """A bus message as its envelope and typed payload (core.events), for a consumer of one business's events;
    PermanentError when it is malformed or names no business (it can never be processed)."""
    try:
        event = events.Envelope.from_json(message)
        payload = events.parse(event.type, event.data)
    except (ValueError, LookupError, KeyError) as exc:
        raise PermanentError(str(exc)) from None
    if not is_uuid(event.business_id or ""):
        raise PermanentError(f"{event.type} without a business_id")
    return event, payload


class DurableConsumer(Background):
    """A durable pull consumer on EVENTS (or `stream`) that acks, naks with backoff, or gives up.

    A failed delivery is retried after `retry_seconds`, twice as long each time up to a minute; the consumer gives
    up on a message when its `max_deliver`th delivery fails (0: never), when it comes past that count with no
    outcome (whoever had its last delivery died or hung), or when it can never be applied (PermanentError,
    undecodable, unproven): the message is stored as a dead letter (core.deadletters), counted, then terminated.
    JetStream's own limit is off (max_deliver -1), so no message is dropped without one.

    Handlers must be idempotent (delivery is at-least-once): dedupe on
    `event["event_id"]`, e.g. with `core.inbox.first_delivery` in the same
    transaction as the handler's effect.

    `batched=True`: the handler takes a list of events in stream order, and a fetched batch is applied in one
    call, typically one transaction, and acked together; if that call fails, each event of the batch is handled
    alone (a list of one), in order, so one bad event is retried or terminated without holding back the others.
    """

    def __init__(self, bus: EventBus, durable: str, handler: Handler | BatchHandler, *,
                 filter_subject: str = SUBJECT_PREFIX + ">", batch: int = 20, max_deliver: int = 20,
                 retry_seconds: float = 0.5, ack_wait: float = 30.0, batched: bool = False, stream: str = STREAM):
        self.bus = bus
        self.stream = stream
        self.durable = durable
        self.handler = handler
        self.batched = batched
        self.filter_subject = filter_subject
        self.batch = batch
        self.max_deliver = max_deliver
        self.retry_seconds = retry_seconds
        self.task_name = f"consumer-{durable}"
        self.tracer = telemetry.tracer("switchboard.consumer")
        # nats-py creates it by name (CONSUMER.CREATE.<stream>.<durable>.<filter>: the subject the process's NATS
        # user is allowed, core.nats_auth, which pins the filter)
        self.config = ConsumerConfig(durable_name=durable, ack_policy=AckPolicy.EXPLICIT, max_deliver=-1,
                                     ack_wait=ack_wait, filter_subject=filter_subject)

    async def _decoded(self, msg: Msg) -> dict[str, Any] | None:
        """The message's event, or None once the consumer gave up on it: delivered past max_deliver with no outcome,
        undecodable, or a PROVIDER message without the gateway's proof (core.provider_proof)."""
        delivered = _deliveries(msg)
        if 0 < self.max_deliver < delivered:
            await self._give_up(msg, f"delivered {delivered} times with no outcome: whoever had its last delivery "
                                     "stopped, or took longer than ack_wait")
            return None
        if self.stream == PROVIDER_STREAM:
            refused = self._unproven(msg)
            if refused is not None:
                await self._give_up(msg, f"without the gateway's proof: {refused}")
                return None
        try:
            event: dict[str, Any] = json.loads(msg.data)
            return event
        except ValueError as exc:
            await self._give_up(msg, exc)
            return None

    async def _give_up(self, msg: Msg, error: BaseException | str) -> None:
        """Store the message as a dead letter, count it, then terminate it; when the dead letter cannot be stored
        (NATS away), the message is retried later instead."""
        letter = deadletters.DeadLetter.of(msg, self.durable, error, datetime.now(UTC))
        try:
            await self.bus.ensure_stream(registry.DEADLETTER_STREAM)
            await deadletters.store(cast(JetStreamContext, self.bus.js), letter, self.bus.publish_timeout)
        except Exception as exc:  # noqa: BLE001 - kept on its stream and retried, never dropped
            log.error("consumer %s: could not store the dead letter of %s #%s (%s); retried", self.durable,
                      self.stream, letter.sequence, exc)
            await msg.nak(delay=self._retry_delay(letter.deliveries))
            return
        log.error("consumer %s: gave up on %s #%s (%s, %d deliveries): %s: %s; stored on %s", self.durable,
                  self.stream, letter.sequence, msg.subject, letter.deliveries, letter.error_type or "refused",
                  letter.error, letter.dead_subject)
        instruments = metrics.current()
        if instruments is not None:
            instruments.dead_letters.add(1, {"stream": self.stream, "consumer": self.durable})
        await msg.term()

    def _retry_delay(self, attempt: int) -> float:
        return min(self.retry_seconds * 2.0 ** min(attempt - 1, 7), 60.0)

    def _unproven(self, msg: Msg) -> str | None:
        if self.bus.keys is None:
            return "this process holds no keys to check the gateway's signature with"
        headers = msg.headers or {}
        return provider_proof.refusal(self.bus.keys, msg.subject, headers.get("Nats-Msg-Id", ""), msg.data,
                                      headers.get(provider_proof.HEADER))

    async def _handle(self, msg: Msg, event: dict[str, Any]) -> None:
        try:
            with telemetry.continue_trace(self.tracer, f"process {msg.subject}", msg.headers or {},
                                          kind=SpanKind.CONSUMER, attributes=telemetry.messaging(msg.subject, "process")), \
                    costs.tagged(costs.tag_of(msg.headers)):
                if self.batched:  # `batched` says which of the two kinds the handler is
                    await cast(BatchHandler, self.handler)([event])
                else:
                    await cast(Handler, self.handler)(event)
        except PermanentError as exc:
            await self._give_up(msg, exc)
        except Exception as exc:  # noqa: BLE001 - retried with backoff, until its last delivery
            attempt = _deliveries(msg)
            if 0 < self.max_deliver <= attempt:
                await self._give_up(msg, exc)
                return
            delay = self._retry_delay(attempt)
            log.warning("consumer %s: event %s failed (attempt %s), retry in %.1fs: %s",
                        self.durable, event.get("event_id"), attempt, delay, exc)
            await msg.nak(delay=delay)
        else:
            await msg.ack()

    async def _handle_batch(self, decoded: list[tuple[Msg, dict[str, Any]]]) -> None:
        try:
            with telemetry.continue_batch(self.tracer, f"process {self.filter_subject}",
                                          [m.headers or {} for m, _ in decoded],
                                          attributes={**telemetry.messaging(self.filter_subject, "process"),
                                                      "messaging.batch.message_count": len(decoded),
                                                      "messaging.consumer.group.name": self.durable}), \
                    costs.tagged(costs.tag_of(decoded[0][0].headers)):
                await cast(BatchHandler, self.handler)([event for _, event in decoded])  # only when batched
        except Exception as exc:  # noqa: BLE001 - isolate the failing event(s)
            log.warning("consumer %s: a batch of %d failed (%s); handling its events one by one",
                        self.durable, len(decoded), exc)
            for msg, event in decoded:
                await self._handle(msg, event)
            return
        for msg, _ in decoded:
            await msg.ack()

    async def _reconcile(self, js: JetStreamContext) -> None:
        """Give a consumer an earlier release made this one's limits: nats-py binds to an existing consumer as it
        is, and one left with JetStream's own max_deliver (20 before dead letters) would drop a message this code
        dead-letters, or after fewer tries than CONSUMER_MAX_DELIVER allows."""
        try:
            info = await js.consumer_info(self.stream, self.durable)
        except NotFoundError:
            return
        if info.config.max_deliver != self.config.max_deliver or info.config.ack_wait != self.config.ack_wait:
            log.info("consumer %s: max_deliver %s and ack_wait %s updated to %s and %s", self.durable,
                     info.config.max_deliver, info.config.ack_wait, self.config.max_deliver, self.config.ack_wait)
            await js.add_consumer(self.stream, config=self.config)

    async def run(self) -> None:
        sub = None
        while sub is None:
            try:
                self.bus.start()
                await self.bus.ensure_stream(self.stream)  # raises ConnectionError while not connected
                js = cast(JetStreamContext, self.bus.js)  # so it is set
                await self._reconcile(js)
                sub = await js.pull_subscribe(self.filter_subject, durable=self.durable, stream=self.stream,
                                              config=self.config)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - NATS not there yet
                log.warning("consumer %s: cannot subscribe yet: %s", self.durable, exc)
                await asyncio.sleep(1.0)
        while True:
            try:
                msgs = await sub.fetch(self.batch, timeout=1.0)
            except asyncio.CancelledError:
                raise
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            except Exception as exc:  # noqa: BLE001 - disconnected: wait for the reconnect
                log.warning("consumer %s: fetch failed: %s", self.durable, exc)
                await asyncio.sleep(0.5)
                continue
            decoded = [(msg, event) for msg in msgs if (event := await self._decoded(msg)) is not None]
            for run in costs.by_tag(decoded, lambda d: d[0].headers) if self.batched else [decoded]:
                if self.batched and len(run) > 1:
                    await self._handle_batch(run)
                else:
                    for msg, event in run:
                        await self._handle(msg, event)



def _deliveries(msg: Msg) -> int:
    """Which delivery of the message this is (1 for the first)."""
    return msg.metadata.num_delivered if msg.metadata else 1


async def pending_counts(bus: EventBus, consumers: list[DurableConsumer]) -> list[tuple[float, dict[str, str]]]:
    """Each consumer's messages not yet delivered (`state: pending`) and delivered but not yet acknowledged
    (`state: unacknowledged`), as JetStream's consumer info tells: a metrics probe (core.metrics.Sampler). Raises
    while NATS is away, or a consumer is not subscribed yet."""
    js = bus.js
    if js is None or not bus.is_connected:
        raise ConnectionError("not connected to NATS")
    sample: list[tuple[float, dict[str, str]]] = []
    for consumer in consumers:
        info = await js.consumer_info(consumer.stream, consumer.durable)
        where = {"stream": consumer.stream, "consumer": consumer.durable}
        sample += [(float(info.num_pending or 0), {**where, "state": "pending"}),
                   (float(info.num_ack_pending or 0), {**where, "state": "unacknowledged"})]
    return sample
