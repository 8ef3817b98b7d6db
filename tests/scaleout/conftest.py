"""The scaled-out stack: two of every service, worker and gateway against one PostgreSQL and one NATS, started once
for this package (and stopped after it) beside the session's single stack."""
import aiohttp
import pytest

from tests.api import Api
from tests.calling import VoiceSimulator
from tests.conftest import embedded_stack


@pytest.fixture(scope="package")
def scaled(request):
    with embedded_stack(request, replicas=2) as s:
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
