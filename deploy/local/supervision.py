"""Supervision of the embedded stack's processes, as Kubernetes' kubelet restarts a pod's containers: a process that
exits when the stack did not stop it (a crash, SIGKILL, the OOM killer) is started again on the same port with the
same settings after a backoff (CrashLoopBackOff: 1 s, doubling to 30 s, back to 1 s once it had run for a minute).
Its output goes on in the same log, so the crash's is kept."""
from __future__ import annotations

import logging
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)


class Process(Protocol):
    """What the supervisor reads of a stack's process (deploy.local.stack.Process)."""

    name: str
    proc: subprocess.Popen[bytes] | None
    log: Path | None
    started: float
    stopped: bool  # by the stack: never restarted


P = TypeVar("P", bound=Process)


class Supervised(Protocol[P]):
    """What the supervisor uses of the stack (deploy.local.stack.Stack), which imports this module."""

    lock: threading.RLock
    restarts: dict[str, int]

    @property
    def processes(self) -> Sequence[P]: ...

    def spawn(self, p: P) -> None: ...

FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 30.0
RESET_AFTER_SECONDS = 60.0  # a process that ran this long before it exited starts again at the first delay


def restart_delay(previous: float, ran_for: float) -> float:
    """How long to wait before starting again a process that exited after running `ran_for` seconds, the wait before
    its last start having been `previous` (0: it was never restarted)."""
    if previous <= 0 or ran_for >= RESET_AFTER_SECONDS:
        return FIRST_DELAY_SECONDS
    return min(previous * 2, MAX_DELAY_SECONDS)


def exit_reason(returncode: int) -> str:
    """A Popen return code as a person reads it: `exit code 1` or `signal SIGKILL`."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit code {returncode}"


class Supervisor(Generic[P]):
    """Every `interval` seconds, from a thread of its own, looks at the stack's processes: one that exited and was not
    stopped by the stack (Process.stopped) is started again (Stack.spawn) once its backoff has passed, and counted in
    `stack.restarts`."""

    def __init__(self, stack: Supervised[P], interval: float = 0.25):
        self.stack = stack
        self.interval = interval
        self._delays: dict[str, float] = {}  # each process's last backoff
        self._due: dict[str, float] = {}  # the exited processes waiting for their backoff: when each starts again
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stack-supervisor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """No restart after this returns (one under way has finished)."""
        self._halt.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while not self._halt.wait(self.interval):
            for p in list(self.stack.processes):
                with self.stack.lock:  # stop_process marks a process stopped under it: never restarted after
                    if not self._halt.is_set():
                        self.check(p, time.monotonic())

    def check(self, p: P, now: float) -> None:
        """Note that `p` exited (and when it is due again), or start it again if it is due."""
        if p.proc is None or p.stopped or p.proc.poll() is None:
            self._due.pop(p.name, None)
            return
        due = self._due.get(p.name)
        if due is None:
            delay = restart_delay(self._delays.get(p.name, 0.0), now - p.started)
            self._delays[p.name] = delay
            self._due[p.name] = now + delay
            count = self.stack.restarts.get(p.name, 0) + 1
            message = f"{p.name} exited ({exit_reason(p.proc.returncode)}); restart {count} in {delay:g} s"
            log.warning(message)
            if p.log is not None:
                with open(p.log, "a") as out:
                    out.write(f"[launcher] {message}\n")
        elif now >= due:
            del self._due[p.name]
            self.stack.restarts[p.name] = self.stack.restarts.get(p.name, 0) + 1
            self.stack.spawn(p)
