"""The pools of core.db through a real PgBouncer in transaction pooling, the production overlay's mode
(deploy/k8s/overlays/production/pgbouncer.yaml): more clients than server connections, each statement on whichever
server connection is free. With the drivers' statement caches off (DATABASE_STATEMENT_CACHE=false) every statement
is answered on any PgBouncer; with them on, on a PgBouncer that keeps prepared statements (>= 1.21,
max_prepared_statements), as production runs. Skipped where no pgbouncer is installed (Debian's package)."""
import asyncio
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core import db
from deploy.local.servers import PG_SYSTEM_USER, free_port, stop_process, wait_for_port

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
pytestmark = pytest.mark.skipif(not Path(PGBOUNCER).exists(), reason="pgbouncer is not installed here")
SERVER_CONNECTIONS = 2  # default_pool_size: fewer than the clients below


def version() -> tuple[int, int]:
    out = subprocess.run([PGBOUNCER, "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"PgBouncer (\d+)\.(\d+)", out)
    assert found, out
    return int(found[1]), int(found[2])


@pytest.fixture
def pgbouncer(stack):
    """A PgBouncer in transaction pooling in front of the stack's PostgreSQL: the owner's URL through it."""
    url = make_url(stack.database_url)
    folder = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    folder.chmod(0o755)  # PgBouncer refuses to run as root: as root it runs as the embedded server's user
    port = free_port()
    prepared = "max_prepared_statements = 100" if version() >= (1, 21) else ""
    (folder / "userlist.txt").write_text(f'"{url.username}" ""\n')
    (folder / "pgbouncer.ini").write_text(f"""[databases]
{url.database} = host={url.host} port={url.port} dbname={url.database}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/userlist.txt
pool_mode = transaction
default_pool_size = {SERVER_CONNECTIONS}
max_client_conn = 50
{prepared}
""")
    log = folder / "pgbouncer.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([PGBOUNCER, str(folder / "pgbouncer.ini")], stdout=out, stderr=out,
                                start_new_session=True, **({"user": PG_SYSTEM_USER} if os.geteuid() == 0 else {}))
    try:
        wait_for_port(port, 10, proc, "PgBouncer", log)
        yield url.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    finally:
        stop_process(proc, signal.SIGTERM, 5)
        shutil.rmtree(folder, ignore_errors=True)


async def _answers_every_statement(database_url: str, statement_cache: bool) -> None:
    """Eight clients (four of each pool) run statements with parameters at once, over SERVER_CONNECTIONS server
    connections: each answer is its own."""
    engine = db.create_engine(database_url, pool_size=4, max_overflow=0, statement_cache=statement_cache)
    pool = await db.create_pool(database_url, size=4, statement_cache=statement_cache)

    async def through_engine(n: int) -> int:
        async with engine.connect() as conn:
            return await conn.scalar(sa.select(sa.literal(n, sa.Integer) * 2))

    async def through_pool(n: int) -> int:
        return await pool.fetchval("SELECT $1::int * 2", n)

    try:
        for _ in range(3):  # a statement again, once the caches (where on) hold it
            answers = await asyncio.gather(*(f(n) for n in range(40) for f in (through_engine, through_pool)))
            assert answers == [n * 2 for n in range(40) for _ in (through_engine, through_pool)]
    finally:
        await pool.close()
        await engine.dispose()


async def test_without_the_statement_caches_every_statement_is_answered_through_any_pgbouncer(pgbouncer):
    await _answers_every_statement(pgbouncer, statement_cache=False)


async def test_with_the_statement_caches_every_statement_is_answered_through_pgbouncer_1_21(pgbouncer):
    if version() < (1, 21):
        pytest.skip(f"PgBouncer {'.'.join(map(str, version()))} keeps no prepared statements (1.21 does): production's")
    await _answers_every_statement(pgbouncer, statement_cache=True)
