"""Usage log, written behind: requests enqueue an entry and never wait for the database.

A background task sends batches to the accounts service every second (or as soon
as a batch fills). If accounts is unreachable the batch is kept and retried; the
queue is bounded, and entries beyond it are dropped and counted in the log.

A batch refused as malformed (INVALID_ARGUMENT) could never be stored: it is dropped
with an error log. Any other failure is of the moment (accounts unreachable, a deadline,
an internal error such as its database restarting) and the batch is sent again, with
the same entry ids: accounts stores an id once, so a batch it stored but whose answer
was lost is answered OK the second time and adds nothing.

A retry waits for the accounts channel to be ready (gRPC's wait_for_ready) rather
than failing at once and sleeping: the batch goes out the moment accounts answers
again. (It used to sleep 0.5, 1, 2, 4, 8 s between attempts that failed at once, so
requests made while accounts was starting appeared in the log only ~15 s later.)
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import grpc

from core.background import Background
from core.ids import new_id
from core.rpc import Client
from gateway.auth import Principal
from switchboard.v1 import accounts_pb2

log = logging.getLogger(__name__)

# A send waits this long for accounts to be reachable before it is tried again (and logged).
RETRY_WAIT_SECONDS = 5.0
RETRY_PAUSE_SECONDS = 0.2
# A request as queued: (principal, endpoint, method, status code, call id, cost in cents, Unix time).
_Pending = tuple[Principal, str, str, int, str | None, int, float]


class UsageWriter(Background):
    task_name = "usage-writer"

    def __init__(self, stub: Client, *, batch: int = 500, interval: float = 1.0, max_queue: int = 50_000):
        self.stub = stub
        self.batch = batch
        self.interval = interval
        self.queue: asyncio.Queue[_Pending] = asyncio.Queue(max_queue)
        self.dropped = 0
        self._stopping = asyncio.Event()

    def record(self, principal: Principal, endpoint: str, method: str, status_code: int, call_id: str | None = None,
               cost_cents: int = 0) -> None:
        """Queue an entry; the proto is built off the request path, in the flush task."""
        try:
            self.queue.put_nowait((principal, endpoint, method, status_code, call_id, cost_cents, time.time()))
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                log.warning("usage log queue full; %d entries dropped so far", self.dropped)

    @staticmethod
    def _entry(item: _Pending) -> accounts_pb2.UsageEntry:
        principal, endpoint, method, status_code, call_id, cost_cents, at = item
        entry = accounts_pb2.UsageEntry(id=new_id(), endpoint=endpoint, method=method, status_code=status_code,
                                        cost_cents=cost_cents, api_key_id=principal.key_id,
                                        account_id=principal.account_id)
        if principal.bound_business_id:
            entry.business_id = principal.bound_business_id
        if call_id:
            entry.call_id = call_id
        entry.created_at.FromNanoseconds(int(at * 1e9))
        return entry

    def _drain(self) -> list[accounts_pb2.UsageEntry]:
        entries: list[accounts_pb2.UsageEntry] = []
        while len(entries) < self.batch and not self.queue.empty():
            entries.append(self._entry(self.queue.get_nowait()))
        return entries

    async def _send(self, entries: list[Any]) -> None:
        request = accounts_pb2.RecordUsageRequest(entries=entries)
        while True:
            try:
                await self.stub.RecordUsage(request, wait_for_ready=True, timeout=RETRY_WAIT_SECONDS)
                return
            except asyncio.CancelledError:
                raise
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:  # never storable: retrying would block the log
                    log.error("usage log: batch of %d refused and dropped: %s", len(entries), exc.details())
                    return
                reason = exc.code().name
            except Exception as exc:  # noqa: BLE001 - keep the batch, retry
                reason = str(exc)
            log.warning("usage log: batch of %d not stored (%s); retrying", len(entries), reason)
            await asyncio.sleep(RETRY_PAUSE_SECONDS)  # an error that is not a wait (e.g. refused mid-call)

    async def run(self) -> None:
        """Send what is queued every `interval`; once stopping, send the rest and end."""
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.interval)
            while entries := self._drain():
                await self._send(entries)

    async def stop(self) -> None:
        """Flush on shutdown. The loop is asked to finish rather than cancelled: a batch already taken
        off the queue and in flight would otherwise be lost."""
        self._stopping.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 5.0)
        except Exception as exc:  # noqa: BLE001 - shutting down, incl. the timeout
            log.warning("usage log: %d entries not flushed at shutdown (%s)", self.queue.qsize(), exc)
        await super().stop()
