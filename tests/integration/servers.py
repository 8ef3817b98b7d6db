"""An aiohttp application served on this machine for as long as a fixture or a test needs it: the simulators
the provider tests run in-process and our own endpoints (status callbacks, webhooks) the simulators call."""
import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web
from aiohttp.test_utils import TestServer

from deploy.local.servers import free_port


@asynccontextmanager
async def serving(app: web.Application, port: int | None = None) -> AsyncIterator[TestServer]:
    """`app` on 127.0.0.1 at `port` (a free one when None: pass one when the app must know its own URL before
    it is served), closed on the way out."""
    server = TestServer(app, host="127.0.0.1", port=port or free_port())
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def accepting(port: int) -> bool:
    """Whether a server on this machine accepts connections on `port` yet."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True
