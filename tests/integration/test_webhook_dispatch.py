"""Nothing is lost on the way to a receiver: a dispatcher killed mid-delivery, NATS restarted while
events are written, and two dispatchers sharing the stream without double-sending."""
import asyncio
import signal

import pytest

from deploy.local.servers import stop_process
from tests.lead_events import lead_ids, lead_named, subscribe
from tests.receiver import Receiver, settled_deliveries
from tests.waiting import wait_until

DISPATCHER = "webhooks-dispatcher"


async def test_a_dispatcher_killed_mid_delivery_loses_nothing(api, account, stack):
    receiver = await Receiver(delay_first=8).start()  # the first request hangs: the dispatcher dies meanwhile
    try:
        await subscribe(api, account, receiver.url)
        lead = await lead_named(api, account, "Survivor")
        await asyncio.wait_for(receiver.arrived.wait(), 20)
        dispatcher = stack.process(DISPATCHER)
        dispatcher.proc.send_signal(signal.SIGKILL)
        dispatcher.proc.wait(10)
        stack.spawn(dispatcher)  # its claim was a lease: due again once the lease ends
        await wait_until(lambda: receiver.requests, "the delivery to be tried again",
                         lambda requests: len(requests) >= 2, timeout=20, interval=0.05)
        assert lead_ids(receiver) == {lead}
        deliveries = await settled_deliveries(api, account["key"], 1)
        assert [d["status"] for d in deliveries] == ["delivered"] and deliveries[0]["attempts"] == 2
    finally:
        await receiver.stop()


async def test_events_written_while_nats_is_down_are_all_delivered(api, account, stack):
    if stack.nats is None:
        pytest.skip("NATS_URL points at an external server this test cannot stop")
    receiver = await Receiver().start()
    try:
        await subscribe(api, account, receiver.url)
        before = await lead_named(api, account, "Before")
        await receiver.wait_for(1)
        port = stack.nats.port
        stack.nats.stop()
        try:
            during = [await lead_named(api, account, f"During {i}") for i in range(3)]
        finally:
            stack.nats.start(port=port)
        after = await lead_named(api, account, "After")
        await receiver.wait_for(5, timeout=60)
        assert lead_ids(receiver) == {before, *during, after}
    finally:
        await receiver.stop()
        stack.wait_ready(30)


async def test_two_dispatchers_share_the_stream_without_double_sending(api, account, stack):
    receiver = await Receiver().start()
    second = await asyncio.to_thread(stack.add_replica, DISPATCHER, f"{DISPATCHER}-2")  # serving: it runs
    try:
        await subscribe(api, account, receiver.url)
        made = await asyncio.gather(*(lead_named(api, account, f"Lead {i}") for i in range(20)))
        await receiver.wait_for(20, timeout=60)
        await asyncio.sleep(1.0)  # a double send would have arrived by now
        assert lead_ids(receiver) == set(made)
        assert len(receiver.requests) == 20
        assert second.proc.poll() is None, f"the second dispatcher exited; see {second.log}"
    finally:
        stop_process(second.proc, signal.SIGTERM, 15)
        stack.processes.remove(second)
        await receiver.stop()


async def test_sustained_failure_exhausts_retries_and_disables_until_saved_again(api, account):
    receiver = await Receiver(fail_first=10_000).start()  # never accepts
    try:
        await subscribe(api, account, receiver.url)
        await lead_named(api, account, "Unlucky")

        async def webhook() -> dict:
            status, listing, _ = await api.request("GET", "/api/v1/webhooks", key=account["key"])
            return listing["webhooks"][0]
        # the whole schedule, scaled down for the tests, is about 9 seconds
        hook = await wait_until(webhook, "the webhook to be disabled", lambda w: not w["is_active"], timeout=20,
                                interval=0.05)
        assert hook["is_active"] is False and "without a success" in hook["disabled_reason"]
        assert hook["failure_count"] == len(receiver.requests) >= 10

        async def delivery() -> dict:
            status, body, _ = await api.request("GET", "/api/v1/webhooks/deliveries", key=account["key"])
            return body["deliveries"][0]
        last = await wait_until(delivery, "the delivery to end", lambda d: d["status"] != "pending", timeout=5,
                                interval=0.05)
        assert last["status"] in ("failed", "canceled") and last["last_error"] == "receiver answered 500"
        status, saved, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                             json={"webhook_url": receiver.url, "events": ["lead.created"]})
        assert status == 200 and saved["webhook"]["is_active"] is True and saved["webhook"]["disabled_reason"] is None
        assert saved["webhook"]["failure_count"] == 0
    finally:
        await receiver.stop()


async def test_a_slow_receiver_does_not_hold_back_the_others(api, account):
    slow, fast = await Receiver(delay_first=6).start(), await Receiver().start()
    try:
        await subscribe(api, account, slow.url)
        await subscribe(api, account, fast.url)
        await lead_named(api, account, "First")
        await asyncio.wait_for(slow.arrived.wait(), 10)  # the slow receiver now hangs on its first request
        second = await lead_named(api, account, "Second")
        await wait_until(lambda: lead_ids(fast), "the second lead at the fast receiver", lambda ids: second in ids,
                         interval=0.05)
        # Delivered while the slow receiver still holds the first request open.
        assert not slow.requests[0]["accepted"]
    finally:
        await slow.stop()
        await fast.stop()
