"""The fast tier's fixtures: its business and in-memory database, and the voice-provider, messaging-provider and
payments-provider simulators and the x402 facilitator served in this process (use cases run on the
in-memory database, tests/memory, with the other services behind in-memory ports, tests/service/fakes.py)."""
from datetime import UTC, datetime

import aiohttp
import pytest

from core import caller
from core.ids import new_id
from deploy.local.servers import free_port
from providers.messaging.client import TwilioClient
from providers.messaging.simulator.app import MESSAGES, OPT_OUTS
from providers.messaging.simulator.app import build_app as build_sms_app
from providers.payments.client import StripePayments
from providers.payments.simulator.__main__ import account_prices
from providers.payments.simulator.app import EVENTS
from providers.payments.simulator.app import build_app as build_payments_app
from providers.voice.vapi.client import VapiClient
from providers.voice.vapi.server_messages import WebhookAuth
from providers.voice.vapi.simulator.app import build_app
from providers.voice.vapi.voice import VapiVoice
from providers.x402.facilitator.app import build_app as build_facilitator_app
from services.messaging import compliance_service, consent_service
from services.messaging import service as texts_service

MIDDAY = datetime(2026, 11, 18, 19, 0, tzinfo=UTC)  # a Wednesday, 11:00 in California
from providers.x402.server import X402Gate
from tests.billing import Payments
from tests.calling import VoiceSimulator
from tests.integration.servers import serving
from tests.memory import MemoryDatabase

KEY = "fast-tier-voice-key"
SMS_ACCOUNT, SMS_TOKEN = "AC" + "0f" * 16, "fast-tier-sms-token"
PAYMENTS_KEY = "sk_test_fast_tier_payments"
PAY_TO = "0x" + "5b" * 20  # where the fast tier's x402 payments go


@pytest.fixture
def signing(monkeypatch):
    """This test process signs and verifies callers (core.caller) with keys of its own, as the sdr service does (it
    calls accounts, and itself)."""
    monkeypatch.setattr(caller._this, "signer", None)
    monkeypatch.setattr(caller._this, "verifier", None)
    caller.configure(caller.KeyRing.parse(*caller.new_key("sdr:1")), "sdr")


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


def vapi_port(client: VapiClient) -> VapiVoice:
    """The Vapi adapter over `client`, as the fast tier's use cases take it."""
    return VapiVoice(client, WebhookAuth("hmac", "fast-tier-webhook-secret"), "https://switchboard.example.com",
                     "sip-credential")


@pytest.fixture
def voice_port(voice_client):
    """The voice port the use cases take: the Vapi adapter over the simulator's client."""
    return vapi_port(voice_client)


class SmsProvider:
    """The messaging simulator served for one test: its real client (one attempt per request), the messages it
    holds (by SID, as its API shows them) and its control plane (`fail_next`)."""

    def __init__(self, server, session):
        self.server, self.session = server, session
        self.url = str(server.make_url("")).rstrip("/")
        self.client = TwilioClient(self.url, SMS_ACCOUNT, SMS_TOKEN, max_attempts=1)

    @property
    def texts(self) -> list[dict]:
        return list(self.server.app[MESSAGES].records.values())

    def stopped(self, sender: str, recipient: str) -> None:
        """`recipient` replied STOP to `sender` at the provider (its opt-out handling blocks texts between them)."""
        self.server.app[OPT_OUTS].take(recipient, sender, "STOP")

    async def fail_next(self, status: int) -> None:
        async with self.session.post(f"{self.url}/_simulator/faults", json={
                "method": "POST", "path": "/2010-04-01/Accounts", "status": status, "times": 1}) as r:
            assert r.status == 201, await r.text()


@pytest.fixture
async def sms():
    """The messaging simulator for one test (its status callbacks go nowhere: the tier has no gateway)."""
    async with serving(build_sms_app(SMS_ACCOUNT, SMS_TOKEN, time_scale=0.001)) as server, \
            aiohttp.ClientSession() as session:
        provider = SmsProvider(server, session)
        yield provider
        await provider.client.close()


class PaymentsProvider(Payments):
    """The payments simulator served for one test: its checkout page (as a browser) and its control plane
    (tests.billing.Payments), its real client (one attempt per request) and the events it made."""

    def __init__(self, server, session, url):
        super().__init__(session, url)
        self.server = server
        self.client = StripePayments(url, PAYMENTS_KEY, timeout=2.0, max_network_retries=0)
        self.seen = 0

    def new_events(self) -> list[dict]:
        """The Event objects made since the last call, oldest first, as the gateway stores them on the PROVIDER
        stream (the tier has no gateway: nothing is sent)."""
        records = self.server.app[EVENTS].records
        made, self.seen = records[self.seen:], len(records)
        return [record["event"] for record in made]


@pytest.fixture
async def payments_provider():
    """The payments simulator for one test, with the local stack's prices; its billing clock stands still (time
    scale 0: a trial ends or a renewal is charged when the test advances it through the control plane)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    app = build_payments_app(PAYMENTS_KEY, public_url=url, time_scale=0, prices=account_prices({}))
    async with serving(app, port) as server, aiohttp.ClientSession() as session:
        provider = PaymentsProvider(server, session, url)
        yield provider
        await provider.client.close()


@pytest.fixture
def payments_client(payments_provider) -> StripePayments:
    """The real payments client (the official `stripe` package's) of the simulator, one attempt per request."""
    return payments_provider.client


class Facilitator:
    """The x402 facilitator served for one test (its ledger settles on no chain) and its control plane."""

    def __init__(self, session, url):
        self.session, self.url = session, url

    async def fail_next(self, path: str, status: int) -> None:
        """The next request to `path` (/verify, /settle) answers `status`."""
        async with self.session.post(f"{self.url}/_facilitator/faults", json={
                "status": status, "times": 1, "path": path}) as r:
            assert r.status == 201, await r.text()


@pytest.fixture
async def facilitator():
    async with serving(build_facilitator_app()) as server, aiohttp.ClientSession() as session:
        yield Facilitator(session, str(server.make_url("")).rstrip("/"))


@pytest.fixture
async def x402_gate(facilitator):
    """The real x402 gate (the `x402` package's facilitator client) on the facilitator, paying to PAY_TO."""
    gate = X402Gate(facilitator.url, PAY_TO, timeout=2.0)
    yield gate
    await gate.close()


@pytest.fixture
def business_id() -> str:
    """A business of the fast tier's caller (any id: nothing is stored outside the test's MemoryDatabase)."""
    return new_id()


@pytest.fixture
def database() -> MemoryDatabase:
    """The fast tier's unit of work (tests.memory): empty for each test."""
    return MemoryDatabase()


@pytest.fixture
def clock(monkeypatch):
    """The messaging use cases' clock (texts, consent, the compliance decision), at MIDDAY until a test moves
    `clock.now`."""
    class Clock:
        now = MIDDAY

    for module in (texts_service, consent_service, compliance_service):
        monkeypatch.setattr(module, "utcnow", lambda: Clock.now)
    return Clock
