"""x402 v2 end to end without a chain: the real `X402Gate` (the `x402` package's resource server and HTTP
facilitator client) against the local facilitator (the package's `exact` EVM scheme on the in-memory ledger),
paid by the real payer (the package's client signing EIP-3009 with an `eth_account` key). Valid payments settle
and move the ledger; replayed, forged, short, over, expired, misdirected and unfunded ones are refused with the
protocol's reasons; malformed headers never reach the facilitator; its outages are `FacilitatorUnavailable`."""
import asyncio
import base64
import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from deploy.local.servers import free_port, stop_process, wait_for_port
from providers.x402 import DEFAULT_ASSET, DEFAULT_NETWORK
from providers.x402.facilitator.app import build_app
from providers.x402.facilitator.ledger import FACILITATOR_ADDRESS
from providers.x402.payer import address_of, forged_payment, new_private_key, pay, payment_response
from providers.x402.server import FacilitatorUnavailable, MalformedPayment, PaymentRefused, X402Gate
from tests.integration.servers import serving

ROOT = Path(__file__).resolve().parents[2]
PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
START = 1_000_000_000
PRICE = "49000000"  # 49 USDC
SIGNUP = "http://127.0.0.1:8080/api/v1/signup"
TX_HASH = re.compile(r"^0x[0-9a-f]{64}$")


def b64(value) -> str:
    return base64.b64encode((value if isinstance(value, str) else json.dumps(value)).encode()).decode()


def unb64(header: str) -> dict:
    return json.loads(base64.b64decode(header))


class Facilitator:
    """The local facilitator in this process, with its control plane."""

    def __init__(self):
        self.app = build_app(start_balance=START)
        self.server: TestServer | None = None  # while served

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    async def call(self, method: str, path: str, json_body=None, data=None) -> tuple[int, dict]:
        async with aiohttp.ClientSession() as s, s.request(method, self.url + path, json=json_body, data=data) as r:
            return r.status, await r.json()

    async def control(self, method: str, path: str, body=None):
        status, answer = await self.call(method, "/_facilitator" + path, body)
        assert status < 300, answer
        return answer

    async def ledger(self) -> dict:
        return await self.control("GET", "/settlements")


@pytest.fixture(scope="module")
async def facilitator():
    f = Facilitator()
    async with serving(f.app) as f.server:
        yield f


@pytest.fixture(scope="module")
async def gate(facilitator):
    g = X402Gate(facilitator.url, PAY_TO, timeout=2.0)
    yield g
    await g.close()


@pytest.fixture(autouse=True)
async def fresh_ledger(facilitator):
    await facilitator.control("POST", "/reset")


@pytest.fixture
async def asked(gate):
    """This request's requirements and their PAYMENT-REQUIRED header."""
    required = await gate.requirements(PRICE, SIGNUP, "Switchboard Starter, first month")
    return required, gate.encode_required(required)


async def refused(gate, header: str, required) -> PaymentRefused:
    with pytest.raises(PaymentRefused) as caught:
        await gate.verify_and_settle(header, required)
    return caught.value


async def test_supported_names_the_exact_scheme_on_our_network(facilitator, gate):
    status, body = await facilitator.call("GET", "/supported")
    assert status == 200
    assert body == {"kinds": [{"x402Version": 2, "scheme": "exact", "network": DEFAULT_NETWORK}], "extensions": [],
                    "signers": {"eip155:*": [FACILITATOR_ADDRESS]}}
    kind = await gate.check()
    assert (kind.x402_version, kind.scheme, kind.network) == (2, "exact", DEFAULT_NETWORK)
    assert (await gate.supported()).signers == {"eip155:*": [FACILITATOR_ADDRESS]}


async def test_the_402_asks_in_the_protocols_shape(gate, asked):
    required, header = asked
    decoded = unb64(header)
    assert decoded == gate.required_body(required)
    assert decoded == {
        "x402Version": 2, "error": "PAYMENT-SIGNATURE header is required",
        "resource": {"url": SIGNUP, "description": "Switchboard Starter, first month", "mimeType": "application/json"},
        "accepts": [{"scheme": "exact", "network": "eip155:84532", "asset": DEFAULT_ASSET, "amount": PRICE,
                     "payTo": PAY_TO, "maxTimeoutSeconds": 300, "extra": {"name": "USDC", "version": "2"}}]}
    with pytest.raises(ValueError):
        await gate.requirements("4.5", SIGNUP, "decimals are not atomic units")


async def test_a_valid_payment_verifies_then_settles_on_the_ledger(facilitator, gate, asked):
    required, header = asked
    key = new_private_key()
    payer = address_of(key)
    signature = pay(key, header, max_amount_atomic=PRICE)
    sent = unb64(signature)
    assert sent["x402Version"] == 2 and sent["accepted"] == unb64(header)["accepts"][0]
    assert sent["payload"]["authorization"]["from"] == payer and sent["payload"]["authorization"]["value"] == PRICE

    verified = await gate.verify(signature, required)
    assert verified.payer == payer and verified.requirements.amount == PRICE
    assert (await facilitator.ledger())["settlements"] == []  # verifying moves nothing

    settled = await gate.settle(verified)
    assert TX_HASH.match(settled.transaction)
    assert (settled.payer, settled.network, settled.amount) == (payer, DEFAULT_NETWORK, PRICE)
    response = payment_response(settled.response_header)
    assert response.success and response.transaction == settled.transaction
    assert (response.network, response.payer) == (DEFAULT_NETWORK, payer)

    ledger = await facilitator.ledger()
    [settlement] = ledger["settlements"]
    assert settlement["transaction"] == settled.transaction
    assert (settlement["payer"], settlement["payTo"], settlement["amount"]) == (payer, PAY_TO, PRICE)
    assert settlement["nonce"] == sent["payload"]["authorization"]["nonce"]
    assert ledger["balances"] == {payer: str(START - int(PRICE)), PAY_TO: str(START + int(PRICE))}
    with pytest.raises(ValueError):
        pay(key, header, max_amount_atomic=int(PRICE) - 1)  # the payer's own cap


async def test_a_replayed_payment_is_refused_and_charged_once(facilitator, gate, asked):
    required, header = asked
    key = new_private_key()
    signature = pay(key, header)
    verified = await gate.verify(signature, required)
    settled = await gate.settle(verified)

    again = await refused(gate, signature, required)  # the facilitator's simulation sees the nonce used
    assert again.reason == "invalid_exact_evm_nonce_already_used" and again.payer == address_of(key)
    with pytest.raises(PaymentRefused) as caught:  # a settle repeated after verifying: the ledger refuses it
        await gate.settle(verified)
    assert caught.value.reason == "invalid_exact_evm_nonce_already_used"
    failed = payment_response(caught.value.response_header)
    assert not failed.success and failed.transaction == ""
    assert failed.error_reason == "invalid_exact_evm_nonce_already_used"
    ledger = await facilitator.ledger()
    assert [s["transaction"] for s in ledger["settlements"]] == [settled.transaction]
    assert ledger["balances"][address_of(key)] == str(START - int(PRICE))


async def test_concurrent_settles_of_one_payment_charge_once(facilitator, gate, asked):
    required, header = asked
    verified = await gate.verify(pay(new_private_key(), header), required)
    outcomes = await asyncio.gather(*(gate.settle(verified) for _ in range(3)), return_exceptions=True)
    [settled] = [o for o in outcomes if not isinstance(o, Exception)]
    assert [o.reason for o in outcomes if isinstance(o, PaymentRefused)] == ["invalid_exact_evm_nonce_already_used"] * 2
    assert [s["transaction"] for s in (await facilitator.ledger())["settlements"]] == [settled.transaction]


async def test_refused_payments_move_nothing(facilitator, gate, asked):
    required, header = asked
    key = new_private_key()
    cases = {
        "invalid_exact_evm_payload_signature": forged_payment(header, claimed_payer=address_of(key)),
        "invalid_exact_evm_payload_authorization_value_mismatch": pay(key, header, amount_override=int(PRICE) - 1),
        "invalid_exact_evm_payload_recipient_mismatch": pay(key, header, pay_to_override=address_of(new_private_key())),
        "invalid_exact_evm_payload_authorization_valid_before": pay(key, header, valid_for_seconds=-60),
    }
    for reason, signature in cases.items():
        refusal = await refused(gate, signature, required)
        assert refusal.reason == reason and refusal.payer == address_of(key) and refusal.response_header is None
    # `exact` means exact: paying more is refused too.
    over = await refused(gate, pay(key, header, amount_override=int(PRICE) + 1), required)
    assert over.reason == "invalid_exact_evm_payload_authorization_value_mismatch"
    # A signature valid only for 5 more seconds is too close to expiry to settle.
    assert (await refused(gate, pay(key, header, valid_for_seconds=5), required)).reason == \
        "invalid_exact_evm_payload_authorization_valid_before"
    ledger = await facilitator.ledger()
    assert ledger["settlements"] == [] and ledger["balances"] == {} and ledger["usedNonces"] == 0


async def test_a_payment_for_other_terms_or_without_funds_is_refused(facilitator, gate, asked):
    required, header = asked
    key = new_private_key()
    # Honestly signed, but for a cheaper offer than this request asks: it matches none of our requirements.
    cheap = await gate.requirements("1000000", SIGNUP, "a cheaper plan")
    refusal = await refused(gate, pay(key, gate.encode_required(cheap)), required)
    assert (refusal.reason, refusal.message) == ("invalid_payment_requirements", "No matching payment requirements")
    # A wallet without the funds.
    await facilitator.control("POST", "/balances", {"address": address_of(key), "balance": "1000"})
    refusal = await refused(gate, pay(key, header), required)
    assert refusal.reason == "invalid_exact_evm_insufficient_balance"
    assert (await facilitator.ledger())["settlements"] == []


@pytest.mark.parametrize("header", [
    "", "not base64 at all!", b64("not json"), b64([1, 2]),
    b64({"x402Version": 1, "scheme": "exact", "network": "base-sepolia", "payload": {}}),
    b64({"x402Version": 2, "payload": {}}),
])
async def test_a_malformed_header_is_malformed(gate, asked, header):
    with pytest.raises(MalformedPayment):
        await gate.verify_and_settle(header, asked[0])


async def test_a_malformed_exact_payload_never_reaches_the_facilitator(facilitator, gate, asked):
    required, header = asked
    sent = unb64(pay(new_private_key(), header))
    for path, value in [("nonce", "0x1234"), ("value", "-1"), ("from", "alice"), ("validBefore", 10**80)]:
        broken = json.loads(json.dumps(sent))
        broken["payload"]["authorization"][path] = value
        with pytest.raises(MalformedPayment, match=path):
            await gate.verify(b64(broken), required)
    await facilitator.control("POST", "/faults", {"status": 500, "times": 1})  # would fail any facilitator call
    with pytest.raises(MalformedPayment, match="signature"):
        await gate.verify(b64({**sent, "payload": {**sent["payload"], "signature": "0xzz"}}), required)
    assert len(await facilitator.control("GET", "/faults")) == 1  # untouched


async def test_facilitator_failures_are_unavailable_and_a_retry_settles(facilitator, gate, asked):
    required, header = asked
    signature = pay(new_private_key(), header)
    await facilitator.control("POST", "/faults", {"status": 503, "path": "/verify"})
    with pytest.raises(FacilitatorUnavailable) as caught:
        await gate.verify(signature, required)
    assert caught.value.status == 503
    verified = await gate.verify(signature, required)

    await facilitator.control("POST", "/faults", {"status": 500, "path": "/settle"})
    with pytest.raises(FacilitatorUnavailable) as caught:
        await gate.settle(verified)
    assert caught.value.status == 500
    await facilitator.control("POST", "/faults", {"status": 401, "path": "/settle"})  # refused credentials
    with pytest.raises(FacilitatorUnavailable) as caught:
        await gate.settle(verified)
    assert caught.value.status == 401
    assert (await facilitator.ledger())["settlements"] == []
    settled = await gate.settle(verified)  # nothing moved before: the same payment settles now
    assert [s["transaction"] for s in (await facilitator.ledger())["settlements"]] == [settled.transaction]


async def test_a_slow_or_absent_facilitator_is_unavailable(facilitator, asked):
    required, header = asked
    slow = X402Gate(facilitator.url, PAY_TO, timeout=0.3)
    try:
        await slow.check()
        await facilitator.control("POST", "/faults", {"status": 0, "path": "/verify", "delay_seconds": 1})
        with pytest.raises(FacilitatorUnavailable, match="in time"):
            await slow.verify(pay(new_private_key(), header), required)
    finally:
        await slow.close()
    absent = X402Gate(f"http://127.0.0.1:{free_port()}", PAY_TO, timeout=1.0)
    try:
        with pytest.raises(FacilitatorUnavailable) as caught:
            await absent.check()
        assert caught.value.status is None
        with pytest.raises(FacilitatorUnavailable):
            await absent.requirements(PRICE, SIGNUP, "no facilitator, no 402")
    finally:
        await absent.close()


async def test_a_gate_on_another_network_is_refused_by_the_facilitator(facilitator):
    other = X402Gate(facilitator.url, PAY_TO, network="eip155:8453", timeout=1.0)
    try:
        with pytest.raises(FacilitatorUnavailable, match="does not serve exact on eip155:8453"):
            await other.check()
    finally:
        await other.close()


async def test_the_facilitator_api_refuses_what_is_not_a_v2_payment(facilitator, asked):
    _, header = asked
    sent = unb64(pay(new_private_key(), header))
    body = {"x402Version": 2, "paymentPayload": sent, "paymentRequirements": sent["accepted"]}
    status, answer = await facilitator.call("POST", "/verify", data=b"{not json")
    assert (status, answer["isValid"], answer["invalidReason"]) == (400, False, "invalid_payload")
    status, answer = await facilitator.call("POST", "/verify", {**body, "x402Version": 1})
    assert (status, answer["invalidReason"]) == (400, "invalid_x402_version")
    status, answer = await facilitator.call("POST", "/settle", {**body, "paymentRequirements": {"scheme": "exact"}})
    assert (status, answer["success"], answer["errorReason"]) == (400, False, "invalid_payment_requirements")
    elsewhere = {**sent["accepted"], "network": "eip155:1"}
    status, answer = await facilitator.call("POST", "/verify", {**body, "paymentPayload": {**sent, "accepted": elsewhere},
                                                                "paymentRequirements": elsewhere})
    assert (status, answer["isValid"], answer["invalidReason"]) == (200, False, "invalid_network")
    # Signed for the right terms over another token's domain: the signature checks out, the token does not.
    other_token = {**unb64(header), "accepts": [{**sent["accepted"], "asset": "0x" + "ab" * 20}]}
    paid = unb64(pay(new_private_key(), b64(other_token)))
    status, answer = await facilitator.call("POST", "/verify", {**body, "paymentPayload": paid,
                                                                "paymentRequirements": paid["accepted"]})
    assert (status, answer["isValid"], answer["invalidReason"]) == (200, False, "asset_not_deployed_contract")
    # The same requirements but another token: the signature no longer recovers to the payer.
    status, answer = await facilitator.call("POST", "/verify", {**body, "paymentRequirements": paid["accepted"]})
    assert (status, answer["invalidReason"]) == (200, "invalid_exact_evm_payload_signature")
    status, answer = await facilitator.call("POST", "/verify", body)
    assert (status, answer) == (200, {"isValid": True, "payer": sent["payload"]["authorization"]["from"]})
    status, answer = await facilitator.call("POST", "/_facilitator/faults", {"status": 200})
    assert status == 400 and "status" in answer["error"]


def test_the_facilitator_runs_as_a_process_and_stops_on_sigterm(tmp_path):
    port, log = free_port(), tmp_path / "facilitator.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "providers.x402.facilitator", "--start-balance", "5"],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={"PYTHONPATH": f"{ROOT}:{ROOT / 'protos'}", "PATH": "/usr/bin:/bin",
                                     "X402_FACILITATOR_PORT": str(port)})
    try:
        wait_for_port(port, 20, proc, "x402 facilitator", log)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_facilitator/settlements", timeout=5) as r:
            assert json.load(r)["startBalance"] == "5"
    finally:
        stop_process(proc, signal.SIGTERM, 10)
    assert proc.returncode == 0, log.read_text()
    assert "x402 facilitator listening" in log.read_text()
