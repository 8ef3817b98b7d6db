"""The operator's dead-letter command (core.deadletters) as the tests run it, and what DEADLETTERS holds."""
import asyncio
import os
import sys

from core import deadletters
from core.deadletters import DeadLetter, Filter
from deploy.local.stack import ROOT


async def command(stack, *argv: str) -> tuple[int, list[str]]:
    """`python -m core.deadletters ...` as an operator runs it on the stack (signed in as core.nats_auth.OPERATOR,
    its seed derived from the stack's secret): its exit status and output lines."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "core.deadletters", *argv, cwd=ROOT, env={**os.environ, **stack.env()},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode, out.decode().splitlines()


async def dead_letters_of(js, consumer: str) -> list[tuple[int, DeadLetter]]:
    """The dead letters of `consumer` (on EVENTS), each with its sequence, oldest first."""
    return await deadletters.stored(js, Filter(stream="EVENTS", consumer=consumer))
