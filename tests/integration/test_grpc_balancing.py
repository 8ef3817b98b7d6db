"""Mutual TLS over a name that resolves to several servers, as on Kubernetes: a headless Service's name
(`dns:///accounts:50051`) resolves to every pod, each pod presents its process's certificate naming that host
(deploy.generate: cert-manager's dnsNames), and the client checks each against the name it dialled, whichever
address answered. Servers and client are built as every process builds them (core.grpc_server.listen and
server_options, core.rpc.channel), with a DNS server of the test's own (tests.nameserver) for the cluster's."""
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer

from core import grpc_server, rpc, settings
from deploy.local.certs import Authority, write
from deploy.local.servers import free_port
from tests import nameserver

NAME = "accounts.switchboard.test"
CALLS = 20


class Counting(HealthServicer):
    """The standard health service, counting the checks it answers."""

    def __init__(self) -> None:
        super().__init__()
        self.checks = 0

    async def Check(self, request, context):
        self.checks += 1
        return await super().Check(request, context)


@pytest.fixture
async def resolver():
    served = await nameserver.serve()
    yield served
    served.close()


def with_tls(tls: dict[str, str], **changes) -> settings.Settings:
    files = {"grpc_tls_cert": "GRPC_TLS_CERT", "grpc_tls_key": "GRPC_TLS_KEY", "grpc_tls_ca": "GRPC_TLS_CA"}
    return settings.load().model_copy(update={field: Path(tls[variable]) for field, variable in files.items()} | changes)


async def test_each_replica_behind_a_name_is_checked_against_that_name(resolver, tmp_path):
    ca = Authority.new("switchboard-test-ca")
    port = free_port()
    servers, counts = [], []
    try:
        for n, hosts in ((1, [NAME]), (2, [NAME]), (3, ["calls.switchboard.test"])):  # the third: another's certificate
            tls = write(tmp_path / f"server-{n}", ca, f"replica-{n}", hosts)
            server_settings = with_tls(tls, grpc_host=f"127.0.0.{n + 1}")
            server = grpc.aio.server(options=grpc_server.server_options(server_settings))
            health = Counting()
            health_pb2_grpc.add_HealthServicer_to_server(health, server)
            grpc_server.listen(server, f"replica-{n}", port, server_settings)
            await server.start()
            servers.append(server)
            counts.append(health)
        client_settings = with_tls(write(tmp_path / "client", ca, "gateway", ["gateway"]))

        resolver.records[NAME] = ["127.0.0.2", "127.0.0.3"]
        async with rpc.channel(resolver.target(NAME, port), client_settings) as channel:
            for _ in range(CALLS):
                await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        served = [h.checks for h in counts[:2]]
        assert sum(served) == CALLS and min(served) >= CALLS / 4, served  # round robin over both

        resolver.records[NAME] = ["127.0.0.4"]  # a pod whose certificate names another host
        async with rpc.channel(resolver.target(NAME, port), client_settings) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE and counts[2].checks == 0
    finally:
        for server in servers:
            await server.stop(None)
