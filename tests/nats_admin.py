"""The test harness's own NATS identity (core.nats_auth.TEST_ADMIN, on the local stack only: it may publish and
subscribe anywhere), for the tests that watch or place messages on the bus themselves."""
import nats
from nats.aio.client import Client

from core.bus import EventBus
from core.nats_auth import TEST_ADMIN


async def admin_connection(stack, **options) -> Client:
    return await nats.connect(stack.nats_url, **stack.nats_login(TEST_ADMIN).options(), **options)


def admin_bus(stack, name: str, **options) -> EventBus:
    """An EventBus signed in as the test harness (creating either stream when missing, as the tests expect)."""
    return EventBus(stack.nats_url, name, login=stack.nats_login(TEST_ADMIN), **options)
