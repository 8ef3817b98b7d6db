"""The national do-not-call registry's import (services.messaging.registry) against the stack's PostgreSQL: full and
change files, malformed lines reported with their numbers and the rest loaded, a change to an area code never
loaded refused, an import interrupted halfway leaving the tables as they were (and the re-run giving the same
tables), files already imported skipped, and a second import refused while one runs.

The area codes used here (983, 986) are no test's but these; their rows are removed afterwards."""
import uuid
from pathlib import Path

import asyncpg
import pytest

from core import registry as processes
from core.db import raw_url
from services.messaging import registry
from services.messaging.national_registry import Subscription

AREAS = (983, 986)
SUBSCRIBED = Subscription.of(tuple(map(str, AREAS)))


@pytest.fixture
async def conn(stack):
    conn = await asyncpg.connect(raw_url(stack.database_url))
    yield conn
    low, high = AREAS[0] * 10_000_000, (AREAS[-1] + 1) * 10_000_000
    await conn.execute("DELETE FROM messaging.national_dnc WHERE number >= $1 AND number < $2", low, high)
    await conn.execute("DELETE FROM messaging.national_dnc_areas WHERE area_code = ANY($1::int[])", list(AREAS))
    await conn.execute("DELETE FROM messaging.national_dnc_files WHERE name LIKE 'registry-test-%'")
    await conn.close()


@pytest.fixture
def folder(tmp_path):
    """write(kind, lines) -> a file of those lines with a name of its own, in name order."""
    tag = uuid.uuid4().hex[:8]
    count = iter(range(100))

    def write(kind: str, lines: list[str]) -> Path:
        path = tmp_path / f"registry-test-{tag}-{next(count):02d}-{kind}.txt"
        path.write_text("".join(f"{line}\n" for line in lines))
        return path

    return write


async def numbers(conn) -> list[int]:
    return [r[0] for r in await conn.fetch("SELECT number FROM messaging.national_dnc WHERE number >= $1 AND "
                                           "number < $2 ORDER BY 1", AREAS[0] * 10_000_000,
                                           (AREAS[-1] + 1) * 10_000_000)]


async def areas(conn) -> dict[int, tuple]:
    rows = await conn.fetch("SELECT area_code, file, kind, numbers, refreshed_at FROM messaging.national_dnc_areas "
                            "WHERE area_code = ANY($1::int[])", list(AREAS))
    return {r["area_code"]: (r["file"], r["kind"], r["numbers"], r["refreshed_at"]) for r in rows}


async def run(stack, *paths: Path, again: bool = False) -> tuple[int, list[str]]:
    said: list[str] = []
    url = stack.database_url_of(processes.NATIONAL_DNC_IMPORT)  # the job's own role
    status = await registry.import_paths(url, paths, SUBSCRIBED, again=again, out=said.append)
    return status, said


async def test_full_and_change_files_load_with_their_problems_reported(stack, conn, folder):
    full = folder("full", ["9835550100", "983,5550101", "not a number", "9835550102", "9835550102", "9865550100",
                           "9831550103", "9835550104,A"])
    status, said = await run(stack, full)
    assert status == registry.PROBLEMS  # the rest loaded, the bad lines said
    assert said[0].startswith(f"{full.name}: full file, 5 lines loaded") and "983 (3 numbers)" in said[0]
    assert "986 (1 numbers)" in said[0]
    assert said[1:] == ["  line 3: 'not a number' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
                        "  line 7: '9831550103' is not a 10-digit number (NPANXXXXXX or NPA,NXXXXXX)",
                        "  line 8: '9835550104,A' is a change line in a full file"]
    assert await numbers(conn) == [9835550100, 9835550101, 9835550102, 9865550100]
    loaded = await areas(conn)
    assert {a: v[:3] for a, v in loaded.items()} == {983: (full.name, "full", 3), 986: (full.name, "full", 1)}

    change = folder("change", ["9835550100,D,20260102", "9835550105,A,20260102", "9835550106,A", "9835550106,D",
                               "9835550107,D", "9865550101,A"])
    status, said = await run(stack, change)
    assert status == registry.OK, said
    assert await numbers(conn) == [9835550101, 9835550102, 9835550105, 9865550100, 9865550101]
    after = await areas(conn)
    assert {a: v[:3] for a, v in after.items()} == {983: (change.name, "change", 3), 986: (change.name, "change", 2)}
    assert after[983][3] > loaded[983][3]

    # a full file replaces its area code's numbers, and only its own area code's
    status, said = await run(stack, folder("full", ["9865550199"]))
    assert status == registry.OK and await numbers(conn) == [9835550101, 9835550102, 9835550105, 9865550199]


async def test_a_change_file_for_an_area_code_never_loaded_changes_nothing_and_says_so(stack, conn, folder):
    status, said = await run(stack, folder("change", ["9865550100,A", "9865550101,A"]))
    assert status == registry.PROBLEMS
    assert said[1] == "  area code 986: no full file imported yet: 2 changes skipped (import its full file first)"
    assert await numbers(conn) == [] and await areas(conn) == {}


async def test_an_interrupted_import_leaves_the_tables_as_they_were_and_the_rerun_gives_the_same(stack, conn,
                                                                                               folder):
    first = folder("full", [f"983555{i:04d}" for i in range(100)])
    await run(stack, first)
    before, before_areas = await numbers(conn), await areas(conn)
    replacement = [f"983666{i:04d}" for i in range(5000)]

    def dies_halfway():
        for i, line in enumerate(replacement):
            if i == 2500:
                raise OSError("the volume went away")
            yield line

    with pytest.raises(OSError):
        await registry.load(conn, "registry-test-interrupted", 1, dies_halfway(), SUBSCRIBED)
    assert await numbers(conn) == before and await areas(conn) == before_areas
    # the re-run of the whole file, twice over, gives the one table it describes
    again = folder("full", replacement)
    for _ in range(2):
        status, said = await run(stack, again, again=True)
        assert status == registry.OK, said
        assert await numbers(conn) == [int(n) for n in replacement]
    # a file already imported is skipped (a CronJob over the folder imports it once)
    status, said = await run(stack, first.parent)
    assert status == registry.OK and all("already imported" in line for line in said) and len(said) == 2
    assert await numbers(conn) == [int(n) for n in replacement]


async def test_a_second_import_is_refused_while_one_runs(stack, conn, folder):
    path = folder("full", ["9835550100"])
    holder = await registry.connect(stack.database_url)  # an import in progress holds the lock
    try:
        status, said = await run(stack, path)
        assert status == registry.BUSY and said == [
            "another import of the national registry is running (it holds the lock): nothing imported; run this "
            "again when it ends"]
        assert await numbers(conn) == []
    finally:
        await holder.close()
    status, _ = await run(stack, path)
    assert status == registry.OK and await numbers(conn) == [9835550100]
