"""The real SMS-provider client against the simulator process: sends and their signed status callbacks, Twilio's
refusals and its test credentials' magic numbers, the simulator-only delivery outcomes, credentials, reads, the
retry rules (a send is never repeated, a read is; a callback is made once more only when its connection failed),
misbehaving callbacks, inbound texts answered with TwiML, and Twilio's opt-out keyword handling."""
import asyncio
import logging
import re
import signal
import subprocess
import sys
from email.utils import parsedate_to_datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.messaging import signatures
from providers.messaging.adapter import ProviderError
from providers.messaging.client import TwilioClient
from tests.integration.servers import serving
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
TOKEN = "sim-auth-token-0123456789"
TEST_ACCOUNT_SID, TEST_TOKEN = "AC" + "fedcba9876543210" * 2, "sim-test-auth-token"
BUSINESS = "+14155552671"
TEXTER = "+14155550123"
ACCOUNT = f"/2010-04-01/Accounts/{ACCOUNT_SID}"
CALLBACK_FIELDS = {"MessageSid", "SmsSid", "AccountSid", "From", "To", "MessageStatus", "SmsStatus", "ApiVersion"}


class Receiver:
    """Our side: the status-callback and inbound-text endpoints, recording every request as it arrived."""

    def __init__(self):
        self.requests: list[dict] = []
        self.fail_next = 0  # refuse the next status callbacks with 503
        self.drop_next = 0  # drop the connection of the next status callbacks without an answer
        self.app = web.Application()
        self.app.router.add_post("/status", self.status)
        self.app.router.add_post("/sms", self.sms)
        self.app.router.add_post("/sms-silent", self.sms)
        self.server: TestServer | None = None  # while served

    async def _record(self, request: web.Request) -> dict:
        form = dict(await request.post())
        record = {"path": request.path, "url": str(request.url), "form": form,
                  "signature": request.headers.get(signatures.SIGNATURE_HEADER, ""),
                  "idempotency": request.headers.get("I-Twilio-Idempotency-Token"), "accepted": True}
        record["valid"] = signatures.is_valid(TOKEN, record["url"], form, record["signature"])
        self.requests.append(record)
        return record

    async def status(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        if self.drop_next:
            self.drop_next -= 1
            record["accepted"] = False
            request.transport.close()  # the connection fails: no answer at all
            return web.Response(status=204)
        if self.fail_next:
            self.fail_next -= 1
            record["accepted"] = False
            return web.Response(status=503, text="try later")
        return web.Response(status=204)

    async def sms(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        if request.path == "/sms-silent":
            return web.Response(text=signatures.twiml_reply([]), content_type="text/xml")
        texts = [f"Thanks! You said: {record['form']['Body']}", "Reply STOP to opt out & <never> miss a deal"]
        return web.Response(text=signatures.twiml_reply(texts), content_type="text/xml")

    def url(self, path: str) -> str:
        return str(self.server.make_url(path))

    def callbacks(self, sid: str) -> list[dict]:
        return [r for r in self.requests if r["path"] == "/status" and r["form"].get("MessageSid") == sid]

    async def wait_for(self, sid: str, count: int, timeout: float = 5.0) -> list[dict]:
        """The first `count` callbacks about a message; then a moment more, to see that no others follow."""
        await wait_until(lambda: self.callbacks(sid), f"{count} callbacks of {sid}", lambda got: len(got) >= count,
                         timeout=timeout, interval=0.02)
        await asyncio.sleep(0.3)
        return self.callbacks(sid)


class Simulator:
    """`python -m providers.messaging.simulator` as a child process, with its control plane."""

    def __init__(self, folder: Path, inbound_url: str):
        self.port, self.proc, self.inbound_url = free_port(), None, inbound_url
        self.log = folder / "simulator.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "providers.messaging.simulator", "--port", str(self.port),
                 "--account-sid", ACCOUNT_SID, "--inbound-url", self.inbound_url,
                 "--test-account-sid", TEST_ACCOUNT_SID],
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin", "SMS_AUTH_TOKEN": TOKEN,
                     "SMS_SIM_TEST_AUTH_TOKEN": TEST_TOKEN, "SMS_SIM_TIME_SCALE": "0.05"})
        wait_for_port(self.port, 20, self.proc, "messaging simulator", self.log)

    def stop(self) -> int | None:
        stop_process(self.proc, signal.SIGTERM, 10)
        return self.proc.returncode if self.proc else None

    async def control(self, method: str, path: str, json=None, expect: int | None = None):
        async with aiohttp.ClientSession() as s, s.request(method, f"{self.url}/_simulator{path}", json=json) as r:
            if expect is None:
                assert r.status < 300, await r.text()
            else:
                assert r.status == expect, await r.text()
            return await r.json()

    async def fault(self, method: str, path: str, status: int, times: int = 1, delay_seconds: float = 0) -> None:
        await self.control("POST", "/faults", {"method": method, "path": path, "status": status, "times": times,
                                               "delay_seconds": delay_seconds})

    async def attempts(self, method: str, path: str) -> list:
        """Statuses of the logged API requests with exactly this method and path, oldest first."""
        return [e["status"] for e in await self.control("GET", f"/log?path={path}")
                if e["method"] == method and e["path"] == path]

    async def raw(self, method: str, path: str, *, auth: tuple[str, str] | None = (ACCOUNT_SID, TOKEN), data=None):
        headers = {"Authorization": aiohttp.encode_basic_auth(*auth)} if auth else {}
        async with aiohttp.ClientSession() as s, s.request(method, self.url + path, headers=headers, data=data) as r:
            return r.status, dict(r.headers), await r.json()


@pytest.fixture(scope="module")
async def receiver():
    r = Receiver()
    async with serving(r.app) as r.server:
        yield r


@pytest.fixture(scope="module")
def simulator(tmp_path_factory, receiver):
    sim = Simulator(tmp_path_factory.mktemp("sms-sim"), receiver.url("/sms"))
    sim.start()
    yield sim
    assert sim.stop() == 0  # SIGTERM: a clean exit


@pytest.fixture
async def client(simulator):
    c = TwilioClient(simulator.url, ACCOUNT_SID, TOKEN, timeout=2.0)
    yield c
    await c.close()
    await simulator.control("DELETE", "/faults")
    await simulator.control("DELETE", "/callbacks")
    await simulator.control("DELETE", "/delivery-outcomes")
    await simulator.control("DELETE", "/opt-out")


async def test_the_api_answers_in_twilios_shape(simulator):
    assert await simulator.control("GET", "/health") == {"status": "ok"}
    status, headers, body = await simulator.raw("GET", f"{ACCOUNT}.json", auth=None)
    assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
    assert body == {"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003",
                    "status": 401}
    status, _, body = await simulator.raw("GET", "/2010-04-01/Calls.json")
    assert status == 404 and body["code"] == 20404 and body["status"] == 404
    other = "AC" + "f" * 32
    status, _, body = await simulator.raw("GET", f"/2010-04-01/Accounts/{other}/Messages.json")
    assert status == 404 and body["code"] == 20404
    # Twilio takes form fields: a JSON body has no To.
    status, _, body = await simulator.raw("POST", f"{ACCOUNT}/Messages.json", data=b'{"To": "+14155550123"}')
    assert status == 400 and body["code"] == 21604


async def test_a_delivered_text_reports_sent_then_delivered_signed(client, receiver):
    callback = receiver.url("/status") + "?tenant=t-1&kind=reminder"  # signed over the exact URL, query included
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Your table for 2 is booked for 7pm.",
                                     status_callback=callback)
    assert re.fullmatch(r"SM[0-9a-f]{32}", made["sid"]) and made["account_sid"] == ACCOUNT_SID
    assert made["status"] == "queued" and made["direction"] == "outbound-api" and made["api_version"] == "2010-04-01"
    assert (made["to"], made["from"], made["body"]) == (TEXTER, BUSINESS, "Your table for 2 is booked for 7pm.")
    assert made["error_code"] is None and made["error_message"] is None and made["date_sent"] is None
    assert made["num_segments"] == "1" and made["num_media"] == "0"
    assert made["uri"] == f"{ACCOUNT}/Messages/{made['sid']}.json"
    assert parsedate_to_datetime(made["date_created"]).utcoffset().total_seconds() == 0  # RFC 2822 in GMT

    calls = await receiver.wait_for(made["sid"], 2)
    assert [c["form"]["MessageStatus"] for c in calls] == ["sent", "delivered"]
    assert all(c["valid"] and c["url"] == callback for c in calls)
    sent, delivered = (c["form"] for c in calls)
    assert set(sent) == CALLBACK_FIELDS and set(delivered) == CALLBACK_FIELDS | {"RawDlrDoneDate"}
    assert sent["SmsSid"] == made["sid"] and sent["AccountSid"] == ACCOUNT_SID and sent["SmsStatus"] == "sent"
    assert (sent["To"], sent["From"], sent["ApiVersion"]) == (TEXTER, BUSINESS, "2010-04-01")
    # The signature covers every parameter and the URL: a changed status or another URL does not verify.
    assert not signatures.is_valid(TOKEN, callback, {**delivered, "MessageStatus": "failed"}, calls[1]["signature"])
    assert not signatures.is_valid(TOKEN, receiver.url("/status"), delivered, calls[1]["signature"])
    assert not signatures.is_valid("another-token", callback, delivered, calls[1]["signature"])

    now = await client.get_message(made["sid"])
    assert now["status"] == "delivered" and now["date_sent"] and now["error_code"] is None
    assert {k: now[k] for k in ("sid", "to", "from", "body", "date_created")} == \
        {k: made[k] for k in ("sid", "to", "from", "body", "date_created")}


async def test_the_magic_numbers_work_with_test_credentials_only(simulator, client, receiver):
    """Twilio's test credentials: each magic From and To number answers its code; a send that passes is a queued
    Message that no GET finds, texts no one and is followed by no status callback; every other resource is 403."""
    test = TwilioClient(simulator.url, TEST_ACCOUNT_SID, TEST_TOKEN)
    try:
        for to, from_, code in (
                (TEXTER, "+15005550001", 21212), (TEXTER, "+15005550007", 21606), (TEXTER, "+15005550008", 21611),
                (TEXTER, BUSINESS, 21606),  # the live account's number is not the test account's
                ("+15005550001", "+15005550006", 21211), ("+15005550002", "+15005550006", 21612),
                ("+15005550003", "+15005550006", 21408), ("+15005550004", "+15005550006", 21610),
                ("+15005550009", "+15005550006", 21614), ("4155550123", "+15005550006", 21211)):
            with pytest.raises(ProviderError) as err:
                await test.send_message(to=to, from_=from_, body="Hi", status_callback=receiver.url("/status"))
            assert (err.value.status, err.value.code) == (400, code), (to, from_)
        made = await test.send_message(to=TEXTER, from_="+15005550006", body="Hi",
                                       status_callback=receiver.url("/status"))
        assert made["status"] == "queued" and made["account_sid"] == TEST_ACCOUNT_SID and made["sid"].startswith("SM")
        for read in (test.get_message(made["sid"]), test.check(), test.list_messages()):
            with pytest.raises(ProviderError) as err:
                await read
            assert (err.value.status, err.value.code) == (403, 20008)
        with pytest.raises(ProviderError) as err:
            await client.get_message(made["sid"])  # not the live account's either
        assert err.value.status == 404
        await asyncio.sleep(0.5)
        assert receiver.callbacks(made["sid"]) == []  # test credentials trigger no status callback
    finally:
        await test.close()
    mixed = TwilioClient(simulator.url, TEST_ACCOUNT_SID, TOKEN)  # the test account with the live token
    try:
        with pytest.raises(ProviderError) as err:
            await mixed.send_message(to=TEXTER, from_="+15005550006", body="Hi")
        assert (err.value.status, err.value.code) == (401, 20003)
    finally:
        await mixed.close()

    # With the live credentials the magic numbers mean nothing: a text to +15005550004 is a text like any other.
    made = await client.send_message(to="+15005550004", from_=BUSINESS, body="Hi", status_callback=receiver.url("/status"))
    assert [c["form"]["MessageStatus"] for c in await receiver.wait_for(made["sid"], 2)] == ["sent", "delivered"]


async def test_the_simulator_only_delivery_outcomes(client, simulator, receiver):
    """Twilio has no way to choose a real send's outcome; the simulator's own switch does, per To number, with the
    status Twilio reports each carrier error with: undelivered after sent (a carrier's receipt), failed straight
    from queued (never sent). A callback carries ErrorCode, never an ErrorMessage."""
    expected = {"+14155550103": (30003, ["sent", "undelivered"], "Unreachable destination handset"),
                "+14155550105": (30005, ["sent", "undelivered"], "Unknown destination handset"),
                "+14155550106": (30006, ["sent", "undelivered"], "Landline or unreachable carrier"),
                "+14155550107": (30001, ["failed"], "Queue overflow")}
    for to, (code, _, _) in expected.items():
        set_to = await simulator.control("POST", "/delivery-outcomes", {"to": to, "error_code": code})
        assert set_to == {"to": to, "error_code": code}
    assert await simulator.control("GET", "/delivery-outcomes") == {to: v[0] for to, v in expected.items()}
    made = await asyncio.gather(*(client.send_message(to=to, from_=BUSINESS, body="Hi",
                                                      status_callback=receiver.url("/status")) for to in expected))
    for message, (to, (code, statuses, meaning)) in zip(made, expected.items(), strict=True):
        assert message["status"] == "queued"
        calls = await receiver.wait_for(message["sid"], len(statuses))
        assert [c["form"]["MessageStatus"] for c in calls] == statuses, to
        assert all(c["valid"] for c in calls)
        assert all("ErrorMessage" not in c["form"] for c in calls)
        assert "ErrorCode" not in calls[0]["form"] or len(calls) == 1
        assert calls[-1]["form"]["ErrorCode"] == str(code)
        now = await client.get_message(message["sid"])
        assert (now["status"], now["error_code"], now["error_message"]) == (statuses[-1], code, meaning)
        assert (now["date_sent"] is None) == (statuses == ["failed"])  # a failed message never left
    assert await simulator.control("DELETE", "/delivery-outcomes") == {"cleared": 4}
    body = await simulator.control("POST", "/delivery-outcomes", {"to": "4155550103", "error_code": 21211,
                                                                  "when": "now"}, expect=400)
    assert all(part in body["message"] for part in ("property when should not exist", "to must be",
                                                    "error_code must be one of"))


@pytest.mark.parametrize("fields,code", [
    ({"to": ""}, 21604), ({"from_": ""}, 21603), ({"body": ""}, 21602), ({"body": "x" * 1601}, 21617),
    ({"to": "4155550123"}, 21211), ({"to": "+1415555"}, 21211), ({"from_": "Switchboard!"}, 21212),
    ({"status_callback": "ftp://example.com/status"}, 21609), ({"status_callback": "https://bad_host.example/"}, 21609),
])
async def test_twilios_refusals(client, fields, code):
    with pytest.raises(ProviderError) as err:
        await client.send_message(**{"to": TEXTER, "from_": BUSINESS, "body": "Hello", **fields})
    assert (err.value.status, err.value.code) == (400, code)
    assert err.value.message and ACCOUNT_SID not in err.value.message


async def test_segments_are_counted_as_twilio_counts_them(client):
    longest = await client.send_message(to=TEXTER, from_=BUSINESS, body="x" * 1600)
    assert longest["num_segments"] == "11"  # 153 GSM-7 characters per concatenated segment
    assert (await client.send_message(to=TEXTER, from_=BUSINESS, body="x" * 160))["num_segments"] == "1"
    assert (await client.send_message(to=TEXTER, from_=BUSINESS, body="Привет! " * 9))["num_segments"] == "2"  # UCS-2


async def test_wrong_credentials_are_refused_and_not_retried(simulator):
    wrong = TwilioClient(simulator.url, ACCOUNT_SID, "wrong-token")
    before = await simulator.attempts("GET", f"{ACCOUNT}.json")
    try:
        with pytest.raises(ProviderError) as err:
            await wrong.check()
        assert (err.value.status, err.value.code) == (401, 20003)
        assert err.value.message == "messaging provider rejected our credentials"
        with pytest.raises(ProviderError) as err:
            await wrong.send_message(to=TEXTER, from_=BUSINESS, body="Hi")
        assert (err.value.status, err.value.code) == (401, 20003)
    finally:
        await wrong.close()
    assert await simulator.attempts("GET", f"{ACCOUNT}.json") == [*before, 401]
    assert "wrong-token" not in repr(wrong)


async def test_get_list_and_check(client):
    account = await client.check()
    assert account["sid"] == ACCOUNT_SID and account["status"] == "active" and account["type"] == "Full"
    assert account["uri"] == f"{ACCOUNT}.json" and "auth_token" not in account  # never handed on

    to = "+14155550142"
    first = await client.send_message(to=to, from_=BUSINESS, body="one")
    second = await client.send_message(to=to, from_="+14155550143", body="two")
    assert [m["sid"] for m in await client.list_messages(to=to)] == [second["sid"], first["sid"]]  # newest first
    assert [m["sid"] for m in await client.list_messages(to=to, from_=BUSINESS)] == [first["sid"]]
    assert [m["sid"] for m in await client.list_messages(to=to, page_size=1)] == [second["sid"]]
    assert (await client.get_message(first["sid"]))["body"] == "one"

    with pytest.raises(ProviderError) as err:
        await client.get_message("SM" + "0" * 32)
    assert (err.value.status, err.value.code) == (404, 20404)
    assert ACCOUNT_SID not in err.value.message and "{AccountSid}" in err.value.message
    with pytest.raises(ProviderError) as err:
        await client.get_message("../../Calls")  # one path segment: it cannot reach another route
    assert (err.value.status, err.value.code) == (404, 20404)
    with pytest.raises(ValueError):
        await client.get_message("")


async def test_a_send_is_never_retried_but_reads_are(client, simulator, caplog):
    send = f"{ACCOUNT}/Messages.json"
    for status in (500, 503, 429):
        before = await simulator.attempts("POST", send)
        await simulator.fault("POST", send, status)
        with pytest.raises(ProviderError) as err:
            await client.send_message(to=TEXTER, from_=BUSINESS, body="Only once")
        assert err.value.status == status and "Injected" not in err.value.message  # no 5xx body
        assert await simulator.attempts("POST", send) == [*before, status]  # one attempt, at once

    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Hi")
    path = f"{ACCOUNT}/Messages/{made['sid']}.json"
    await simulator.fault("GET", path, 503, times=2)
    with caplog.at_level(logging.WARNING, logger="providers.messaging.client"):
        assert (await client.get_message(made["sid"]))["sid"] == made["sid"]
    assert await simulator.attempts("GET", path) == [503, 503, 200]
    retries = [r.getMessage() for r in caplog.records if r.name == "providers.messaging.client"]
    assert len(retries) == 2 and "GET /Messages/{Sid} attempt 1/3" in retries[0] and TOKEN not in retries[0]

    await simulator.fault("GET", path, 502, times=10)
    with pytest.raises(ProviderError) as err:
        await client.get_message(made["sid"])
    assert err.value.status == 502 and err.value.message == "messaging provider failed (GET /Messages/{Sid}: 502)"
    assert await simulator.attempts("GET", path) == [503, 503, 200, 502, 502, 502]  # max_attempts, then the error


async def test_a_fault_without_times_hits_every_matching_request_until_cleared(client, simulator):
    send = f"{ACCOUNT}/Messages.json"
    before = await simulator.attempts("POST", send)
    added = await simulator.control("POST", "/faults", {"method": "POST", "path": f"{ACCOUNT}/Messages", "status": 500,
                                                        "times": None})
    assert added["fault"]["times"] is None
    for _ in range(3):
        with pytest.raises(ProviderError) as err:
            await client.send_message(to=TEXTER, from_=BUSINESS, body="During the outage")
        assert err.value.status == 500
    status, _, body = await simulator.raw("POST", send, data={"To": TEXTER, "From": BUSINESS, "Body": "Raw"})
    assert status == 500 and body["message"] == "Injected fault" and body["status"] == 500  # Twilio's shape
    assert [f["times"] for f in await simulator.control("GET", "/faults")] == [None]  # still pending
    assert await simulator.control("DELETE", "/faults") == {"cleared": 1}
    assert (await client.send_message(to=TEXTER, from_=BUSINESS, body="After it"))["sid"]
    assert await simulator.attempts("POST", send) == [*before, 500, 500, 500, 500, 201]
    body = await simulator.control("POST", "/faults", {"path": "/2010-04-01", "times": 0}, expect=400)
    assert "times must be a positive integer, or null (until cleared)" in body["message"]


async def test_a_send_that_timed_out_is_not_repeated_though_it_went_out(simulator):
    quick = TwilioClient(simulator.url, ACCOUNT_SID, TOKEN, timeout=0.3)
    to = "+14155550177"
    try:
        await simulator.fault("POST", f"{ACCOUNT}/Messages.json", 0, delay_seconds=0.6)  # slow, then served
        with pytest.raises(ProviderError) as err:
            await quick.send_message(to=to, from_=BUSINESS, body="Are you there?")
        assert err.value.status is None and err.value.message.endswith("timed out")
        await asyncio.sleep(0.5)
        sent = await quick.list_messages(to=to)
        assert len(sent) == 1 and sent[0]["body"] == "Are you there?"  # a repeat would have texted twice
    finally:
        await quick.close()


async def test_an_unreachable_provider(caplog):
    gone = TwilioClient(f"http://127.0.0.1:{free_port()}", ACCOUNT_SID, TOKEN)
    try:
        with caplog.at_level(logging.WARNING, logger="providers.messaging.client"):
            with pytest.raises(ProviderError) as err:
                await gone.check()
            assert err.value.status is None and err.value.code is None
            assert err.value.message == "messaging provider unreachable (GET /Accounts/{AccountSid}): could not connect"
            with pytest.raises(ProviderError) as err:
                await gone.send_message(to=TEXTER, from_=BUSINESS, body="Hi")
            assert err.value.status is None and "could not connect" in err.value.message
    finally:
        await gone.close()
    logged = [r.getMessage() for r in caplog.records if r.name == "providers.messaging.client"]
    assert sum("GET /Accounts/{AccountSid} attempt" in m for m in logged) == 3
    assert sum("POST /Messages" in m for m in logged) == 1


async def test_misbehaving_callbacks(client, simulator, receiver):
    status_url = receiver.url("/status")
    await simulator.control("POST", "/callbacks", {"reorder": True})
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Reordered", status_callback=status_url)
    calls = await receiver.wait_for(made["sid"], 2)
    assert [c["form"]["MessageStatus"] for c in calls] == ["delivered", "sent"] and all(c["valid"] for c in calls)
    assert (await client.get_message(made["sid"]))["status"] == "delivered"  # the truth is unchanged

    await simulator.control("POST", "/callbacks", {"duplicate": True})
    await simulator.control("POST", "/delivery-outcomes", {"to": "+14155550103", "error_code": 30003})
    made = await client.send_message(to="+14155550103", from_=BUSINESS, body="Twice", status_callback=status_url)
    calls = await receiver.wait_for(made["sid"], 4)
    assert [c["form"]["MessageStatus"] for c in calls] == ["sent", "sent", "undelivered", "undelivered"]
    assert calls[0]["idempotency"] == calls[1]["idempotency"] != calls[2]["idempotency"] == calls[3]["idempotency"]
    assert calls[0]["form"] == calls[1]["form"] and calls[2]["form"] == calls[3]["form"]

    await simulator.control("POST", "/callbacks", {"bad_signature": True, "times": 1})
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Forged?", status_callback=status_url)
    calls = await receiver.wait_for(made["sid"], 2)
    assert [c["form"]["MessageStatus"] for c in calls] == ["sent", "delivered"]
    assert not any(c["valid"] for c in calls) and all(c["signature"] for c in calls)

    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Back to normal", status_callback=status_url)
    assert all(c["valid"] for c in await receiver.wait_for(made["sid"], 2))  # the script was used up
    body = await simulator.control("POST", "/callbacks", {"reorder": "yes", "loud": True}, expect=400)
    assert "reorder must be a boolean" in body["message"] and "property loud should not exist" in body["message"]


async def test_a_callback_is_made_once_more_only_when_its_connection_failed(client, receiver):
    """Twilio's default connection settings: one retry (rc=1), at once and with the same idempotency token, when the
    connection failed (rp=ct); an answer, a 5xx included, is final."""
    receiver.drop_next = 1
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Persistent",
                                     status_callback=receiver.url("/status"))
    calls = await receiver.wait_for(made["sid"], 3)
    assert [(c["form"]["MessageStatus"], c["accepted"]) for c in calls] == \
        [("sent", False), ("sent", True), ("delivered", True)]
    assert calls[0]["idempotency"] == calls[1]["idempotency"]  # the same request again

    receiver.drop_next = 2  # the retry fails too: the status is lost
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Unlucky", status_callback=receiver.url("/status"))
    calls = await receiver.wait_for(made["sid"], 3)
    assert [(c["form"]["MessageStatus"], c["accepted"]) for c in calls] == \
        [("sent", False), ("sent", False), ("delivered", True)]

    receiver.fail_next = 1
    made = await client.send_message(to=TEXTER, from_=BUSINESS, body="Refused", status_callback=receiver.url("/status"))
    calls = await receiver.wait_for(made["sid"], 2)
    assert [(c["form"]["MessageStatus"], c["accepted"]) for c in calls] == [("sent", False), ("delivered", True)]


async def test_an_inbound_text_and_its_twiml_reply(client, simulator, receiver):
    before = len(receiver.requests)
    answer = await simulator.control("POST", "/inbound", {"from": TEXTER, "to": BUSINESS, "body": "Open today?"})
    assert answer["status"] == 200 and re.fullmatch(r"SM[0-9a-f]{32}", answer["sid"])
    assert answer["replies"] == ["Thanks! You said: Open today?", "Reply STOP to opt out & <never> miss a deal"]
    webhook = receiver.requests[before]
    assert webhook["path"] == "/sms" and webhook["valid"]  # the simulator's inbound URL, signed
    form = webhook["form"]
    assert (form["MessageSid"], form["SmsSid"], form["SmsMessageSid"]) == (answer["sid"],) * 3
    assert (form["From"], form["To"], form["Body"], form["AccountSid"]) == (TEXTER, BUSINESS, "Open today?", ACCOUNT_SID)
    assert (form["NumMedia"], form["NumSegments"], form["ApiVersion"]) == ("0", "1", "2010-04-01")
    assert form["FromCountry"] == form["ToCountry"] == "US"

    inbound = await client.get_message(answer["sid"])
    assert (inbound["direction"], inbound["status"], inbound["from"]) == ("inbound", "received", TEXTER)
    replies = [m for m in await client.list_messages(to=TEXTER, from_=BUSINESS) if m["direction"] == "outbound-reply"]
    assert [m["body"] for m in replies[:2]] == answer["replies"][::-1]  # newest first
    assert all(m["status"] == "delivered" for m in replies[:2])

    silent = await simulator.control("POST", "/inbound", {"from": TEXTER, "to": BUSINESS, "body": "Thanks",
                                                          "url": receiver.url("/sms-silent")})
    assert silent["status"] == 200 and silent["replies"] == [] and silent["auto_reply"] is None
    missing = await simulator.control("POST", "/inbound", {"from": TEXTER, "to": BUSINESS,
                                                           "url": receiver.url("/nowhere")}, expect=400)
    assert "body must be a non-empty string" in missing["message"]
    gone = await simulator.control("POST", "/inbound", {"from": TEXTER, "to": BUSINESS, "body": "Hello?",
                                                        "url": f"http://127.0.0.1:{free_port()}/sms"}, expect=502)
    assert "could not be reached" in gone["message"]
    notfound = await simulator.control("POST", "/inbound", {"from": TEXTER, "to": BUSINESS, "body": "Hello?",
                                                            "url": receiver.url("/nowhere")})
    assert notfound["status"] == 404 and notfound["replies"] == []


async def opt_out_handling(simulator, texter: str, body: str, to: str = BUSINESS, url: str | None = None) -> dict:
    return await simulator.control("POST", "/inbound", {"from": texter, "to": to, "body": body,
                                                        **({"url": url} if url else {})})


async def test_twilios_default_opt_out_handling(client, simulator, receiver):
    """STOP blocks the texter for that number: Twilio confirms it, our TwiML replies are refused (21610), and so is
    every later send from that number until START, which Twilio confirms too, beside our own replies (two answers).
    HELP gets Twilio's help text, none while blocked. The webhook still carries every keyword, without OptOutType."""
    texter, before = "+14155550161", len(receiver.requests)
    stop = await opt_out_handling(simulator, texter, " stop ")
    assert stop["auto_reply"].startswith("You have successfully been unsubscribed") and "START" in stop["auto_reply"]
    assert stop["replies"] == [] and len(stop["refused"]) == 2  # our TwiML never reaches them
    webhook = receiver.requests[before]["form"]
    assert webhook["Body"] == " stop " and "OptOutType" not in webhook
    with pytest.raises(ProviderError) as err:
        await client.send_message(to=texter, from_=BUSINESS, body="One more thing")
    assert (err.value.status, err.value.code) == (400, 21610)
    assert err.value.message == "Attempt to send to unsubscribed recipient"
    await client.send_message(to=texter, from_="+14155550143", body="From another number")  # blocked per number
    refused = [m for m in await client.list_messages(to=texter, from_=BUSINESS) if m["direction"] == "outbound-reply"]
    assert {(m["status"], m["error_code"]) for m in refused if m["body"] in stop["refused"]} == {("failed", 21610)}
    assert (await opt_out_handling(simulator, texter, "HELP"))["auto_reply"] is None  # not while blocked
    state = await simulator.control("GET", "/opt-out")
    assert {"from": BUSINESS, "to": texter} in state["blocked"] and state["handling"] == "default"

    start = await opt_out_handling(simulator, texter, "Start")
    assert start["auto_reply"].startswith("You have successfully been re-subscribed")
    assert len(start["replies"]) == 2  # ours too: the texter is answered twice
    help_ = await opt_out_handling(simulator, texter, "info")
    assert help_["auto_reply"] == "Reply STOP to unsubscribe. Msg&Data Rates May Apply." and len(help_["replies"]) == 2
    assert (await client.send_message(to=texter, from_=BUSINESS, body="Welcome back"))["status"] == "queued"
    plain = await opt_out_handling(simulator, texter, "stop please")  # only a keyword alone counts
    assert plain["auto_reply"] is None and len(plain["replies"]) == 2


async def test_advanced_opt_out_and_handling_turned_off(client, simulator, receiver):
    """A number of a Messaging Service with Advanced Opt-Out: the same blocking and replies, and the webhook carries
    OptOutType. A number whose account had the handling turned off: keywords are texts like any other, answered by
    our TwiML alone, and nothing is blocked."""
    advanced, off, texter = "+14155550144", "+14155550145", "+14155550162"
    assert (await simulator.control("POST", "/opt-out", {"handling": "advanced", "number": advanced}))["numbers"] == \
        {advanced: "advanced"}
    await simulator.control("POST", "/opt-out", {"handling": "off", "number": off})
    for body, kind in (("STOP", "STOP"), ("unstop", "START"), ("Help", "HELP"), ("Hello", None)):
        before = len(receiver.requests)
        await opt_out_handling(simulator, texter, body, to=advanced)
        assert receiver.requests[before]["form"].get("OptOutType") == kind, body
        assert receiver.requests[before]["valid"]  # OptOutType is signed like every parameter

    stop = await opt_out_handling(simulator, texter, "STOP", to=off)
    assert stop["auto_reply"] is None and len(stop["replies"]) == 2 and stop["refused"] == []
    assert "OptOutType" not in receiver.requests[-1]["form"]
    assert (await client.send_message(to=texter, from_=off, body="Still here"))["status"] == "queued"

    body = await simulator.control("POST", "/opt-out", {"handling": "none", "number": "415"}, expect=400)
    assert "handling must be one of default, advanced, off" in body["message"] and "number must be" in body["message"]
    assert await simulator.control("DELETE", "/opt-out") == {"cleared": 2}
