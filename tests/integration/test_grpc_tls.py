"""Mutual TLS between processes (GRPC_TLS_*): a real webhooks process (no consumers, no calls of its own, so it
takes no work from the shared stack) started with TLS on beside the shared plaintext stack, on a port of its own.
Only a client presenting a certificate of the process's CA gets an answer; the kubelet's plaintext probe has the
health check alone on GRPC_HEALTH_PORT."""
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from core import registry, rpc, settings
from deploy.local.certs import Authority, write
from deploy.local.servers import free_port, wait_for_port
from deploy.local.stack import Process
from switchboard.v1 import webhooks_pb2, webhooks_pb2_grpc
from tests.waiting import wait_until

CHECK = health_pb2.HealthCheckRequest(service="")


@pytest.fixture(scope="module")
def ca():
    return Authority.new("switchboard-test-ca")


@pytest.fixture(scope="module")
def tls_env(ca, tmp_path_factory):
    """GRPC_TLS_* of a certificate the CA issued for 127.0.0.1."""
    return write(tmp_path_factory.mktemp("grpc-tls"), ca, "webhooks")


@pytest.fixture(scope="module")
def webhooks_tls(stack, tls_env):
    """The webhooks service with the shared stack's settings, TLS on, on free ports: (address, health port)."""
    port, health_port = free_port(), free_port()
    process = Process("webhooks-tls", "services.webhooks", port, registry.SECRETS["webhooks"],
                      env={**tls_env, "WEBHOOKS_GRPC_PORT": str(port), "GRPC_HEALTH_PORT": str(health_port)})
    stack.processes.append(process)  # stopped with the stack should the test stop early
    stack.spawn(process)
    try:
        wait_for_port(port, 30, process.proc, process.name, process.log)
        yield f"127.0.0.1:{port}", health_port
    finally:
        stack.stop_process(process)
        stack.processes.remove(process)
    assert "serving gRPC on port" in process.log.read_text() and "with mutual TLS" in process.log.read_text()


@pytest.fixture
def tls_settings(monkeypatch, tls_env):
    """A client process's settings with the same GRPC_TLS_* (on the local stack every process shares one set)."""
    for variable, path in tls_env.items():
        monkeypatch.setenv(variable, path)
    return settings.load()


async def refusal(credentials: grpc.ChannelCredentials | None, address: str) -> grpc.StatusCode:
    """The status a health check over such a channel gets (it must not be answered)."""
    async with (grpc.aio.insecure_channel(address) if credentials is None
                else grpc.aio.secure_channel(address, credentials)) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await health_pb2_grpc.HealthStub(channel).Check(CHECK, timeout=5)
    return refused.value.code()


async def test_a_client_with_a_certificate_of_the_ca_is_answered(webhooks_tls, tls_settings):
    address, _ = webhooks_tls
    async with rpc.channel(address, tls_settings) as channel:  # what every process (and the gateway's /readyz) opens
        assert await wait_until(lambda: rpc.health(channel), "the TLS service to be ready",
                                lambda status: status == "ok", timeout=20)


async def test_a_client_without_a_certificate_or_in_plaintext_is_refused(webhooks_tls, tls_env):
    address, _ = webhooks_tls
    with open(tls_env["GRPC_TLS_CA"], "rb") as ca_file:
        server_trusted_only = grpc.ssl_channel_credentials(root_certificates=ca_file.read())
    assert await refusal(server_trusted_only, address) == grpc.StatusCode.UNAVAILABLE
    assert await refusal(None, address) == grpc.StatusCode.UNAVAILABLE


async def test_a_certificate_of_another_ca_is_refused(webhooks_tls, tls_env):
    address, _ = webhooks_tls
    cert, key = Authority.new("someone-elses-ca").issue("intruder", ["127.0.0.1"])
    with open(tls_env["GRPC_TLS_CA"], "rb") as ca_file:
        credentials = grpc.ssl_channel_credentials(root_certificates=ca_file.read(), private_key=key,
                                                   certificate_chain=cert)
    assert await refusal(credentials, address) == grpc.StatusCode.UNAVAILABLE


async def test_the_plaintext_health_port_serves_the_health_check_alone(webhooks_tls):
    _, health_port = webhooks_tls
    async with grpc.aio.insecure_channel(f"127.0.0.1:{health_port}") as channel:
        assert await wait_until(lambda: rpc.health(channel), "the probe port to answer",
                                lambda status: status == "ok", timeout=20)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await webhooks_pb2_grpc.WebhooksStub(channel).ListSubscriptions(webhooks_pb2.ListSubscriptionsRequest(),
                                                                             timeout=5)
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
