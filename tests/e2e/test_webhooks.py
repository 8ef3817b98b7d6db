"""/api/v1/webhooks*, /api/v1/events*: subscriptions, signed delivery a standard verifier accepts,
retries until every event arrives, rotation, the test event, replay, SSRF refusals, tenancy."""
import json
import uuid

import pytest
from stripe import WebhookSignature

from tests.receiver import Receiver, settled_deliveries
from tests.waiting import wait_until


@pytest.fixture
async def receiver():
    r = await Receiver().start()
    yield r
    await r.stop()


async def subscribe(api, account, url: str, events=("lead.created",), **extra) -> dict:
    status, body, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                        json={"webhook_url": url, "events": list(events), **extra})
    assert status == 201, body
    return body


async def new_lead(api, account, name: str) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=account["key"],
                                        json={"business_id": account["business_id"], "name": name})
    assert status == 201, lead
    return lead


async def test_subscription_lifecycle(api, account, receiver):
    made = await subscribe(api, account, receiver.url, events=["lead.created", "call.completed"],
                           description="CRM sync")
    hook, secret = made["webhook"], made["webhook_secret"]
    assert hook["id"].startswith("wh_") and secret.startswith("whsec_") and made["business_id"] == account["business_id"]
    assert hook["webhook_secret_masked"] == f"whsec_...{secret[-4:]}" and secret not in json.dumps(hook)
    assert hook["is_active"] is True and hook["url"] == receiver.url and "webhook.test" in made["events"]
    status, again, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"], json={
        "webhook_url": receiver.url, "events": ["lead.scored"]})
    assert status == 200 and again["webhook_secret"] is None and again["webhook"]["id"] == hook["id"]
    assert again["webhook"]["events"] == ["lead.scored"] and again["webhook"]["description"] == "CRM sync"
    status, listing, _ = await api.request("GET", "/api/v1/webhooks", key=account["read_key"])
    assert status == 200 and [w["id"] for w in listing["webhooks"]] == [hook["id"]]
    assert listing["webhooks"][0]["failure_count"] == 0 and listing["webhooks"][0]["last_triggered_at"] is None
    for bad, fragment in (({"events": ["lead.exploded"]}, "lead.exploded"), ({"events": []}, "events"),
                          ({"webhook_url": "ftp://example.com/x"}, "webhook_url")):
        status, body, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                            json={"webhook_url": receiver.url, "events": ["lead.created"], **bad})
        assert status == 400 and fragment in body["error"]["message"], body
    status, body, _ = await api.request("DELETE", "/api/v1/webhooks", key=account["key"], params={"id": hook["id"]})
    assert status == 200 and body == {"success": True, "id": hook["id"]}
    status, body, _ = await api.request("DELETE", "/api/v1/webhooks", key=account["key"], params={"id": hook["id"]})
    assert status == 404


async def test_events_arrive_signed_and_a_standard_verifier_accepts_them(api, account, receiver):
    made = await subscribe(api, account, receiver.url, events=["lead.created", "lead.scored"])
    lead = await new_lead(api, account, "Dana")
    got = await receiver.wait_for(2)
    created = next(r for r in got.values() if r["json"]["event"] == "lead.created")
    assert WebhookSignature.verify_header(created["body"], created["headers"]["X-Service-Signature"],
                                          made["webhook_secret"], tolerance=300)
    with pytest.raises(Exception):  # noqa: B017 - any refusal will do: the wrong secret must not verify
        WebhookSignature.verify_header(created["body"], created["headers"]["X-Service-Signature"], "whsec_wrong", 300)
    body = created["json"]
    assert body["data"] == {"id": lead["id"], "name": "Dana", "email": None, "phone": None, "source": "api"}
    assert body["business_id"] == account["business_id"] and body["timestamp"] == body["occurred_at"]
    assert created["headers"]["X-Service-Event"] == "lead.created"
    assert created["headers"]["X-Service-Event-Id"] == body["event_id"]
    deliveries = await settled_deliveries(api, account["read_key"], 1, event_id=body["event_id"])
    assert len(deliveries) == 1
    delivery = deliveries[0]
    assert delivery["status"] == "delivered" and delivery["attempts"] == 1 and delivery["last_status_code"] == 200
    assert delivery["id"] == created["headers"]["X-Service-Delivery"]
    status, history, _ = await api.request("GET", "/api/v1/events", key=account["read_key"],
                                           params={"type": "lead.created"})
    assert [e["event_id"] for e in history["events"]] == [body["event_id"]]
    status, listing, _ = await api.request("GET", "/api/v1/webhooks", key=account["key"])
    assert listing["webhooks"][0]["last_triggered_at"] is not None


async def test_a_failing_receiver_gets_every_event_exactly_once_after_dedup(api, account):
    receiver = await Receiver(fail_first=4, status=503).start()
    try:
        await subscribe(api, account, receiver.url)
        leads = [await new_lead(api, account, f"L{i}") for i in range(3)]
        got = await receiver.wait_for(3)
        assert {r["json"]["data"]["id"] for r in got.values()} == {lead["id"] for lead in leads}
        assert len(receiver.requests) >= 7  # four refusals, then three deliveries
        deliveries = await settled_deliveries(api, account["key"], 3)
        assert [d["status"] for d in deliveries] == ["delivered"] * 3
        assert sum(d["attempts"] for d in deliveries) == len(receiver.requests)
        status, listing, _ = await api.request("GET", "/api/v1/webhooks", key=account["key"])
        assert listing["webhooks"][0]["failure_count"] == 0  # reset by the successes
    finally:
        await receiver.stop()


async def test_redirects_are_not_followed(api, account):
    receiver = await Receiver(fail_first=1, status=307).start()
    try:
        await subscribe(api, account, receiver.url)
        await new_lead(api, account, "Redirected")
        await receiver.wait_for(1)
        deliveries = await settled_deliveries(api, account["key"], 1)
        assert deliveries[0]["attempts"] == 2 and len(receiver.requests) == 2  # the 307 was a failed attempt
    finally:
        await receiver.stop()


async def test_rotation_signs_with_both_secrets_during_the_overlap(api, account, receiver):
    made = await subscribe(api, account, receiver.url)
    status, rotated, _ = await api.request("POST", "/api/v1/webhooks/rotate-secret", key=account["key"],
                                           json={"id": made["webhook"]["id"]})
    assert status == 200 and rotated["webhook_secret"] != made["webhook_secret"]
    assert rotated["webhook_secret_masked"].endswith(rotated["webhook_secret"][-4:])
    assert rotated["previous_secret_expires_at"] > made["webhook"]["created_at"]
    await new_lead(api, account, "After rotation")
    request = next(iter((await receiver.wait_for(1)).values()))
    header = request["headers"]["X-Service-Signature"]
    assert header.count("v1=") == 2
    for secret in (made["webhook_secret"], rotated["webhook_secret"]):
        assert WebhookSignature.verify_header(request["body"], header, secret, tolerance=300)


async def test_the_test_event_and_replay(api, account, receiver):
    made = await subscribe(api, account, receiver.url)
    status, sent, _ = await api.request("POST", "/api/v1/webhooks/test", key=account["key"], json={})
    assert status == 200, sent
    assert sent["results"] == [{"webhook_id": made["webhook"]["id"], "delivered": True, "status_code": 200,
                                "latency_ms": sent["results"][0]["latency_ms"], "error": None}]
    test = receiver.events("webhook.test")[sent["event_id"]]
    assert WebhookSignature.verify_header(test["body"], test["headers"]["X-Service-Signature"],
                                          made["webhook_secret"], tolerance=300)
    lead = await new_lead(api, account, "Replayed")
    first = next(iter((await receiver.wait_for(1, "lead.created")).values()))
    event_id = first["json"]["event_id"]
    status, replayed, _ = await api.request("POST", "/api/v1/events/replay", key=account["key"], json={
        "webhook_id": made["webhook"]["id"], "event_ids": [event_id]})
    assert status == 200 and replayed["queued"] == 1
    copies = await wait_until(lambda: [r for r in receiver.requests if r["json"]["event_id"] == event_id],
                              f"the replayed {event_id} to arrive", lambda found: len(found) == 2, interval=0.05)
    assert len(copies) == 2 and copies[1]["json"] == copies[0]["json"]  # same event, same event_id
    status, backfill, _ = await api.request("POST", "/api/v1/events/replay", key=account["key"], json={
        "webhook_id": made["webhook"]["id"], "since": lead["created_at"]})
    assert status == 200 and backfill["queued"] == 1  # lead.created only: the webhook's type
    status, body, _ = await api.request("POST", "/api/v1/events/replay", key=account["read_key"], json={
        "webhook_id": made["webhook"]["id"], "event_ids": [event_id]})
    assert status == 403 and "events:replay" in body["error"]["message"]
    status, body, _ = await api.request("POST", "/api/v1/events/replay", key=account["key"], json={
        "webhook_id": made["webhook"]["id"]})
    assert status == 400


@pytest.mark.parametrize("url, fragment", [
    ("http://10.0.0.7/hooks", "private"), ("http://192.168.1.20/hooks", "private"),
    ("http://169.254.169.254/latest/meta-data", "metadata"), ("http://[::ffff:10.0.0.7]/hooks", "private"),
    ("http://[fe80::1]/hooks", "link-local"), ("http://0.0.0.0:8080/hooks", "private"),
    ("http://user:pw@example.com/hooks", "no credentials"), ("http://no-such-host.invalid/hooks", "resolve"),
    ("http://[7]/hooks", "not a valid URL"), ("http://a..b/hooks", "does not resolve"),
    ("http://bücher.example/hooks", "punycode"),
])
async def test_unsafe_urls_are_refused(api, account, url, fragment):
    status, body, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                        json={"webhook_url": url, "events": ["lead.created"]})
    assert status == 400 and body["error"]["code"] == "invalid_request" and fragment in body["error"]["message"]


async def test_another_account_sees_and_touches_nothing(api, account, other_key, receiver):
    made = await subscribe(api, account, receiver.url)
    hook = made["webhook"]["id"]
    await new_lead(api, account, "Private")
    await receiver.wait_for(1)
    status, body, _ = await api.request("GET", "/api/v1/webhooks", key=other_key)
    assert status == 200 and body["webhooks"] == []
    status, body, _ = await api.request("GET", "/api/v1/webhooks", key=other_key,
                                        params={"business_id": account["business_id"]})
    assert status == 403
    for method, path, kwargs in (("DELETE", "/api/v1/webhooks", {"params": {"id": hook}}),
                                 ("POST", "/api/v1/webhooks/rotate-secret", {"json": {"id": hook}}),
                                 ("POST", "/api/v1/webhooks/test", {"json": {"id": hook}}),
                                 ("POST", "/api/v1/events/replay", {"json": {"webhook_id": hook,
                                                                              "since": "2020-01-01T00:00:00Z"}})):
        status, body, _ = await api.request(method, path, key=other_key, **kwargs)
        assert status == 404, (path, body)
    # The other account's own history may hold its own events (its signup's subscription, applied asynchronously,
    # can change its standing): none of this account's is among them, and it has no deliveries.
    for path, key in (("/api/v1/events", "events"), ("/api/v1/webhooks/deliveries", "deliveries")):
        status, body, _ = await api.request("GET", path, key=other_key)
        assert status == 200 and all(e["business_id"] != account["business_id"] for e in body[key]
                                     if "business_id" in e), body
        assert key == "events" or body[key] == [], body
    status, listing, _ = await api.request("GET", "/api/v1/webhooks", key=account["key"])
    assert [w["id"] for w in listing["webhooks"]] == [hook]


async def test_replay_takes_event_ids_or_a_backfill_window(api, account, receiver):
    """The published schema says event_ids and since exclude each other, and until needs since."""
    hook = (await subscribe(api, account, receiver.url))["webhook"]["id"]
    for body, code, fragment in (
            ({}, "bad_request", "event_ids or since is required"),
            ({"event_ids": [str(uuid.uuid4())], "since": "2026-01-01T00:00:00Z"}, "invalid_request",
             "send only one of event_ids or since"),
            ({"event_ids": [str(uuid.uuid4())], "until": "2026-01-01T00:00:00Z"}, "bad_request", "until needs since")):
        status, reply, _ = await api.request("POST", "/api/v1/events/replay", key=account["key"],
                                             json={"webhook_id": hook, **body})
        assert status == 400 and reply["error"]["code"] == code and fragment in reply["error"]["message"], reply
    status, reply, _ = await api.request("POST", "/api/v1/events/replay", key=account["key"],
                                         json={"webhook_id": hook, "since": "2026-01-01T00:00:00Z"})
    assert status == 200, reply


async def test_delete_needs_a_webhook_id_of_the_published_form(api, account, receiver):
    hook = (await subscribe(api, account, receiver.url))["webhook"]["id"]
    for params, code in (({}, "bad_request"), ({"id": ""}, "invalid_request"), ({"id": "42"}, "invalid_request")):
        status, reply, _ = await api.request("DELETE", "/api/v1/webhooks", key=account["key"], params=params)
        assert status == 400 and reply["error"]["code"] == code, (params, reply)
    status, reply, _ = await api.request("DELETE", "/api/v1/webhooks", key=account["key"], params={"id": hook})
    assert status == 200, reply
