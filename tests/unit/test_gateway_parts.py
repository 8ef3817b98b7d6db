"""Gateway building blocks that need no network."""
import json
from datetime import UTC, datetime
from ipaddress import ip_network
from types import SimpleNamespace

import pytest
from jsonschema import Draft202012Validator
from multidict import MultiDict, MultiDictProxy

from contracts import agents as agents_contract
from core.errors import ServiceError
from gateway import validation
from gateway.clientip import client_ip
from gateway.convert import message_schema, to_json
from gateway.ratelimit import TokenBuckets, retry_after_header
from gateway.sharedlimit import LimitSharing, SharedTokenBuckets
from gateway.timeparse import parse_time
from switchboard.v1 import accounts_pb2
from tests.unit.fakes import FakeClock, FakeRequest


def test_token_bucket_refuses_then_refills():
    clock = FakeClock()
    buckets = TokenBuckets(60, clock=clock)
    assert all(buckets.take("k") == 0 for _ in range(60))
    wait = buckets.take("k")
    assert wait == pytest.approx(1.0)
    assert retry_after_header(wait) == "1"
    assert buckets.take("other") == 0
    clock.now += 1.0
    assert buckets.take("k") == 0


def _exchange(*replicas: SharedTokenBuckets) -> None:
    """One round of sharing: each replica's counts charged to every other."""
    drained = [r.drain() for r in replicas]
    for i, taken in enumerate(drained):
        for j, other in enumerate(replicas):
            for key, count in taken.items():
                if i != j:
                    other.charge(key, count)


def test_shared_buckets_hold_the_limit_across_replicas():
    clock = FakeClock()
    a, b = SharedTokenBuckets(20, clock=clock), SharedTokenBuckets(20, clock=clock)
    assert all(r.take("k") == 0 for r in (a, b) for _ in range(5))
    _exchange(a, b)  # 10 used in all: 10 left on each
    assert all(r.take("k") == 0 for r in (a, b) for _ in range(5))
    _exchange(a, b)
    assert a.take("k") > 0 and b.take("k") > 0  # the 20 are spent, wherever they were taken
    assert a.drain() == {} and b.drain() == {}  # refused requests are not counted
    assert a.take("other") == 0  # other keys are their own


async def test_shared_buckets_charge_an_unheard_burst_as_a_debt():
    clock = FakeClock()
    a, b = SharedTokenBuckets(20, clock=clock), SharedTokenBuckets(20, clock=clock)
    # a burst at both before they hear of each other: each lets its full bucket through (the documented bound)...
    assert all(r.take("k") == 0 for r in (a, b) for _ in range(20))
    _exchange(a, b)
    # ...which each then owes: a token is back only after 21 refills (3 s each at 20 a minute)
    assert a.take("k") == pytest.approx(63.0) and b.take("k") == pytest.approx(63.0)
    b.charge("k", 1000)  # a debt is at most one bucket
    assert b.take("k") == pytest.approx(63.0)
    # what another replica sends is charged; this replica's own messages come back to it and are not
    sharing = LimitSharing(a, interval=0.5)
    clock.now += 63.0
    await sharing._heard(SimpleNamespace(data=json.dumps({"replica": sharing.replica, "taken": {"k": 1}}).encode()))
    assert a.take("k") == 0
    clock.now += 3.0
    await sharing._heard(SimpleNamespace(data=json.dumps({"replica": "another", "taken": {"k": 1}}).encode()))
    await sharing._heard(SimpleNamespace(data=b"not json"))  # skipped
    assert a.take("k") > 0


def test_proto_to_json_uses_null_for_unset_and_matches_its_schema():
    key = accounts_pb2.ApiKey(id="k", prefix="svc_live_abc", name="n", scopes=["a"], is_active=True)
    key.created_at.FromDatetime(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    out = to_json(key, omit=("key",))
    assert out["business_id"] is None and out["expires_at"] is None and "key" not in out
    assert out["created_at"] == "2026-01-02T03:04:05Z"
    Draft202012Validator(message_schema(accounts_pb2.ApiKey.DESCRIPTOR, omit=("key",))).validate(out)


def test_client_ip_trusts_forwarded_for_only_from_proxies():
    assert client_ip(FakeRequest("203.0.113.9", "1.2.3.4"), ()) == "203.0.113.9"
    assert client_ip(FakeRequest("10.0.0.1", "1.2.3.4, 10.0.0.2"), (ip_network("10.0.0.1"), ip_network("10.0.0.2"))) \
        == "1.2.3.4"
    assert client_ip(FakeRequest("10.0.0.1"), (ip_network("10.0.0.1"),)) == "10.0.0.1"


def test_query_coercion_and_messages():
    schema = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 5},
                                               "status": {"type": "array", "items": {"type": "string"}}}}
    q = MultiDictProxy(MultiDict([("limit", "3"), ("status", "new,lost"), ("status", "spam")]))
    assert validation.coerce_query(schema, q) == {"limit": 3, "status": ["new", "lost", "spam"]}
    for params, fragment in (([("limit", "9")], "limit must be between 1 and 5"),
                             ([("limit", "1"), ("limit", "2")], "limit was given 2 times"),
                             ([("limit", "1.0")], "limit must be an integer"),
                             ([("limt", "1")], "unknown query parameter 'limt'; this route takes limit, status")):
        with pytest.raises(ServiceError) as err:
            validation.coerce_query(schema, MultiDictProxy(MultiDict(params)))
        assert err.value.code == "invalid_request" and err.value.message.startswith(fragment)
    with pytest.raises(ServiceError) as err:
        validation.coerce_query(None, MultiDictProxy(MultiDict([("x", "1")])))
    assert "takes no query parameters" in err.value.message


def test_time_parsing_accepts_z_and_space_mangled_plus():
    assert parse_time("2026-01-01T00:00:00Z", "t") == datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_time("2026-01-01T01:00:00 01:00", "t") == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ServiceError):
        parse_time("soon", "t")


def test_query_schemas_use_only_the_keywords_the_fast_checker_knows():
    from gateway.route_table import all_routes

    for route in all_routes():
        for name, spec in (route.query or {}).get("properties", {}).items():
            assert set(spec) <= validation.QUERY_KEYWORDS, (route.path, name)
            if spec.get("type") == "array":
                assert set(spec["items"]) <= {"type", "enum"}, (route.path, name)


def test_query_checks_bounds_enums_formats_and_required():
    schema = {"type": "object", "required": ["id"], "properties": {
        "id": {"type": "string", "format": "uuid"}, "period": {"type": "string", "enum": ["today", "week"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5}}}
    for params, fragment in ([("limit", "1")], "id is required"), ([("id", "x")], "id must be a UUID"), \
            ([("id", "00000000-0000-0000-0000-000000000000"), ("period", "year")], "period must be one of"), \
            ([("id", "00000000-0000-0000-0000-000000000000"), ("limit", "0")], "limit must be between 1 and 5"):
        with pytest.raises(ServiceError) as err:
            validation.coerce_query(schema, MultiDictProxy(MultiDict(params)))
        assert fragment in err.value.message


def test_empty_query_values_count_as_absent_only_where_the_schema_allows_them():
    schema = {"type": "object", "properties": {"after": {"type": "string", "format": "date-time"},
                                               "limit": {"type": "integer", "minimum": 1, "maximum": 5},
                                               "source": {"type": "string"}}}
    assert validation.coerce_query(schema, MultiDictProxy(MultiDict([("source", "")]))) == {}
    for name, fragment in (("after", "RFC 3339"), ("limit", "integer")):
        with pytest.raises(ServiceError) as err:
            validation.coerce_query(schema, MultiDictProxy(MultiDict([(name, "")])))
        assert fragment in err.value.message


def test_query_timestamps_are_rfc3339_with_a_mangled_plus_put_back():
    schema = {"type": "object", "properties": {"since": {"type": "string", "format": "date-time"}}}
    q = MultiDictProxy(MultiDict([("since", "2026-01-01T01:00:00 01:00")]))
    assert validation.coerce_query(schema, q) == {"since": "2026-01-01T01:00:00+01:00"}
    for bad in ("2026-01-01", "2026-01-01T00:00:00", "soon"):
        with pytest.raises(ServiceError):
            validation.coerce_query(schema, MultiDictProxy(MultiDict([("since", bad)])))


def test_missing_required_fields_are_bad_request_and_invalid_values_invalid_request():
    schema = {"type": "object", "properties": {"id": {"type": "string", "format": "uuid"}}, "required": ["id"]}
    for check in (lambda: validation.check(schema, {}), lambda: validation.coerce_query(schema, MultiDict())):
        with pytest.raises(ServiceError) as err:
            check()
        assert err.value.code == "bad_request" and err.value.message == "id is required"
    with pytest.raises(ServiceError) as err:
        validation.check(schema, {"id": "x"})
    assert err.value.code == "invalid_request"
    with pytest.raises(ServiceError) as err:  # signup keeps its own code for both
        validation.check(schema, {}, "validation_error")
    assert err.value.code == "validation_error"


def test_alternative_fields_are_named_in_errors():
    schema = {"type": "object", "properties": {"agent_id": {"type": "string"}, "id": {"type": "string"},
                                               "since": {"type": "string"}, "until": {"type": "string"}},
              "oneOf": [{"required": ["agent_id"]}, {"required": ["id"]}], "dependentRequired": {"until": ["since"]}}
    for body, code, message in (({}, "bad_request", "agent_id or id is required"),
                                ({"agent_id": "a", "id": "a"}, "invalid_request", "send only one of agent_id or id"),
                                ({"id": "a", "until": "x"}, "bad_request", "until needs since")):
        with pytest.raises(ServiceError) as err:
            validation.check(schema, body)
        assert (err.value.code, err.value.message) == (code, message)
    with pytest.raises(ServiceError) as err:
        validation.check({"type": "object", "not": {"required": ["a", "b"]}}, {"a": 1, "b": 2})
    assert "send a and b not together" in err.value.message


def test_bodies_refuse_what_json_forbids_and_take_integral_floats_as_integers():
    assert validation.parse_json(b'{"version": 3.0, "t": 0.5, "big": 1e20}') == {"version": 3, "t": 0.5,
                                                                                  "big": 10**20}
    assert type(validation.parse_json(b'{"v": 2.0}')["v"]) is int
    for raw in (b'{"a": NaN}', b'{"a": Infinity}', b'{"a": -Infinity}', b'{"a": 1e400}', b'{"a": ' + b"9" * 400 + b"}"):
        with pytest.raises(ValueError):
            validation.parse_json(raw)


def test_every_integer_a_route_reads_fits_the_services_32_bit_fields():
    """An integer beyond the proto field's range would fail building the request (a 500): bound them all."""
    from gateway.route_table import all_routes

    def integers(node, where):
        if isinstance(node, dict):
            if node.get("type") == "integer":
                yield where, node
            for key, value in node.items():
                yield from integers(value, f"{where}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from integers(value, f"{where}[{i}]")

    for route in all_routes():
        for where, schema in integers({"body": route.body, "query": route.query}, f"{route.method} {route.path}"):
            assert "maximum" in schema and schema["maximum"] <= 2**31 - 1, where
            assert "minimum" in schema and schema["minimum"] >= -(2**31), where


def test_nesting_depth():
    assert [validation.depth(v) for v in (1, {}, [], {"a": [1, {"b": []}]}, [[[]]])] == [0, 1, 1, 4, 3]


def test_the_openapi_names_the_session_cookie_the_site_sets():
    from gateway.openapi import build
    from gateway.route_table import all_routes
    name = lambda url: build(all_routes(), url)["components"]["securitySchemes"]["dashboardSession"]["name"]
    assert (name("https://api.example.com"), name("http://127.0.0.1:8080")) == ("__Host-sb_session", "sb_session")


def test_validate_publishes_the_drafts_it_reports_on_and_create_the_runs_it_takes():
    """POST .../validate answers 200 {valid: false, problems} to a draft with a field a run does not have (it
    reports, issue 50), so its published body must take such a draft; create refuses it (400), and so does its
    published body. The reply's problems are described."""
    from gateway.openapi import build
    from gateway.route_table import all_routes
    document = build(all_routes(), "http://127.0.0.1:8080")
    validate, create = (document["paths"][p]["post"] for p in ("/api/v1/communication-runs/validate",
                                                                "/api/v1/communication-runs"))
    takes = lambda op, body: Draft202012Validator(
        op["requestBody"]["content"]["application/json"]["schema"]).is_valid(body)
    draft = {"external_ref": "r", "touches": ["not a touch"], "priority": "high"}
    assert takes(validate, draft) and not takes(create, draft)
    assert not takes(validate, {"external_ref": "r"}) and not takes(validate, [])
    assert validate["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CommunicationRunValidation"}
    reply = document["components"]["schemas"]["CommunicationRunValidation"]
    assert "not 400" in reply["description"] and "problem" in reply["properties"]["problems"]["description"]


@pytest.mark.parametrize("key", ["550e8400-e29b-41d4-a716-446655440000", "run 7 of crm/42", "~", "x" * 255,
                                 "x" * 256, "", " ", "a\tb", "a\x7fb", "caf\u00e9", "a\nb"])
def test_the_published_idempotency_key_takes_what_the_services_take(key):
    """Issue 50's deeper fuzzing run: a key the published header took (any 1 to 255 characters) was refused as not
    printable; the header now publishes the services' own rule (core.text)."""
    from core.text import check_idempotency_key
    from gateway.route_table import all_routes
    [create] = [r for r in all_routes() if (r.method, r.path) == ("POST", "/api/v1/communication-runs")]
    header = {k: v for k, v in create.headers["Idempotency-Key"].items() if k != "required"}
    try:
        taken = check_idempotency_key(key) == key
    except ServiceError:
        taken = False
    assert Draft202012Validator(header).is_valid(key) is taken
    assert taken is (key in ("550e8400-e29b-41d4-a716-446655440000", "run 7 of crm/42", "~", "x" * 255))


@pytest.mark.parametrize("greeting", ["", "  \t", "Hi, Acme Plumbing here.", "x" * 1001])
def test_an_agents_published_greeting_takes_what_the_agents_service_takes(greeting):
    """Issue 50's random-seed fuzzing run: POST /api/v1/agents published first_message as any text and refused "" (400
    first_message must not be empty); create and update now publish the service's rule."""
    from gateway.schemas import AGENT_CREATE, AGENT_UPDATE
    from services.agents import domain as agents
    try:
        taken = bool(agents.check_text(greeting, "first_message", agents_contract.MESSAGE_MAX))
    except ServiceError:
        taken = False
    for body in (AGENT_CREATE, AGENT_UPDATE):
        assert Draft202012Validator(body["properties"]["first_message"]).is_valid(greeting) is taken
    assert taken is (greeting == "Hi, Acme Plumbing here.")
