"""One API call, one trace, on the scaled-out stack (two of every process; tests/scaleout/conftest.py), whose every
process exports OTLP over HTTP (OTEL_EXPORTER_OTLP_ENDPOINT) to the package's collector: a lead created, and the
trace from the gateway to the webhook's delivery that it caused: gateway server span (aiohttp-server's), gRPC client
span and the service's server span (grpc's), SQL spans (asyncpg's), the outbox's NATS publish, the dispatcher's
consumer span (ours: NATS has no instrumentation package) and the webhook POST (aiohttp-client's), each named and
described by the semantic conventions."""
import uuid

import aiohttp

from tests.api import Api
from tests.otlp import CLIENT, CONSUMER, PRODUCER, SERVER, Span
from tests.receiver import Receiver
from tests.waiting import wait_until


def _ancestors(span: Span, spans: dict[str, Span]) -> list[Span]:
    """`span`, its parent, and so on up to the root."""
    chain = [span]
    while chain[-1].parent_id in spans:
        chain.append(spans[chain[-1].parent_id])
    return chain


async def test_one_api_call_is_one_trace_from_the_gateway_to_the_webhook_delivery(scaled, collector):
    stack = scaled
    receiver = await Receiver().start()
    async with aiohttp.ClientSession() as session:
        api = Api(session, stack.base_url, stack.database_url)
        signup = await api.signup(email=f"owner-{uuid.uuid4().hex[:10]}@example.com")
        dash = await api.dashboard(signup)
        key = (await dash.create_key(name="all", scopes=["*"]))["key"]
        await dash.close()
        status, body, _ = await api.request("POST", "/api/v1/webhooks", key=key, json={
            "webhook_url": receiver.url, "events": ["lead.created"]})
        assert status == 201, body
        status, lead, _ = await api.request("POST", "/api/v1/leads", key=key,
                                            json={"business_id": signup["business_id"], "name": "Traced Lead"})
        assert status == 201, lead
        status, page, _ = await api.request("GET", "/api/v1/leads", key=key)
        assert status == 200 and [item["id"] for item in page["leads"]] == [lead["id"]], page
    delivered = await receiver.wait_for(1, "lead.created")
    await receiver.stop()
    assert next(iter(delivered.values()))["json"]["data"]["id"] == lead["id"]

    def the_call() -> list[Span]:
        return [s for s in collector.spans if s.service == "gateway" and s.kind == SERVER
                and s.attributes.get("http.route") == "/api/v1/leads"
                and s.attributes.get("http.request.method") == "POST"]

    root = (await wait_until(the_call, "the gateway's span of POST /api/v1/leads", timeout=10))[0]

    def whole_trace() -> dict[str, Span]:
        spans = collector.trace(root.trace_id)
        posts = [s for s in spans.values() if s.service == "webhooks-dispatcher" and s.kind == CLIENT
                 and s.attributes.get("url.full") == receiver.url]
        # done once the delivery is in and every span's parent is too (processes export on their own schedules)
        return spans if posts and all(s.parent_id in spans for s in spans.values() if s is not root) else {}

    spans = await wait_until(whole_trace, "the webhook delivery's span in a whole trace", timeout=15)
    # One tree: the gateway's span is the only root, every other span's parent is in the trace.
    assert root.parent_id == "" and [s for s in spans.values() if s.parent_id not in spans] == [root]

    assert root.name == "POST /api/v1/leads" and root.attributes["http.response.status_code"] == 201
    assert root.attributes["url.path"] == "/api/v1/leads" and root.attributes["url.scheme"] == "http"
    assert root.attributes["http.route"] == "/api/v1/leads"
    # the delivery to this test's receiver: a dispatcher this event wakes may deliver other events' due retries in
    # the same trace (the soak's, to its partner, stopped before this test)
    post = next(s for s in spans.values() if s.service == "webhooks-dispatcher" and s.kind == CLIENT
                and s.attributes.get("url.full") == receiver.url)
    assert post.attributes["http.request.method"] == "POST" and post.attributes["http.response.status_code"] == 200
    assert post.attributes["switchboard.event.type"] == "lead.created" and post.name == "POST"
    # From the delivery up to the gateway: consumer, the outbox's publish, the sdr service's server span, the
    # gateway's RPC to it, the gateway's own span.
    chain = _ancestors(post, spans)
    consume, publish, served, called = chain[1:5]
    assert (consume.service, consume.kind) == ("webhooks-dispatcher", CONSUMER)
    assert consume.attributes["messaging.system"] == "nats"
    assert consume.attributes["messaging.destination.name"].startswith("events.")
    assert (publish.service, publish.kind, publish.name) == ("sdr", PRODUCER, "send events.lead.created")
    assert publish.attributes["messaging.system"] == "nats"
    assert publish.attributes["messaging.destination.name"] == "events.lead.created"
    assert (served.service, served.kind, served.name) == ("sdr", SERVER, "/switchboard.v1.Sdr/CreateLead")
    assert (called.service, called.kind, called.name) == ("gateway", CLIENT, "/switchboard.v1.Sdr/CreateLead")
    for span in (served, called):
        assert span.attributes["rpc.system"] == "grpc" and span.attributes["rpc.service"] == "switchboard.v1.Sdr"
        assert span.attributes["rpc.method"] == "CreateLead" and span.attributes["rpc.grpc.status_code"] == 0
    assert chain[5:] == [root]
    # The SQL statements: the lead's insert and its outbox row under the service's span, the dispatcher's fan-out
    # under the consumer's.
    sql = [s for s in spans.values() if s.kind == CLIENT and s.attributes.get("db.system.name") == "postgresql"]
    assert {s.name.split()[0] for s in sql if s.parent_id == served.span_id} >= {"INSERT"}
    assert any("INTO sdr.outbox" in s.attributes.get("db.query.text", "") for s in sql if s.parent_id == served.span_id)
    assert any(s.parent_id == consume.span_id and s.service == "webhooks-dispatcher" for s in sql)


    # The page of leads is read on the raw pool (core.db.Prepared), whose statements have their spans too.
    def listing() -> list[Span]:
        return [s for s in collector.spans if s.service == "sdr" and s.kind == CLIENT
                and "FROM sdr.leads" in s.attributes.get("db.query.text", "")
                and any(p.span_id == s.parent_id and p.name == "/switchboard.v1.Sdr/ListLeads" for p in collector.spans)]

    read = (await wait_until(listing, "the span of the page's SELECT under the sdr service's ListLeads"))[0]
    assert read.name == "SELECT" and read.attributes["db.system.name"] == "postgresql"
