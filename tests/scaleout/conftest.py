"""The scaled-out stack: two of every service, worker and gateway against one PostgreSQL and one NATS, started once
for this package (and stopped after it) beside the session's single stack. Its processes export their spans to the
package's OTLP collector (batched every 100 ms), so that the trace test needs no stack of its own."""
import aiohttp
import pytest

from tests.api import Api
from tests.calling import VoiceSimulator
from tests.conftest import embedded_stack
from tests.otlp import Collector


@pytest.fixture(scope="package")
def collector():
    started = Collector().start()
    yield started
    started.close()


@pytest.fixture(scope="package")
def scaled(request, collector):
    with embedded_stack(request, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"},
                        replicas=2) as s:
        yield s


@pytest.fixture(scope="package")
async def gateways(scaled) -> list[Api]:
    """A client of each gateway replica."""
    async with aiohttp.ClientSession() as session:
        yield [Api(session, url, scaled.database_url) for url in scaled.gateway_urls]


@pytest.fixture(scope="package")
async def scaled_voice(scaled, gateways) -> VoiceSimulator:
    return VoiceSimulator(gateways[0].session, f"http://127.0.0.1:{scaled.process('voice-simulator').port}",
                          scaled.home_secret("voice_api_key"))
