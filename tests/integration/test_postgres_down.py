"""PostgreSQL down for two seconds under requests that reach every service: each request it fails answers 503
unavailable in the error envelope with Retry-After, which a client retries, and none 500 internal_error (a database
that cannot be reached is no bug: core.unreachable, core.interceptors)."""
import asyncio
from pathlib import Path

import aiohttp
import pytest

# a write (the sdr service, and the usage log's RecordUsage in accounts) and reads of each other service
READS = ("/api/v1/workspaces", "/api/v1/sms/messages", "/api/v1/leads", "/api/v1/calls", "/api/v1/evals",
         "/api/v1/webhooks", "/api/v1/agents")
DOWN_SECONDS = 2.0
PER_SECOND = 20


async def test_requests_postgresql_fails_answer_503_never_500(stack, api, account):
    if stack.postgres is None:
        pytest.skip("the stack's PostgreSQL is external (DATABASE_URL): the launcher cannot restart it")
    key, business_id = account["key"], account["business_id"]
    answers: list[tuple[str, str, int, object, str | None]] = []  # (method, path, status, body, Retry-After)
    done = asyncio.Event()

    async def send(n: int) -> None:
        if n % 2:
            method, path, body = "GET", READS[n // 2 % len(READS)], None
        else:
            method, path, body = "POST", "/api/v1/leads", {"business_id": business_id, "name": f"Lead {n}"}
        try:
            status, reply, headers = await api.request(method, path, key=key, json=body)
        except aiohttp.ClientError as exc:
            answers.append((method, path, 0, repr(exc), None))
            return
        answers.append((method, path, status, reply, headers.get("Retry-After")))

    async def stream() -> None:
        sent: list[asyncio.Task[None]] = []
        n = 0
        while not done.is_set():
            sent.append(asyncio.create_task(send(n)))
            n += 1
            await asyncio.sleep(1 / PER_SECOND)
        await asyncio.gather(*sent)

    requests = asyncio.create_task(stream())
    await asyncio.sleep(1)
    await asyncio.to_thread(stack.restart_postgres, DOWN_SECONDS)
    done.set()
    await requests

    failed = [answer for answer in answers if not 200 <= answer[2] < 300]
    assert failed, "no request met the outage: the test proves nothing"
    wrong = [(method, path, status, body, retry_after) for method, path, status, body, retry_after in failed
             if status != 503 or not isinstance(body, dict) or body.get("error", {}).get("code") != "unavailable"
             or retry_after != "1"]
    assert wrong == [], (wrong, _unhandled_errors(stack.logs))
    assert len({path for _, path, *_ in failed}) >= 3, failed  # several services met it, not one


def _unhandled_errors(logs: Path, context: int = 30) -> str:
    """The stack's logged unexpected errors (an error 500 stands for), with the lines after each: the traceback
    that says which exception the outage raised where, for a failure seen on CI alone."""
    found = []
    for log in sorted(logs.glob("*.log")):
        lines = log.read_text(errors="replace").splitlines()
        for n, line in enumerate(lines):
            if "unhandled error" in line:
                found.append(f"{log.name}: " + "\n".join(lines[n:n + context]))
    return "\n\n".join(found) or "no unhandled error was logged"
