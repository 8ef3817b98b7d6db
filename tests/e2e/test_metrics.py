"""Metrics scraped as Prometheus reads them (core.metrics), in the semantic conventions' names: a gateway replica's
requests by route and status, a service's gRPC calls, outbox lag and consumers' pending counts, and the calls
stuck without an outcome."""
import re
import uuid

from deploy.local.servers import free_port
from tests.calling import settled
from tests.scrape import scrape, value
from tests.waiting import wait_until


async def test_a_gateway_replica_times_its_requests_by_route_and_status(replica, account):
    port = free_port()
    gateway = replica(METRICS_PORT=str(port))
    route = {"http_route": "/api/v1/agents", "http_request_method": "GET"}
    duration = "http_server_request_duration_seconds"  # OpenTelemetry's aiohttp-server instrumentation's
    before = await scrape(port)
    for _ in range(3):
        status, _, _ = await gateway.request("GET", "/api/v1/agents", key=account["key"])
        assert status == 200
    status, _, _ = await gateway.request("GET", "/api/v1/agents", key="svc_live_wrong")
    assert status == 401
    after = await scrape(port)
    ok = {**route, "http_response_status_code": "200"}
    assert value(after, f"{duration}_count", **ok) - value(before, f"{duration}_count", **ok) == 3
    assert value(after, f"{duration}_count", **route, http_response_status_code="401") == 1
    assert value(after, f"{duration}_sum", **ok) > 0
    assert value(after, f"{duration}_bucket", **ok, le="+Inf") == value(after, f"{duration}_count", **ok)
    assert value(after, f"{duration}_count", **route, url_scheme="http") >= 4
    assert 'service_name="gateway"' in after  # the resource's attributes (target_info)


async def test_a_service_counts_its_grpc_calls_and_samples_its_outbox_and_consumers(stack, api):
    port = stack.process("accounts").metrics_port
    signup = {"rpc_system": "grpc", "rpc_service": "switchboard.v1.Accounts", "rpc_method": "Signup",
              "rpc_grpc_status_code": "0"}
    before = value(await scrape(port), "rpc_server_duration_seconds_count", **signup)
    await api.signup(email=f"metrics-{uuid.uuid4().hex[:8]}@example.com")
    after = await scrape(port)
    assert value(after, "rpc_server_duration_seconds_count", **signup) == before + 1
    assert value(after, "rpc_server_duration_seconds_sum", **signup) > 0
    # the signup's statements: SQLAlchemy's (its INSERTs) timed by operation
    assert value(after, "db_client_operation_duration_seconds_count", db_system_name="postgresql",
                 db_operation_name="INSERT") >= 1
    assert "switchboard_outbox_lag_seconds{" in after and 'outbox="accounts"' in after
    # sampled in the background: the consumers' counts once they are subscribed
    sampled = await wait_until(lambda: scrape(port), "the consumers' pending counts",
                               lambda text: 'consumer="accounts-call-usage"' in text, timeout=10)
    assert re.search(r'switchboard_consumer_pending\{[^}]*consumer="accounts-call-usage"[^}]*state="pending"', sampled)


async def test_a_call_the_reaper_cannot_close_is_sampled_as_stuck_until_it_is_closed(stack, api, account,
                                                                                       calling_agent, voice):
    """The provider plays the call but reports nothing, and fails the reaper's every lookup: past max_duration plus
    twice the reaper's margin and its interval (12.5 s in the tests) the calls service's gauge counts it, sampled
    every 15 s; once the provider answers again the reaper closes it and the count is back to none."""
    port = stack.process("calls").metrics_port
    key = account["key"]
    await voice.playback(silent=True)
    code, call, _ = await api.request("POST", "/api/v1/calls", key=key, json={
        "agent_id": calling_agent["id"], "to": "+14155550191", "max_duration": 10})
    assert code == 201
    await voice.fail_next("GET", f"/call/{call['conversation_id']}", 503, times=1000)

    def stuck(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("switchboard_calls_stuck{")]
    (sampled,) = stuck(await wait_until(lambda: scrape(port), "the call to be counted stuck",
                                        lambda text: value(text, "switchboard_calls_stuck") == 1, timeout=45,
                                        interval=0.5))
    # one series, labelled with nothing of a business (only OpenTelemetry's scope)
    assert {label for label in re.findall(r'(\w+)="', sampled) if not label.startswith("otel_scope_")} == set(), sampled
    status, still, _ = await api.request("GET", "/api/v1/calls", key=key, params={"id": call["id"]})
    assert status == 200 and still["status"] == "queued"
    await voice.clear_faults()
    ended = await settled(api, key, call["id"])
    assert (ended["status"], ended["ended_reason"]) == ("completed", "customer-ended-call")
    await wait_until(lambda: scrape(port), "the closed call to leave the count",
                     lambda text: stuck(text) and value(text, "switchboard_calls_stuck") == 0, timeout=30, interval=0.5)
