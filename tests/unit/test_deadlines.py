"""Deadlines (core.deadlines): each rpc declares its own in its proto, a client waits at most that and never past
what is left of the request it serves, services pass on what is left of theirs, and each gateway route publishes the
time limit its requests are answered within."""
import asyncio

import pytest
from grpc_health.v1 import health_pb2

from contracts import evals
from core import caller, deadlines, registry
from core.interceptors import wrap_unary
from core.rpc import Client
from core.settings import Settings
from core.tenant import Tenant
from core.to_completion import to_completion
from gateway.openapi import build
from gateway.route import ROUTE_LIMIT_SECONDS
from gateway.route_table import all_routes
from providers.messaging.client import TwilioClient
from providers.payments.client import StripePayments
from providers.voice.vapi.client import VapiClient
from services.accounts.provisioning.service import INLINE_SECONDS
from switchboard.v1 import accounts_pb2, costs_pb2

SERVICES = [*(s.descriptor() for s in registry.SERVICES), costs_pb2.DESCRIPTOR.services_by_name["Costs"]]
METHODS = [m for s in SERVICES for m in s.methods]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.full_name)
def test_every_rpc_declares_its_deadline(method):
    assert 0 < deadlines.declared(method) <= 60


def test_an_rpc_without_one_is_refused():
    with pytest.raises(LookupError, match="declares no deadline"):
        deadlines.declared(health_pb2.DESCRIPTOR.services_by_name["Health"].methods_by_name["Check"])


def test_authentication_on_every_request_takes_milliseconds():
    for name in ("AuthenticateKey", "AuthenticateSession", "AuthenticateAccessToken"):
        assert deadlines.of_rpc(f"switchboard.v1.Accounts/{name}") < 1


def default(name: str):
    return Settings.model_fields[name].default


def test_provider_bound_rpcs_fit_their_providers_attempts():
    """As options.proto sizes them, with the default settings: every attempt of the provider's client fits."""
    voice = VapiClient("http://voice", "key", timeout=default("voice_timeout_seconds"))
    for rpc in ("Calls/CreateCall", "Calls/PlaceCall", "Agents/GetAgent", "Agents/CreateAgent", "Agents/UpdateAgent",
                "Agents/AssignPhoneNumber", "Evals/CreateEval", "Evals/GetEvalRuns", "Sdr/ActOnLead"):
        assert deadlines.of_rpc(f"switchboard.v1.{rpc}") > voice.max_attempts * voice.timeout.total, rpc
    sms = TwilioClient("http://sms", "AC1", "token", timeout=default("sms_timeout_seconds"))
    for rpc in ("SendSms", "PlaceSms"):  # a send is one attempt, never repeated
        assert deadlines.of_rpc(f"switchboard.v1.Messaging/{rpc}") > sms.timeout.total
    card = StripePayments("http://payments", "sk_test", timeout=default("payments_timeout_seconds"))
    assert deadlines.of_rpc("switchboard.v1.Accounts/OpenCheckout") > (card.max_network_retries + 1) * card.timeout
    x402 = 3 * default("x402_timeout_seconds")  # a verification, and a settlement of twice that
    assert deadlines.of_rpc("switchboard.v1.Accounts/PayByX402") > x402
    assert deadlines.of_rpc("switchboard.v1.Accounts/Signup") >= x402 + INLINE_SECONDS
    # The eval gate's wait (and the port's 10 s more) fits inside the gated write's deadline.
    assert default("eval_gate_max_wait_seconds") + 10 <= deadlines.of_rpc("switchboard.v1.Agents/UpdateAgent")


class Recording:
    """A stand-in for a generated stub: the deadline each method was called with."""

    def __init__(self):
        self.timeouts: dict[str, float] = {}

    def __getattr__(self, name):
        async def call(request, *, metadata, timeout, wait_for_ready):
            self.timeouts[name] = timeout
        return call


async def test_a_client_waits_the_methods_own_deadline_within_the_request_budget(signing):
    stub = Recording()
    client = Client(stub, registry.service("accounts").descriptor(), "accounts")
    await client.AuthenticateKey(accounts_pb2.AuthenticateKeyRequest())
    await client.Signup(accounts_pb2.SignupRequest())
    assert stub.timeouts == {"AuthenticateKey": 0.5, "Signup": 45.0}
    with deadlines.within(3.0):
        await client.Signup(accounts_pb2.SignupRequest())
        assert 2.9 < stub.timeouts["Signup"] <= 3.0
        await client.AuthenticateKey(accounts_pb2.AuthenticateKeyRequest())
        assert stub.timeouts["AuthenticateKey"] == 0.5
        await client.GetBalance(accounts_pb2.GetBalanceRequest(), timeout=60)  # its own, for one call
        assert 2.9 < stub.timeouts["GetBalance"] <= 3.0
    with deadlines.within(0.01):
        await asyncio.sleep(0.02)
        await client.ListKeys(accounts_pb2.ListKeysRequest())  # spent: it fails at once, unsent
        assert stub.timeouts["ListKeys"] == 0.0


def test_a_budget_never_outlasts_the_one_it_runs_in():
    assert deadlines.time_left() is None and deadlines.bounded(7.0) == 7.0
    with deadlines.within(2.0):
        with deadlines.within(10.0):
            assert 1.9 < deadlines.time_left() <= 2.0
        with deadlines.within(None):
            assert 1.9 < deadlines.time_left() <= 2.0
        with deadlines.within(1.0):
            assert 0.9 < deadlines.bounded(5.0) <= 1.0 and deadlines.bounded(5.0, spare=2.0) == 0.0
        assert deadlines.detached().run(deadlines.time_left) is None
        assert 1.9 < deadlines.time_left() <= 2.0
    assert deadlines.time_left() is None


class Call:
    """A stand-in for a gRPC server context: the deadline the caller sent, seconds from now."""

    def __init__(self, remaining):
        self.remaining = remaining

    def invocation_metadata(self):
        return caller.metadata_for(Tenant(), "sdr")

    def time_remaining(self):
        return self.remaining


async def test_a_service_passes_on_what_is_left_of_its_callers_deadline(signing):
    async def behavior(request, context):
        return deadlines.time_left()

    handler = wrap_unary(behavior, "/switchboard.v1.Test/Method")
    assert 0.2 < await handler(None, Call(0.25)) <= 0.25
    assert await handler(None, Call(None)) is None


async def test_work_that_must_finish_is_not_held_to_its_callers_budget():
    async def work():
        return deadlines.time_left()

    with deadlines.within(1.0):
        assert await to_completion(work()) is None


def test_each_route_gives_its_rpcs_their_deadlines_and_publishes_its_limit():
    document = build(all_routes(), "http://127.0.0.1:8080")
    for route in all_routes():
        assert route.time_limit >= max([ROUTE_LIMIT_SECONDS, *(deadlines.of_rpc(r) for r in route.rpcs)])
        operation = document["paths"][route.path][route.method.lower()]
        assert operation["x-time-limit-seconds"] == route.time_limit
        if route.rpcs:
            assert "`timeout`" in operation["responses"]["504"]["description"]
    [run] = [r for r in all_routes() if (r.method, r.path) == ("POST", "/api/v1/evals/run")]
    assert run.time_limit > evals.MAX_WAIT_MS[1] / 1000  # the longest wait a run may ask for
