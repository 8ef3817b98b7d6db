"""A process's components stop within the time its pod's grace period counts for them (core.grpc_server.stop_within):
one that hangs is left behind, named in a warning, and those after it still stop."""
import asyncio
import logging

from core.grpc_server import STEP_FLOOR, stop_within


async def test_a_hung_step_is_left_behind_and_the_next_still_run(caplog):
    stopped = []

    async def hangs() -> None:
        await asyncio.Event().wait()

    async def closes() -> None:
        stopped.append("closes")

    loop = asyncio.get_running_loop()
    began = loop.time()
    with caplog.at_level(logging.WARNING, "core.grpc_server"):
        await stop_within("accounts", [hangs, closes, closes], 1.0)
    took = loop.time() - began
    assert stopped == ["closes", "closes"]
    assert 1.0 <= took < 1.0 + 2 * STEP_FLOOR + 1.0  # the budget, not the hung step's forever
    assert [r.getMessage() for r in caplog.records] == [
        "accounts: test_a_hung_step_is_left_behind_and_the_next_still_run.<locals>.hangs did not finish within the "
        "1 s a stop is given; left behind"]


async def test_steps_that_finish_in_time_run_in_order_with_no_warning(caplog):
    order = []

    def step(name):
        async def run() -> None:
            await asyncio.sleep(0.01)
            order.append(name)
        return run

    with caplog.at_level(logging.WARNING, "core.grpc_server"):
        await stop_within("calls", [step("relay"), step("bus"), step("pool")], 5.0)
    assert order == ["relay", "bus", "pool"] and not caplog.records
