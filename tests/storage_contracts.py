"""What the storage a use case reaches does, whichever keeps it: the same tests run on the fast tier's unit of
work in memory (tests/memory; tests/unit/test_memory_database.py) and on core.uow.Database over the stack's
PostgreSQL (tests/integration/test_unit_of_work.py), so the two cannot drift apart.

A contract is a class of tests with no `Test` prefix (pytest collects it only where a module subclasses it); the
subclass gives the fixtures `database` (a core.uow.UnitOfWork) and the repository on its handle (`calls_in`,
...). Every test works in businesses and accounts of its own, as the SQL ones share the stack's database."""
from __future__ import annotations

import asyncio
import logging

import pytest

from core import uow
from core.uow import ProviderCallInTransaction
from providers.voice.client import VapiClient


class UnitOfWorkContract:
    """core.uow.UnitOfWork: the provider-call guard while a transaction or a read is open."""

    async def test_a_provider_call_inside_a_unit_of_work_fails_loudly_and_outside_it_is_sent(self, database):
        voice = VapiClient("http://127.0.0.1:9", "key", max_attempts=1)  # nothing listens: a sent request fails
        try:
            for unit in (database.transaction, database.read):
                async with unit():
                    with pytest.raises(ProviderCallInTransaction, match="VapiClient was called while a database"):
                        await voice.get_call("call-1")
            with pytest.raises(Exception) as sent:  # outside: the request goes out (and finds nobody)
                await voice.get_call("call-1")
            assert not isinstance(sent.value, ProviderCallInTransaction)
        finally:
            await voice.close()

    async def test_a_task_started_inside_a_unit_may_call_providers_once_the_unit_ended(self, database):
        ended = asyncio.Event()

        async def later() -> tuple[str | None, str | None]:
            inside = uow.open_unit()
            await ended.wait()
            return inside, uow.open_unit()

        async with database.transaction():
            task = asyncio.create_task(later())
            await asyncio.sleep(0)
        ended.set()
        assert await task == ("transaction", None)

    async def test_production_logs_a_provider_call_in_a_unit_instead_of_failing_the_request(self, database, caplog):
        uow.configure_guard(strict=False)
        try:
            async with database.read():
                with caplog.at_level(logging.ERROR, logger="core.uow"):
                    uow.forbid_provider_call("the payments provider")
        finally:
            uow.configure_guard(strict=True)
        assert "the payments provider was called while a database read is open" in caplog.text

