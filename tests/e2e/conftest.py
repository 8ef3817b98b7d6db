"""Fixtures of the end-to-end tests beyond the stack's own (tests/conftest.py)."""
import aiohttp
import pytest

from tests.billing import Payments


@pytest.fixture
async def payments(stack):
    """The payment-provider simulator the stack runs; its faults cleared afterwards."""
    async with aiohttp.ClientSession() as session:
        sim = Payments(session, f"http://127.0.0.1:{stack.process('payments-simulator').port}")
        yield sim
        await sim.control("DELETE", "/faults")


@pytest.fixture
async def held_pool(db):
    """Every free number of the pool held back (blocked) until released (`await held_pool()`, or the test's end):
    what the pool buys meanwhile is free."""
    held = [r["phone_number"] for r in await db.fetch(
        "UPDATE agents.phone_numbers SET blocked = true, block_reason = 'held by a test' "
        "WHERE business_id IS NULL AND NOT blocked RETURNING phone_number")]

    async def release():
        await db.execute("UPDATE agents.phone_numbers SET blocked = false, block_reason = NULL "
                         "WHERE phone_number = ANY($1::text[])", held)
        held.clear()
    try:
        yield release
    finally:
        await release()
