"""gRPC balancing on the scaled-out stack: one client's calls are shared by a service's replicas.

The stack's own replicas are addressed as gRPC's `ipv4:` list (deploy.local.stack): one gateway's calls reach both
replicas of accounts. On Kubernetes a client is given a name instead (`dns:///accounts:50051`, a headless Service
resolving to every ready pod) and learns of a new pod only when it resolves the name again, which it does when a
connection closes: a server's max_connection_age closes each in turn. The local stack runs no DNS of its own, so
the second test gives the client a name served by a DNS server of the test's (tests.nameserver) and starts
replicas of accounts as pods behind a headless Service are, one address each (127.0.0.2, 127.0.0.3) on one port:
the client, its channel options and the servers' are the platform's own (core.rpc, core.grpc_server)."""
import asyncio
import signal
import uuid

import pytest

from core import costs, rpc, settings
from core.tenant import Tenant
from deploy.local.servers import free_port, stop_processes
from switchboard.v1 import accounts_pb2
from tests import nameserver
from tests.api import new_account
from tests.costs import spent_at
from tests.scrape import scrape, value
from tests.tenants import signed
from tests.waiting import wait_until

CALLS = 20
NAME = "accounts.switchboard.test"
LIST = {"rpc_service": "switchboard.v1.Accounts", "rpc_method": "ListWorkspaces", "rpc_grpc_status_code": "0"}


async def test_one_gateways_calls_are_shared_by_both_replicas_of_a_service(scaled, gateways):
    account = await new_account(gateways[0])
    try:
        tag = uuid.uuid4().hex
        for _ in range(CALLS):  # one gateway: one client of accounts
            status, body, _ = await gateways[0].request("GET", "/api/v1/workspaces", key=account["key"],
                                                        headers={costs.HEADER: tag})
            assert status == 200, body
        spent = [await spent_at(p.port, tag) for p in scaled.pools["accounts"]]
        served = [s.get(costs.SQL, 0) for s in spent]  # each listing reads the same statements
        assert len(served) == 2 and min(served) >= sum(served) / 4, spent
    finally:
        await account["dashboard"].close()


@pytest.fixture
async def resolver():
    served = await nameserver.serve()
    yield served
    served.close()


async def listed(metrics_port: int) -> float:
    return value(await scrape(metrics_port), "rpc_server_duration_seconds_count", **LIST)


async def test_a_client_of_a_name_balances_over_its_replicas_and_finds_a_new_one(scaled, resolver):
    port = free_port()
    # each replica closes a connection after a second (GOAWAY), as it would after 5 minutes by default
    aged = {"GRPC_MAX_CONNECTION_AGE_SECONDS": "1", "GRPC_MAX_CONNECTION_AGE_GRACE_SECONDS": "1"}
    replicas = []

    async def replica(n: int):
        env = {**aged, "METRICS_PORT": str(free_port())}
        started = await asyncio.to_thread(scaled.add_replica, "accounts", f"accounts-dns-{n}", env,
                                          host=f"127.0.0.{n + 1}", port=port)
        replicas.append(started)
        return started

    try:
        # both start at once (a process takes seconds to start); the second is a pod not yet ready: not in the name
        first, second = await asyncio.gather(replica(1), replica(2))
        replicas.sort(key=lambda r: r.name)
        resolver.records[NAME] = ["127.0.0.2"]
        client_settings = settings.load().model_copy(update={
            "addresses": {"accounts": resolver.target(NAME, port)}, "grpc_dns_min_resolution_seconds": 0.2})
        client, channel = rpc.connect("accounts", client_settings)
        who = signed(scaled, Tenant(account_id=str(uuid.uuid4()), business_ids=(str(uuid.uuid4()),),
                                    api_key_id=str(uuid.uuid4())), to="accounts")

        async def call() -> None:
            await client.ListWorkspaces(accounts_pb2.ListWorkspacesRequest(), metadata=who)

        for _ in range(5):
            await call()
        assert (await listed(first.metrics_port), await listed(second.metrics_port)) == (5, 0)  # one resolved

        resolver.records[NAME].append("127.0.0.3")  # the new pod is ready: the name resolves to it from now on

        async def second_served() -> float:
            await call()
            return await listed(second.metrics_port)

        # the first replica's connection ages out, the client resolves the name again and connects to both
        await wait_until(second_served, "the new replica to take calls", timeout=20, interval=0.1)
        before = [await listed(r.metrics_port) for r in replicas]
        for _ in range(CALLS):
            await call()
        shares = [await listed(r.metrics_port) - b for r, b in zip(replicas, before, strict=True)]
        assert sum(shares) == CALLS and min(shares) >= CALLS / 4, shares
        await channel.close()
    finally:
        stop_processes([r.proc for r in replicas], signal.SIGTERM, 15)
        for r in replicas:
            scaled.processes.remove(r)
