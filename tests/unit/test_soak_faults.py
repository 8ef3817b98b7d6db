"""The soak's fault plan (bench.soak.faults.schedule): drawn from the seed alone, every kind of platform process killed
before any twice, no two of the stack's faults (nor two outages) within each other's span, the load's edges quiet."""
import asyncio
import itertools
import time

import aiohttp
import pytest

from bench.soak import faults
from bench.soak.faults import KILL, PARTNER_OUTAGE, PROVIDER_OUTAGE, STACK_KINDS, describe, kind_of, schedule
from bench.soak.history import History
from bench.soak.partner import Partner
from bench.soak.profile import SoakProfile, short
from core import registry
from deploy.local.stack import MAIL_CATCHALL, PAYMENTS_SIMULATOR, SMS_SIMULATOR, VOICE_SIMULATOR, X402_FACILITATOR

SIMULATORS = [VOICE_SIMULATOR, SMS_SIMULATOR, MAIL_CATCHALL, PAYMENTS_SIMULATOR, X402_FACILITATOR]
# A scaled-out stack's process names (REPLICAS=2), as Stack.processes lists them
NAMES = [*SIMULATORS, *(name for kind in registry.PROCESSES for name in (kind, f"{kind}-2"))]


def check_no_overlap(plan: list[faults.Fault]) -> None:
    for group in ([f for f in plan if f.kind in STACK_KINDS], [f for f in plan if f.kind not in STACK_KINDS]):
        for before, after in itertools.pairwise(group):
            assert before.at + before.span <= after.at + 1e-9, (before, after)


@pytest.mark.parametrize("profile", [SoakProfile(), short(), *(SoakProfile(seed=s) for s in range(1, 30)),
                                     *(short(seed=s) for s in range(30))])
def test_a_plan_is_the_seeds_and_keeps_its_rules(profile):
    plan = schedule(profile, NAMES)
    assert plan == schedule(profile, list(reversed(NAMES)))  # the seed alone decides, not the names' order
    assert plan == sorted(plan, key=lambda f: f.at)
    kinds = [f.kind for f in plan]
    assert kinds.count(KILL) == profile.kills and kinds.count("pause") == profile.pauses
    assert kinds.count("postgres-restart") == profile.postgres_restarts
    assert kinds.count("nats-restart") == profile.nats_restarts
    assert kinds.count(PROVIDER_OUTAGE) == profile.provider_outages
    assert kinds.count(PARTNER_OUTAGE) == profile.partner_outages

    killed = [kind_of(f.target) for f in plan if f.kind == KILL]
    every = len(registry.PROCESSES)
    assert None not in killed and len(set(killed[:every])) == min(every, profile.kills)  # each kind before any twice
    assert {f.target for f in plan if f.kind in (KILL, "pause")} <= set(NAMES) - set(SIMULATORS)
    for f in plan:
        if f.kind == PROVIDER_OUTAGE:
            assert f.target in (VOICE_SIMULATOR, SMS_SIMULATOR) and f.status in (0, 500) and f.path.startswith("/")
            assert 20 <= f.seconds <= 60
        if f.kind == "pause":
            assert 3 <= f.seconds <= 8

    check_no_overlap(plan)
    assert all(f.at >= profile.seconds * 0.1 and f.at + f.span <= profile.seconds * 0.9 + 1e-9 for f in plan)


def test_the_default_plan_kills_every_kind_and_replicas_in_turn():
    plan = schedule(SoakProfile(kills=2 * len(registry.PROCESSES) + 2, seconds=1200), NAMES)
    killed = [f.target for f in plan if f.kind == KILL]
    first, second = killed[:len(registry.PROCESSES)], killed[len(registry.PROCESSES):2 * len(registry.PROCESSES)]
    assert {kind_of(t) for t in first} == {kind_of(t) for t in second} == set(registry.PROCESSES)
    assert set(first).isdisjoint(second)  # the other replica of each kind, the second time round


def test_other_seeds_draw_other_plans_and_the_plan_prints_with_its_seed():
    assert schedule(SoakProfile(seed=1), NAMES) != schedule(SoakProfile(seed=2), NAMES)
    plan = schedule(short(), NAMES)
    text = describe(plan, short().seed)
    lines = text.splitlines()
    assert lines[0].startswith(f"fault plan of seed {short().seed}: 4 kill, 1 pause, 1 provider-outage")
    assert len(lines) == 1 + len(plan) and all(f.target in line for f, line in zip(plan, lines[1:], strict=True))


def test_a_profile_whose_faults_do_not_fit_is_refused():
    with pytest.raises(ValueError, match="faults need"):
        schedule(SoakProfile(seconds=60, kills=12), NAMES)
    with pytest.raises(ValueError, match="no voice or SMS simulator"):
        schedule(short(), [n for n in NAMES if n not in (VOICE_SIMULATOR, SMS_SIMULATOR)])


def test_only_the_platforms_processes_have_a_kind():
    assert kind_of("accounts-2") == "accounts" and kind_of("webhooks-dispatcher") == "webhooks-dispatcher"
    assert kind_of(VOICE_SIMULATOR) is None and kind_of(MAIL_CATCHALL) is None and kind_of("accounts-x") is None


async def test_outages_run_in_turn_with_their_windows_and_none_after_the_end():
    """The executor's turn over the partner's outages (no stack needed): each window from down to up again; a fault
    that would begin after `until` is not injected, and noted."""
    partner = await Partner().start()
    history = History()
    plan = [faults.Fault(0.0, PARTNER_OUTAGE, "partner", 0.3), faults.Fault(0.4, PARTNER_OUTAGE, "partner", 0.3)]
    started = time.monotonic()
    try:
        async with aiohttp.ClientSession() as http:
            injector = faults.Injector(None, partner, history, http, {})
            turn = asyncio.create_task(injector.in_turn(plan, started, until=started + 0.35))
            await asyncio.sleep(0.1)
            assert partner.is_down
            await turn
    finally:
        await partner.stop()
    assert not partner.is_down
    [window] = history.windows
    assert (window.kind, window.target) == (PARTNER_OUTAGE, "partner")
    assert window.start - started < 0.1 and 0.3 <= window.end - window.start < 0.6
    assert len(history.notes) == 1 and "not injected" in history.notes[0] and "+   0.4 s" in history.notes[0]
