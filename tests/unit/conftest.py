"""The fast tier's providers: the voice-provider simulator served in this process (use cases run on the
in-memory database, tests/memory, with the other services behind in-memory ports, tests/service/fakes.py)."""
import aiohttp
import pytest

from providers.voice.client import VapiClient
from providers.voice.simulator.app import build_app
from tests.calling import VoiceSimulator
from tests.integration.servers import serving

KEY = "fast-tier-voice-key"


@pytest.fixture
async def voice(tmp_path):
    """The voice simulator for one test (as tests/conftest.py's `voice` is the stack's), its calls played in a blink
    and silently (no server messages): its API and control plane."""
    async with serving(build_app(tmp_path / "voice-simulator", KEY, time_scale=0.001)) as server, \
            aiohttp.ClientSession() as session:
        sim = VoiceSimulator(session, str(server.make_url("")).rstrip("/"), KEY)
        await sim.playback(silent=True, times=1000)
        yield sim


@pytest.fixture
async def voice_client(voice):
    """The real provider client of the simulator, one attempt per request."""
    client = VapiClient(voice.url, KEY, max_attempts=1)
    yield client
    await client.close()
