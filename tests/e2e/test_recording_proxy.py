"""The recording proxy fetches only from the voice provider's storage and serves audio, never a page, on the API's
origin (issue 36)."""
import aiohttp
import pytest
from aiohttp import web

from tests.calling import settled


@pytest.fixture
async def elsewhere():
    """A server on another origin than the voice provider's storage: a page, counted when fetched."""
    hits = []

    async def page(request):
        hits.append(request.path)
        return web.Response(text="<script>alert(document.cookie)</script>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/page.html", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/page.html", hits
    await runner.cleanup()


async def test_a_recording_is_served_as_audio_and_only_from_the_providers_storage(api, account, calling_agent,
                                                                                  db, elsewhere):
    key = account["key"]
    _, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={"agent_id": calling_agent["id"],
                                                                           "to": "+14155550195"})
    await settled(api, key, call["id"])
    _, rec, _ = await api.request("GET", "/api/v1/recordings", key=key, params={"call_id": call["id"]})
    async with aiohttp.ClientSession() as session:
        async with session.get(rec["recording_url"]) as r:
            assert r.status == 200 and r.headers["Content-Type"] == "audio/wav"
            assert r.headers["X-Content-Type-Options"] == "nosniff" and (await r.read())[:4] == b"RIFF"
        page, hits = elsewhere
        await db.execute("UPDATE calls.calls SET recording_url = $1 WHERE id = $2::uuid", page, call["id"])
        async with session.get(rec["recording_url"]) as r:
            body = await r.json()
            assert r.status == 500 and body["error"]["code"] == "provider_error", body
            assert "voice provider's storage" in body["error"]["message"]
        assert hits == []  # not even asked
