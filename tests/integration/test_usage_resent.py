"""A usage batch the gateway resends (issue 55's soak): accounts stored it, but its answer was lost (accounts killed
right after the commit, or the gateway's deadline passed), so the same ids come again. Each is stored once and the
batch is answered OK, so the gateway's writer moves on instead of retrying the batch for ever and logging nothing
more."""
import asyncio
import uuid
from datetime import timedelta

import asyncpg
import pytest

from core import registry, rpc, settings
from core.ids import new_id, utcnow
from gateway.usage import UsageWriter
from switchboard.v1 import accounts_pb2, accounts_pb2_grpc
from tests.tenants import act_as


@pytest.fixture
async def accounts(stack):
    """The accounts service's client as the gateway's usage writer has it."""
    act_as(stack)
    async with rpc.channel(f"127.0.0.1:{stack.process('accounts').port}", settings.load()) as channel:
        yield rpc.Client(accounts_pb2_grpc.AccountsStub(channel), registry.service("accounts").descriptor(), "accounts")


def entries(account_id: str, count: int) -> list[accounts_pb2.UsageEntry]:
    """Requests of one key as the gateway logs them, each with the id the gateway made."""
    key_id, made = str(uuid.uuid4()), []
    for n in range(count):
        entry = accounts_pb2.UsageEntry(id=new_id(), account_id=account_id, api_key_id=key_id,
                                        endpoint="/api/v1/calls", method="POST", status_code=201)
        entry.created_at.FromDatetime(utcnow() - timedelta(seconds=n))
        made.append(entry)
    return made


async def test_a_resent_batch_is_answered_ok_and_stores_each_entry_once(accounts, stack):
    account_id = str(uuid.uuid4())
    batch = entries(account_id, 4)
    first = accounts_pb2.RecordUsageRequest(entries=batch[:3])
    assert (await accounts.RecordUsage(first)).recorded == 3
    assert (await accounts.RecordUsage(first)).recorded == 0  # the same batch again: OK, nothing new
    assert (await accounts.RecordUsage(accounts_pb2.RecordUsageRequest(entries=batch))).recorded == 1
    # the writer's own resend ends at once (it retried a duplicate for ever: INTERNAL is a failure of the moment)
    await asyncio.wait_for(UsageWriter(accounts)._send(batch), 5.0)
    conn = await asyncpg.connect(stack.database_url)
    try:
        stored = await conn.fetchval("SELECT array_agg(id::text) FROM accounts.usage_log WHERE account_id = $1",
                                     uuid.UUID(account_id))
    finally:
        await conn.close()
    assert sorted(stored) == sorted(e.id for e in batch)
