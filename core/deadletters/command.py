"""The operator's dead-letter command: `python -m core.deadletters list|show|replay|drop [SEQUENCE...] [filters]`.

It signs in to NATS as core.nats_auth.OPERATOR (NATS_SEED: the operator's seed; on the local stack derived from the
server secret), which may read and delete DEADLETTERS and publish on the subjects consumers read, nothing else.
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from core import bus, nats_auth
from core.deadletters import STREAM, DeadLetter, Filter, drop, replay, stored
from core.settings import load

CONNECT_SECONDS = 10.0


def _when(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m core.deadletters",
                                description="List, show, replay or drop the messages consumers gave up on.")
    commands = p.add_subparsers(dest="command", required=True)
    for name, what in (("list", "the dead letters matching the filters"),
                       ("replay", "publish them again on their subjects, then drop them"),
                       ("drop", "delete them")):
        c = commands.add_parser(name, help=what)
        c.add_argument("sequence", nargs="*", type=int, help="dead letters by their sequence (default: every match)")
        c.add_argument("--stream")
        c.add_argument("--consumer")
        c.add_argument("--subject", help="NATS pattern of the original subject, e.g. events.workspace.*")
        c.add_argument("--error", help="text in the error")
        c.add_argument("--since", type=_when, help="ISO 8601 time (UTC unless given)")
        c.add_argument("--until", type=_when)
        if name != "list":
            c.add_argument("--all", action="store_true", help="needed to act on every match without a sequence")
    show = commands.add_parser("show", help="one dead letter in full, its payload and headers")
    show.add_argument("sequence", type=int)
    return p


def filter_of(args: argparse.Namespace) -> Filter:
    return Filter(stream=args.stream, consumer=args.consumer, subject=args.subject, error=args.error,
                  since=args.since, until=args.until)


def chosen(letters: list[tuple[int, DeadLetter]], sequences: list[int]) -> list[tuple[int, DeadLetter]]:
    """Of the matches, those named by sequence (all when none is named)."""
    return [(s, letter) for s, letter in letters if not sequences or s in sequences]


def shown(sequence: int, letter: DeadLetter) -> dict[str, Any]:
    try:
        payload: Any = json.loads(letter.payload)
    except ValueError:
        payload = base64.b64encode(letter.payload).decode()
    return {"dead_letter": sequence, **letter.summary(), "headers": letter.headers, "payload": payload}


async def run(args: argparse.Namespace, js: JetStreamContext, out: Callable[[str], None], timeout: float = 5.0) -> int:
    """One command on `js`; its output a line each through `out`; the exit status."""
    if args.command == "show":
        try:
            raw = await js.get_msg(STREAM, seq=args.sequence)
        except NotFoundError:
            out(f"no dead letter {args.sequence}")
            return 1
        assert raw.data is not None
        out(json.dumps(shown(args.sequence, DeadLetter.from_json(raw.data)), indent=1))
        return 0
    letters = chosen(await stored(js, filter_of(args)), args.sequence)
    if args.command == "list":
        for sequence, letter in letters:
            out(json.dumps({"dead_letter": sequence, **letter.summary()}))
        return 0
    if not args.sequence and not args.all:
        out(f"{len(letters)} dead letters match: name their sequences, or add --all")
        return 2
    failed = 0
    for sequence, letter in letters:
        if args.command == "drop":
            await drop(js, sequence)
            out(f"dropped {sequence}")
        elif await replay(js, sequence, letter, timeout):
            out(f"replayed {sequence} to {letter.subject}")
        else:
            failed += 1
            out(f"kept {sequence}: {letter.stream} dropped its replay as a duplicate (within its duplicate window): "
                "replay it again in two minutes")
    return 1 if failed else 0


async def _main(args: argparse.Namespace) -> int:
    settings = load()
    login = nats_auth.login_of(settings, nats_auth.OPERATOR)
    try:
        async with asyncio.timeout(CONNECT_SECONDS):
            nc = await bus.connect(settings.nats_url, nats_auth.OPERATOR, login, settings.nats_tls_ca)
    except TimeoutError:
        print(f"NATS at {settings.nats_url} did not answer in {CONNECT_SECONDS:.0f} s", file=sys.stderr)
        return 1
    try:
        return await run(args, nc.jetstream(timeout=5.0), print)
    finally:
        await nc.close()


def main(argv: list[str]) -> int:
    return asyncio.run(_main(parser().parse_args(argv)))
