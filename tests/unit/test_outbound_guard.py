"""The guard on requests the platform makes on a user's behalf (core.outbound) and its users: the OAuth client
metadata documents, the webhook sender and the recording proxy's rules (issue 36)."""

import aiohttp
import pytest
from aiohttp import web

from core.outbound import GuardedClient, RefusedAddress, TooLarge, address_refusal, host_refusal
from core.settings import load
from gateway.routes.calls import at_storage, audio_type
from services.accounts.identity.client_documents import ClientDocuments
from services.accounts.identity.oauth_domain import OAuthError
from services.webhooks.delivery import Sender

TIMEOUT = aiohttp.ClientTimeout(total=5)


@pytest.mark.parametrize("address, refused", [
    ("2002:0a00:0005::1", "tunnelled"),  # 6to4 of 10.0.0.5
    ("2002:5db8:d822::1", "tunnelled"),  # 6to4 of a public address: still a relay away from anywhere
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "tunnelled"),  # Teredo
    ("168.63.129.16", "metadata"),  # Azure's wireserver
    ("fec0::1", "private"),  # IPv6 site-local
    ("93.184.216.34", None), ("2606:2800:220:1::1", None),
])
def test_tunnels_and_every_clouds_metadata_address_are_refused(address, refused):
    why = address_refusal(address, allow_loopback=True)
    assert (why is None) if refused is None else (refused in why), why


@pytest.mark.parametrize("host, refused", [
    ("10.0.0.5", "private"), ("::ffff:10.0.0.5", "private"), ("[::1]", "loopback"), ("169.254.169.254", "metadata"),
    # what aiohttp takes for an address (and so never resolves) though it is none in standard form
    ("2130706433", "standard form"), ("127.1", "standard form"), ("10.0.0.5.", "standard form"),
    ("93.184.216.34", None), ("example.com", None), ("0x7f.0.0.1", None),  # a name: the resolver checks it
])
def test_hosts_written_as_addresses_are_checked_before_connecting(host, refused):
    why = host_refusal(host, allow_loopback=False)
    assert (why is None) if refused is None else (refused in why), why


@pytest.fixture
async def server():
    """A server on loopback: its port and the paths it was asked for."""
    hits = []

    async def document(request):
        hits.append(request.path)
        return web.json_response({"client_id": "x"})

    async def moved(request):
        hits.append(request.path)
        raise web.HTTPFound("/document")

    async def big(request):
        hits.append(request.path)
        response = web.StreamResponse()  # chunked: no length declared
        await response.prepare(request)
        for _ in range(4):
            await response.write(b"x" * 1024)
        return response

    app = web.Application()
    app.router.add_get("/document", document)
    app.router.add_post("/hooks", document)
    app.router.add_get("/moved", moved)
    app.router.add_get("/big", big)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield site._server.sockets[0].getsockname()[1], hits
    await runner.cleanup()


async def test_the_guarded_client_refuses_before_connecting_and_never_follows_redirects(server):
    port, hits = server
    async with GuardedClient(False, timeout=TIMEOUT, max_bytes=1024) as http:
        for url in ("https://10.0.0.5:8443/x", f"http://2130706433:{port}/document", f"http://127.1:{port}/document",
                    f"http://127.0.0.1:{port}/document", f"http://localhost:{port}/document"):
            with pytest.raises(RefusedAddress):
                async with http.request("GET", url):
                    pass
    assert hits == []
    async with GuardedClient(True, timeout=TIMEOUT, max_bytes=3000) as http:
        async with http.request("GET", f"http://127.0.0.1:{port}/moved") as r:
            assert r.status == 302
        async with http.request("GET", f"http://127.0.0.1:{port}/document") as r:
            assert r.status == 200 and b"client_id" in await http.read(r)
        async with http.request("GET", f"http://127.0.0.1:{port}/big") as r:
            with pytest.raises(TooLarge):
                await http.read(r)
    assert hits == ["/moved", "/document", "/big"]


async def test_a_metadata_document_at_a_private_address_is_refused_without_connecting(server):
    port, hits = server
    documents = ClientDocuments(allow_loopback=True)  # as on a developer's stack: loopback allowed, private not
    try:
        with pytest.raises(OAuthError) as refused:
            await documents.fetch("https://10.0.0.5:8443/x")
        assert "a private or reserved address" in refused.value.description
    finally:
        await documents.close()
    documents = ClientDocuments(allow_loopback=False)  # as in production
    try:
        for url in (f"http://127.0.0.1:{port}/document", f"http://2130706433:{port}/document"):
            with pytest.raises(OAuthError) as refused:
                await documents.fetch(url)
            assert "loopback" in refused.value.description or "standard form" in refused.value.description
    finally:
        await documents.close()
    assert hits == []


async def test_the_webhook_sender_refuses_tunnels_and_addresses_in_other_forms(server):
    port, hits = server
    sender = Sender(allow_loopback=False)
    try:
        for url in ("http://[2002:a00:5::1]:9/hooks", f"http://2130706433:{port}/hooks"):
            outcome = await sender.post(url, b"{}", {})
            assert outcome.status_code is None and outcome.error.startswith("refused"), (url, outcome)
    finally:
        await sender.close()
    assert hits == []


def test_recordings_are_fetched_from_the_voice_providers_storage_only():
    vapi = ("https://storage.vapi.ai",)
    assert at_storage("https://storage.vapi.ai/0b1c-mono.wav", vapi)
    assert at_storage("https://STORAGE.vapi.ai:443/0b1c-mono.wav", vapi)
    for other in ("http://storage.vapi.ai/a.wav", "https://storage.vapi.ai:8443/a.wav", "https://evil.example/a.wav",
                  "https://storage.vapi.ai.evil.example/a.wav", "https://storage.vapi.ai@evil.example/a.wav",
                  "https://10.0.0.5/a.wav", "not a url"):
        assert not at_storage(other, vapi), other
    base = load().model_copy(update={"voice_recording_origins": ()})
    assert base.model_copy(update={"voice_api_url": "https://api.vapi.ai"}).recording_origins == vapi
    assert base.model_copy(update={"voice_api_url": "http://127.0.0.1:8790"}).recording_origins == (
        "http://127.0.0.1:8790",)  # the simulator serves its recordings itself
    assert base.model_copy(update={"voice_recording_origins": ("https://rec.example",)}).recording_origins == (
        "https://rec.example",)


def test_a_recording_is_always_served_as_audio():
    assert audio_type("audio/mpeg") == "audio/mpeg" and audio_type("audio/wav") == "audio/wav"
    for other in ("text/html", "image/svg+xml", "application/octet-stream", ""):
        assert audio_type(other) == "audio/wav"
