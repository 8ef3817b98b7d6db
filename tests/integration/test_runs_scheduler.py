"""The runs scheduler as a fleet: two replicas sharing one database execute every touch once (counted at the
simulators), and a replica killed with SIGKILL in the middle of a touch loses nothing and dials nothing twice."""
import asyncio
import signal

from deploy.local.servers import stop_process
from tests.calling import provider_calls_to
from tests.compliance import answering_callee
from tests.runs import create, jobs_of, run_of, settled, touch
from tests.texting import opt_in, texts_to
from tests.waiting import wait_until

SCHEDULER = "runs-scheduler"


async def test_two_schedulers_execute_every_touch_once(api, account, stack, voice, calling_agent):
    key = account["key"]
    replica = await asyncio.to_thread(stack.add_replica, SCHEDULER, f"{SCHEDULER}-2")
    try:
        await asyncio.sleep(2.0)  # connected and polling
        callees, texted = [answering_callee() for _ in range(12)], [answering_callee() for _ in range(12)]
        await asyncio.gather(*(opt_in(api, key, p) for p in callees + texted))
        body = run_of(account, calling_agent,
                      *(touch(f"call-{i}", p, seconds=1) for i, p in enumerate(callees)),
                      *(touch(f"sms-{i}", p, channel="sms", seconds=1, context={"body": "Your quote is ready."})
                        for i, p in enumerate(texted)))
        status, run, _ = await create(api, key, body)
        assert status == 201, run
        done = await settled(api, key, run["id"], timeout=60)
        assert done["status"] == "completed" and done["jobs"]["succeeded"] == 24, done
        for phone in callees:
            assert len(await provider_calls_to(voice, phone)) == 1, phone
        for phone in texted:
            assert len(await texts_to(stack, phone)) == 1, phone
        assert all(j["attempts"] == 1 for j in await jobs_of(api, key, run["id"]))
    finally:
        stop_process(replica.proc, signal.SIGTERM, 15)
        stack.processes.remove(replica)


async def test_a_scheduler_killed_mid_touch_loses_nothing_and_dials_once(
        api, account, stack, voice, calling_agent):
    key, phone = account["key"], answering_callee()
    await opt_in(api, key, phone)
    # The provider takes the call at once and is slow to answer: the scheduler dies meanwhile.
    await voice.delay_next("POST", "/call", 4, hold="answer")
    status, run, _ = await create(api, key, run_of(account, calling_agent, touch("slow", phone)))
    assert status == 201, run
    scheduler = stack.process(SCHEDULER)

    async def job() -> dict:
        [only] = await jobs_of(api, key, run["id"])
        return only
    await wait_until(job, "the touch to be executing", lambda j: j["status"] == "executing", interval=0.05)
    await asyncio.sleep(0.5)  # the call is at the provider, which has not answered yet
    scheduler.proc.send_signal(signal.SIGKILL)
    scheduler.proc.wait(10)
    stack.spawn(scheduler)  # the claim was a lease: due again once it runs out, with the same idempotency key
    done = await settled(api, key, run["id"], timeout=60)
    [job] = await jobs_of(api, key, run["id"])
    assert done["jobs"]["succeeded"] == 1 and job["attempts"] == 1, (done, job)
    assert len(await provider_calls_to(voice, phone)) == 1
