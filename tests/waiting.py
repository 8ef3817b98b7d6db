"""Waiting for what the stack does behind a request: poll a probe until its value is the one a test waits for."""
import asyncio
import inspect
import time


async def wait_until(probe, what: str, predicate=bool, *, timeout: float = 10.0, interval: float = 0.1):
    """Call `probe()` (a coroutine function or a plain one) every `interval` seconds until `predicate` holds for
    its value (truthy by default), and return that value; after `timeout` seconds, an AssertionError naming `what`
    and the last value seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if predicate(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; the last value: {value!r}")
        await asyncio.sleep(interval)
