"""The trust boundary between processes (core.caller): a call that does not prove its caller reaches no handler, on
every RPC of every service, and changes nothing; a proven caller sees only its own businesses.

A raw gRPC client stands in for a process that can reach a service's port (a compromised pod, a debugging shell):
it sends the old plain tenant metadata, no token, a token signed by a key no service accepts, an expired token, a
tampered one, one a worker's own key signed for a wider caller than a worker may name, a service's vouching for
an API key without the gateway's token for it, a token the gateway minted for another service (replayed from a
sniffed hop), one from the webhooks dispatcher (which calls no service) and one from a worker that does not call
the service."""
from __future__ import annotations

import base64
import json
import time
import uuid

import grpc
import jwt
import pytest
from google.protobuf import symbol_database

from core import caller, registry
from core.tenant import Tenant
from switchboard.v1 import accounts_pb2, sdr_pb2, sdr_pb2_grpc
from tests.tenants import signed, signer


def _widened(token: str) -> str:
    """The token with one more business in its claims and its signature kept."""
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["biz"].append(str(uuid.uuid4()))
    return f"{head}.{base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b'=').decode()}.{signature}"


def _by_hand(stack, process: str, to: str, **claims) -> str:
    """A token `process`'s own key signs by hand (past its own Signer's checks) for the service `to`."""
    keys = signer(stack, process).keys
    now = int(time.time())
    return jwt.encode({"acc": str(uuid.uuid4()), "biz": [], "key": "", "scp": [], "bnd": "", "std": [], "act": [],
                       "iss": process, "aud": to, "iat": now, "exp": now + 60, **claims},
                      keys.signing, algorithm="EdDSA", headers={"kid": keys.kid})


def unproven(stack, business_id: str, to: str) -> dict[str, tuple]:
    """Every way of calling the service `to` for `business_id` without proof, by name."""
    victim = Tenant(account_id=str(uuid.uuid4()), business_ids=(business_id,), api_key_id=str(uuid.uuid4()),
                    scopes=("*",))
    stranger = caller.Signer(caller.KeyRing.parse(caller.new_key("gateway:1")[0], ""))  # right name, wrong key
    now = int(time.time())
    worker_key = signer(stack, "calls").keys
    expired = jwt.encode({"acc": victim.account_id, "biz": [business_id], "key": "", "scp": [], "bnd": "", "std": [],
                          "iss": "calls", "aud": to, "iat": now - 600, "exp": now - 300},
                         worker_key.signing, algorithm="EdDSA", headers={"kid": worker_key.kid})
    elsewhere = next(s.name for s in registry.SERVICES if s.name != to)
    ways = {
        "no token": (),
        "plain tenant metadata": (("x-sb-account", victim.account_id), ("x-sb-businesses", business_id),
                                  ("x-sb-scopes", "*")),
        "a key no service accepts": ((caller.METADATA_KEY, stranger.token_for(victim, to)),),
        "an expired token": ((caller.METADATA_KEY, expired),),
        "a tampered token": ((caller.METADATA_KEY, _widened(signed(stack, Tenant(
            account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),)), to=to)[0][1])),),
        "a worker vouching for an API key": ((caller.METADATA_KEY, _by_hand(
            stack, "runs-scheduler", to, biz=[business_id], key=victim.api_key_id, scp=["*"], act=["gateway"])),),
        "a service vouching for an API key without proof": ((caller.METADATA_KEY, _by_hand(
            stack, "sdr", to, biz=[business_id], key=victim.api_key_id, scp=["*"], act=["gateway"])),),
        "a service vouching for an API key with another caller's proof": ((caller.METADATA_KEY, _by_hand(
            stack, "sdr", to, biz=[business_id], key=victim.api_key_id, scp=["*"], act=["gateway"],
            prf=signer(stack).token_for(Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),),
                                               api_key_id=str(uuid.uuid4()), scopes=("*",)), "sdr"))),),
        "the gateway's token for another service": ((caller.METADATA_KEY, signer(stack).token_for(victim, elsewhere)),),
        "the webhooks dispatcher for one business": ((caller.METADATA_KEY, _by_hand(
            stack, "webhooks-dispatcher", to, biz=[business_id])),),
    }
    if not registry.may_call("runs-scheduler", to):
        ways["a worker that does not call this service"] = ((caller.METADATA_KEY, _by_hand(
            stack, "runs-scheduler", to, biz=[business_id])),)
    return ways


@pytest.mark.parametrize("service", registry.SERVICES, ids=lambda s: s.name)
async def test_every_rpc_refuses_a_caller_without_proof(stack, service):
    """No RPC can be served without the interceptor: each one, called without proof, is unauthenticated."""
    ways = unproven(stack, str(uuid.uuid4()), service.name)
    descriptor = service.descriptor()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process(service.name).port}") as channel:
        for method in descriptor.methods:
            request_cls = symbol_database.Default().GetSymbol(method.input_type.full_name)
            call = channel.unary_unary(f"/{descriptor.full_name}/{method.name}",
                                       request_serializer=request_cls.SerializeToString,
                                       response_deserializer=lambda raw: raw)
            for way, metadata in ways.items():
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await call(request_cls(), metadata=metadata, timeout=10)
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, (method.name, way,
                                                                                  refused.value.details())


@pytest.fixture
async def sdr(stack):
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('sdr').port}") as channel:
        yield sdr_pb2_grpc.SdrStub(channel)


async def _lead(api, account, name: str) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"], json={
        "business_id": account["business_id"], "name": name, "phone": "+14155550190"})
    assert status == 201, lead
    return lead


async def _as_read(api, account, lead_id: str) -> dict:
    status, lead, _ = await api.request("GET", "/api/v1/leads", key=account["key"], params={"id": lead_id})
    assert status == 200, lead
    return lead


async def test_a_refused_call_changes_nothing(stack, api, account, sdr):
    lead = await _lead(api, account, "Kept As Is")
    before = await _as_read(api, account, lead["id"])
    change = sdr_pb2.UpdateLeadRequest(id=lead["id"], fields=sdr_pb2.LeadFields(name="Taken Over", status="lost"))
    for way, metadata in unproven(stack, account["business_id"], "sdr").items():
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await sdr.UpdateLead(change, metadata=metadata, timeout=10)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, way
    assert await _as_read(api, account, lead["id"]) == before


async def test_a_proven_caller_of_one_business_cannot_reach_anothers(stack, api, account, sdr):
    lead = await _lead(api, account, "Not Yours")
    before = await _as_read(api, account, lead["id"])
    other = await api.signup(business_name="Proven Elsewhere")
    theirs = signed(stack, Tenant(account_id=str(uuid.uuid4()), business_ids=(other["business_id"],),
                                  api_key_id=str(uuid.uuid4()), scopes=("*",)), to="sdr")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await sdr.GetLead(sdr_pb2.GetLeadRequest(id=lead["id"]), metadata=theirs, timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await sdr.UpdateLead(sdr_pb2.UpdateLeadRequest(id=lead["id"], fields=sdr_pb2.LeadFields(status="lost")),
                             metadata=theirs, timeout=10)
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert await _as_read(api, account, lead["id"]) == before
    mine = signed(stack, Tenant(account_id=str(uuid.uuid4()), business_ids=(account["business_id"],),
                                api_key_id=str(uuid.uuid4()), scopes=("*",)), to="sdr")
    assert (await sdr.GetLead(sdr_pb2.GetLeadRequest(id=lead["id"]), metadata=mine, timeout=10)).id == lead["id"]


def _raw(channel: grpc.aio.Channel, service: registry.Service, method: str):
    descriptor = service.descriptor()
    request_cls = symbol_database.Default().GetSymbol(descriptor.methods_by_name[method].input_type.full_name)
    return channel.unary_unary(f"/{descriptor.full_name}/{method}", request_serializer=request_cls.SerializeToString,
                               response_deserializer=lambda raw: raw), request_cls


async def _refused(call, request, metadata) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call(request, metadata=metadata, timeout=10)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, refused.value.details()
    return refused.value.details()


async def test_an_owners_token_to_calls_replayed_against_any_other_service_is_refused(stack, account):
    """A token sniffed on the gateway's hop to calls (minted as the gateway mints it for the owner's key) works on
    calls alone: every other service refuses it, for every business of the owner."""
    owner = Tenant(account_id=str(uuid.uuid4()), business_ids=(account["business_id"],), api_key_id=str(uuid.uuid4()),
                   scopes=("*",), standings=((account["business_id"], "trialing"),))
    sniffed = ((caller.METADATA_KEY, signer(stack).token_for(owner, "calls")),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('calls').port}") as channel:
        list_calls, request_cls = _raw(channel, registry.service("calls"), "ListCalls")
        await list_calls(request_cls(), metadata=sniffed, timeout=10)  # where it was sent, it serves
    for service in registry.SERVICES:
        if service.name == "calls":
            continue
        async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process(service.name).port}") as channel:
            first = service.descriptor().methods[0].name
            call, request_cls = _raw(channel, service, first)
            assert f"not for {service.name}" in await _refused(call, request_cls(), sniffed), service.name


async def test_only_the_gateway_records_usage_and_runs_the_pipelines_window(stack, account):
    """calls may call accounts and sdr for a business, but neither RecordUsage (billing's meter) nor RunScheduled
    (the sales pipeline's window, the CronJob's through the gateway)."""
    business = Tenant(account_id="service:calls", business_ids=(account["business_id"],))
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('accounts').port}") as channel:
        record, request_cls = _raw(channel, registry.service("accounts"), "RecordUsage")
        request = accounts_pb2.RecordUsageRequest(entries=[accounts_pb2.UsageEntry(
            id=str(uuid.uuid4()), account_id=str(uuid.uuid4()), endpoint="/api/v1/calls", method="POST",
            status_code=201)])
        assert "calls may not call RecordUsage" in await _refused(record, request, signed(stack, business, "calls",
                                                                                           to="accounts"))
        await record(request_cls(), metadata=signed(stack, Tenant(), to="accounts"), timeout=10)  # the gateway's
        get_workspace, get_cls = _raw(channel, registry.service("accounts"), "GetWorkspace")
        with pytest.raises(grpc.aio.AioRpcError) as answered:  # its other calls are served: past the interceptor
            await get_workspace(get_cls(id=str(uuid.uuid4())), metadata=signed(stack, business, "calls", to="accounts"),
                                timeout=10)
        assert answered.value.code() != grpc.StatusCode.UNAUTHENTICATED
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('sdr').port}") as channel:
        run, request_cls = _raw(channel, registry.service("sdr"), "RunScheduled")
        assert "calls may not call RunScheduled" in await _refused(
            run, request_cls(business_id=account["business_id"]), signed(stack, business, "calls", to="sdr"))


async def test_a_worker_makes_only_the_rpcs_it_declares(stack, account):
    """The runs scheduler's key, for a business, places calls (PlaceCall, past the interceptor) but lists none."""
    business = Tenant(account_id="service:runs-scheduler", business_ids=(account["business_id"],))
    md = signed(stack, business, "runs-scheduler", to="calls")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('calls').port}") as channel:
        list_calls, request_cls = _raw(channel, registry.service("calls"), "ListCalls")
        assert "runs-scheduler may not call ListCalls" in await _refused(list_calls, request_cls(), md)
        place, place_cls = _raw(channel, registry.service("calls"), "PlaceCall")
        with pytest.raises(grpc.aio.AioRpcError) as answered:  # an empty request: refused by the handler
            await place(place_cls(), metadata=md, timeout=10)
        assert answered.value.code() != grpc.StatusCode.UNAUTHENTICATED
