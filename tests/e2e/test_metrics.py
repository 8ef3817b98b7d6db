"""Metrics scraped as Prometheus reads them (core.metrics): a gateway replica's requests by route, and a service's
gRPC calls, outbox lag and consumers' pending counts."""
import re
import uuid

from deploy.local.servers import free_port
from tests.scrape import scrape, value
from tests.waiting import wait_until


async def test_a_gateway_replica_counts_and_times_its_requests_by_route(replica, account):
    port = free_port()
    gateway = replica(METRICS_PORT=str(port))
    route = {"http_route": "/api/v1/agents", "http_request_method": "GET"}
    before = await scrape(port)
    for _ in range(3):
        status, _, _ = await gateway.request("GET", "/api/v1/agents", key=account["key"])
        assert status == 200
    status, _, _ = await gateway.request("GET", "/api/v1/agents", key="svc_live_wrong")
    assert status == 401
    after = await scrape(port)
    assert value(after, "switchboard_http_requests_total", **route, status_class="2xx") - value(
        before, "switchboard_http_requests_total", **route, status_class="2xx") == 3
    assert value(after, "switchboard_http_requests_total", **route, status_class="4xx") == 1
    assert value(after, "switchboard_http_duration_seconds_count", **route, status_class="2xx") == 3
    assert value(after, "switchboard_http_duration_seconds_sum", **route, status_class="2xx") > 0
    assert value(after, "switchboard_http_duration_seconds_bucket", **route, status_class="2xx", le="+Inf") == 3
    assert value(after, "switchboard_http_errors_total", **route) == 0
    assert 'service_name="gateway"' in after  # the resource's attributes (target_info)


async def test_a_service_counts_its_grpc_calls_and_samples_its_outbox_and_consumers(stack, api):
    port = stack.process("accounts").metrics_port
    signup = {"rpc_method": "/switchboard.v1.Accounts/Signup", "rpc_grpc_status_code": "OK"}
    before = value(await scrape(port), "switchboard_rpc_requests_total", **signup)
    await api.signup(email=f"metrics-{uuid.uuid4().hex[:8]}@example.com")
    after = await scrape(port)
    assert value(after, "switchboard_rpc_requests_total", **signup) == before + 1
    assert value(after, "switchboard_rpc_duration_seconds_count", rpc_method=signup["rpc_method"]) >= 1
    assert "switchboard_outbox_lag_seconds{" in after and 'outbox="accounts"' in after
    # sampled in the background: the consumers' counts once they are subscribed
    sampled = await wait_until(lambda: scrape(port), "the consumers' pending counts",
                               lambda text: 'consumer="accounts-call-usage"' in text, timeout=10)
    assert re.search(r'switchboard_consumer_pending\{[^}]*consumer="accounts-call-usage"[^}]*state="pending"', sampled)
