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
