"""The embedded stack's supervision: its backoff rule (Kubernetes' CrashLoopBackOff) and when it restarts a process."""
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from deploy.local.stack import Process
from deploy.local.supervision import (
    FIRST_DELAY_SECONDS,
    MAX_DELAY_SECONDS,
    RESET_AFTER_SECONDS,
    Supervisor,
    exit_reason,
    restart_delay,
)


def test_the_backoff_doubles_from_a_second_to_its_cap_and_resets_after_a_long_run():
    delays, previous = [], 0.0
    for _ in range(8):  # a process that crashes at once, again and again
        previous = restart_delay(previous, ran_for=0.5)
        delays.append(previous)
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]
    assert (FIRST_DELAY_SECONDS, MAX_DELAY_SECONDS) == (1, 30)
    assert restart_delay(30, ran_for=RESET_AFTER_SECONDS - 1) == 30  # still crash-looping
    assert restart_delay(30, ran_for=RESET_AFTER_SECONDS) == 1  # it ran long enough: a new crash starts over


def test_an_exit_reads_as_its_code_or_its_signal():
    assert exit_reason(1) == "exit code 1"
    assert exit_reason(-signal.SIGKILL) == "signal SIGKILL"


class FakeStack:
    """What the supervisor uses of a Stack: its processes, lock, restart counts and spawn (recorded, not run)."""

    def __init__(self, *processes: Process):
        self.processes = list(processes)
        self.lock = threading.RLock()
        self.restarts: dict[str, int] = {}
        self.spawned: list[str] = []

    def spawn(self, p: Process) -> None:
        self.spawned.append(p.name)
        p.proc, p.started = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]), 100.0


@pytest.fixture
def exited(tmp_path: Path):
    """A process that exited on its own (exit code 3) after running 2 s, its log holding its output."""
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait()
    log = tmp_path / "p.log"
    log.write_text("the crash's traceback\n")
    yield Process("worker", "workers.x", 1, proc=proc, log=log, started=0.0)


def test_a_process_that_exited_is_started_again_after_its_backoff_and_counted(exited):
    stack = FakeStack(exited)
    supervisor = Supervisor(stack)
    supervisor.check(exited, now=2.0)
    supervisor.check(exited, now=2.9)
    assert stack.spawned == [] and stack.restarts == {}
    supervisor.check(exited, now=3.0)
    assert stack.spawned == ["worker"] and stack.restarts == {"worker": 1}
    assert exited.log.read_text() == "the crash's traceback\n[launcher] worker exited (exit code 3); restart 1 in 1 s\n"
    exited.proc.kill()  # it crashes again, soon after its restart: twice the wait
    exited.proc.wait()
    supervisor.check(exited, now=101.0)
    supervisor.check(exited, now=102.9)
    assert stack.spawned == ["worker"]
    supervisor.check(exited, now=103.0)
    assert stack.spawned == ["worker", "worker"] and stack.restarts == {"worker": 2}
    assert exited.log.read_text().endswith("worker exited (signal SIGKILL); restart 2 in 2 s\n")
    exited.proc.kill()
    exited.proc.wait()


def test_a_process_the_stack_stopped_is_never_started_again(exited):
    stack = FakeStack(exited)
    supervisor = Supervisor(stack)
    supervisor.check(exited, now=2.0)  # exited, waiting for its backoff, when the stack stops it
    exited.stopped = True
    for now in (3.0, 60.0):
        supervisor.check(exited, now=now)
    assert stack.spawned == [] and stack.restarts == {}
