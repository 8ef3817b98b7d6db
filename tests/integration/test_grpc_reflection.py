"""gRPC reflection lists every method to whoever reaches a port: on for the local stack's grpcurl, off anywhere else
(security review, issue 36)."""
import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from core import caller, settings
from core.grpc_server import serve
from deploy.local.servers import free_port
from tests.integration.servers import accepting
from tests.waiting import wait_until


async def _listed_services(port: int) -> list[str]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="liveness"),
                                                                 timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        call = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(timeout=5)
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        await call.done_writing()
        reply = await call.read()
        return [s.name for s in reply.list_services_response.service]


@pytest.mark.parametrize("environment", ["local", "production"])
async def test_reflection_is_served_on_the_local_stack_only(stack, monkeypatch, environment):
    monkeypatch.setenv("DATABASE_URL", stack.database_url)
    monkeypatch.setenv("NATS_URL", stack.nats_url)
    monkeypatch.setenv("SHUTDOWN_DELAY_SECONDS", "0")  # stopped by the test alone
    signing, verify = caller.new_key("reflection-test:1")  # deployed, a process is given its keys
    monkeypatch.setenv("CALLER_SIGNING_KEY", signing)
    monkeypatch.setenv("CALLER_VERIFY_KEYS", verify)
    port, stop = free_port(), asyncio.Event()
    configured = settings.load().model_copy(update={"environment": environment})
    task = asyncio.create_task(serve("reflection-test", port, configured, lambda runtime: None, stop_event=stop))
    try:
        await wait_until(lambda: accepting(port), f"the server to listen on {port}", timeout=5, interval=0.05)
        if environment == "local":
            assert "grpc.health.v1.Health" in await _listed_services(port)
        else:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _listed_services(port)
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        stop.set()
        await task
