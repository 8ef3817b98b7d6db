"""Outbound compliance end to end: calls placed with compliance enforce (refusals before the provider, the callee's
window, consent bases, do-not-call, the frequency cap under racing touches, a provider refusal freeing its slot),
PlaceCall's deferral as data, texts through the same decision, and the decision log (filters, tenancy, append-only)."""
import asyncio
from datetime import UTC, datetime

import asyncpg
import grpc
import pytest

from switchboard.v1 import calls_pb2, calls_pb2_grpc
from tests.calling import place, provider_calls_to
from tests.compliance import callee, decisions, enforced
from tests.tenants import as_business
from tests.texting import opt_in, send


async def test_an_enforced_call_without_consent_is_refused_before_the_provider_and_logged(
        api, account, voice, calling_agent):
    key, to = account["key"], callee()
    status, body, _ = await enforced(api, key, calling_agent, to)
    assert status == 400 and body["error"]["code"] == "number_opted_out", body
    assert "POST /api/v1/sms/consent" in body["error"]["message"]
    assert await provider_calls_to(voice, to) == []
    [refused] = await decisions(api, key, phone=to)
    assert (refused["outcome"], refused["rule"], refused["channel"], refused["actor"]) == (
        "refuse", "no_consent_call", "call", "enforced_call")
    assert refused["code"] == "number_opted_out" and refused["message"] == body["error"]["message"]
    # The same call without enforce skips the checks, as the spec says (the caller answers for consent): it is
    # counted and logged, with what the checks said.
    status, skipped, _ = await place(api, key, agent_id=calling_agent["id"], to=to)
    assert status == 201, skipped
    logged, _ = await decisions(api, key, phone=to)
    assert (logged["outcome"], logged["rule"], logged["actor"], logged["reference"]) == (
        "allow", "not_checked", "unchecked_call", skipped["id"])
    assert logged["inputs"]["checks"] == {"outcome": "refuse", "rule": "no_consent_call", "code": "number_opted_out",
                                          "not_before": None}


async def test_an_enforced_call_with_consent_in_the_window_is_placed_and_logged_with_its_basis(
        api, account, voice, calling_agent):
    key, to = account["key"], callee()
    await opt_in(api, key, to)
    status, call, _ = await enforced(api, key, calling_agent, to)
    assert status == 201, call
    assert [c["id"] for c in await provider_calls_to(voice, to)] == [call["conversation_id"]]
    [allowed] = await decisions(api, key, phone=to)
    assert (allowed["outcome"], allowed["rule"], allowed["reference"]) == ("allow", "allowed", call["id"])
    assert allowed["inputs"]["consent_basis"] == "opt_in" and allowed["inputs"]["touches_24h"] == {"call": 0, "sms": 0}
    assert allowed["inputs"]["zones"][0]["why"] == "area_code" and allowed["not_before"] is None


async def test_a_closed_window_is_refused_with_the_instant_it_opens(api, account, voice, calling_agent):
    key, to = account["key"], callee(open_now=False)
    await opt_in(api, key, to)
    status, body, _ = await enforced(api, key, calling_agent, to)
    assert status == 400 and body["error"]["code"] == "tcpa_violation", body
    assert body["error"]["message"].startswith("quiet hours: ") and "next at 20" in body["error"]["message"]
    [deferred] = await decisions(api, key, phone=to)
    assert deferred["outcome"] == "defer" and deferred["not_before"] > deferred["decided_at"]
    assert await provider_calls_to(voice, to) == []


async def test_do_not_call_and_a_do_not_contact_lead_block_enforced_calls(api, account, calling_agent):
    key = account["key"]
    listed = callee()
    await opt_in(api, key, listed)
    status, _, _ = await api.request("POST", "/api/v1/dnc", key=key, json={"phone": listed, "reason": "asked"})
    assert status == 201
    status, body, _ = await enforced(api, key, calling_agent, listed)
    assert status == 400 and body["error"]["code"] == "number_on_dnc"
    marked = callee()
    await opt_in(api, key, marked)
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "phone": marked, "status": "do_not_contact"})
    assert status == 201, lead
    status, body, _ = await enforced(api, key, calling_agent, marked)
    assert status == 400 and body["error"]["code"] == "number_on_dnc" and lead["id"] in body["error"]["message"]
    status, body, _ = await send(api, key, calling_agent, marked)  # texts too
    assert status == 400 and body["error"]["code"] == "number_on_dnc"
    logged = await decisions(api, key, lead_id=lead["id"])
    assert [(d["channel"], d["rule"]) for d in logged] == [("sms", "lead_do_not_contact"),
                                                          ("call", "lead_do_not_contact")]


async def test_a_customer_may_be_called_without_an_opt_in(api, account, calling_agent):
    key, to = account["key"], callee()
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "phone": to, "status": "converted"})
    assert status == 201
    status, call, _ = await enforced(api, key, calling_agent, to)
    assert status == 201, call
    [allowed] = await decisions(api, key, phone=to)
    assert allowed["inputs"]["consent_basis"] == "existing_relationship" and allowed["lead_id"] == lead["id"]


async def test_racing_enforced_calls_never_pass_the_frequency_cap(api, account, calling_agent):
    key, to = account["key"], callee()
    await opt_in(api, key, to)
    results = await asyncio.gather(*(enforced(api, key, calling_agent, to) for _ in range(6)))
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [201, 201, 201, 400, 400, 400], results  # the platform's cap: 3 calls per 24 hours
    refused = [body for status, body, _ in results if status == 400]
    assert all(b["error"]["code"] == "tcpa_violation" and b["error"]["message"].startswith("frequency: 3 calls")
               for b in refused)
    logged = await decisions(api, key, phone=to)
    assert sorted(d["outcome"] for d in logged) == ["allow"] * 3 + ["defer"] * 3
    assert {d["inputs"]["touches_24h"]["call"] for d in logged if d["outcome"] == "defer"} == {3}


async def test_a_call_the_provider_refuses_frees_its_slot(api, account, voice, calling_agent):
    key, to = account["key"], callee()
    await opt_in(api, key, to)
    await voice.fail_next("POST", "/call", 400)
    status, body, _ = await enforced(api, key, calling_agent, to)
    assert status == 500 and body["error"]["code"] == "call_failed"
    for _ in range(3):  # the failed call is not counted: three more fit under the cap
        status, call, _ = await enforced(api, key, calling_agent, to)
        assert status == 201, call
    status, body, _ = await enforced(api, key, calling_agent, to)
    assert status == 400 and body["error"]["message"].startswith("frequency: 3 calls")


async def test_bad_compliance_input_is_a_clear_400(api, account, calling_agent):
    key, to = account["key"], callee()
    status, body, _ = await enforced(api, key, calling_agent, to, callee_timezone="Mars/Olympus_Mons")
    assert status == 400 and body["error"]["code"] == "invalid_request"
    assert body["error"]["message"].startswith("callee_timezone: 'Mars/Olympus_Mons' is not an IANA time zone")
    status, body, _ = await place(api, key, agent_id=calling_agent["id"], to=to, callee_timezone="America/Denver")
    assert (status, body["error"]["message"]) == (400, "compliance is required when callee_timezone is sent")
    status, body, _ = await place(api, key, agent_id=calling_agent["id"], to=to, callee_timezone="America/Denver",
                                  compliance="skip")
    assert status == 400 and body["error"]["message"].endswith("when callee_timezone is sent"), body
    status, body, _ = await place(api, key, agent_id=calling_agent["id"], to=to, compliance="sometimes")
    assert status == 400 and body["error"]["code"] in ("invalid_request", "bad_request")


async def test_place_call_returns_a_deferral_as_data(api, stack, account, voice, calling_agent):
    """What a communication run or the pipeline gets: the deferral (with its instant) instead of an error."""
    closed, open_ = callee(open_now=False), callee()
    for to in (closed, open_):
        await opt_in(api, account["key"], to)
    md = as_business(stack, account, "calls", "runs-scheduler")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{stack.process('calls').port}") as channel:
        calls = calls_pb2_grpc.CallsStub(channel)
        later, now = await asyncio.gather(*(calls.PlaceCall(calls_pb2.CreateCallRequest(
            agent_id=calling_agent["id"], to=to, compliance=calls_pb2.COMPLIANCE_MODE_ENFORCE, actor="run",
            reference=f"touch-{to}"), metadata=md) for to in (closed, open_)))
    assert later.WhichOneof("outcome") == "deferred" and later.deferred.code == "tcpa_violation"
    assert later.deferred.not_before.ToDatetime(UTC) > datetime.now(UTC)
    assert (later.deferred.actor, later.deferred.reference) == ("run", f"touch-{closed}")
    assert await provider_calls_to(voice, closed) == []
    assert now.WhichOneof("outcome") == "call" and now.call.status == "queued"
    [logged] = await decisions(api, account["key"], phone=open_)
    assert (logged["actor"], logged["reference"]) == ("run", f"touch-{open_}")


async def test_the_decision_log_is_the_businesss_own_and_append_only(api, account, other_key, stack,
                                                                     calling_agent):
    key, to = account["key"], callee()
    status, body, _ = await send(api, key, calling_agent, to)
    assert status == 400 and body["error"]["code"] == "number_opted_out"
    await opt_in(api, key, to)
    status, sent, _ = await send(api, key, calling_agent, to)
    assert status == 200, sent
    allowed, refused = await decisions(api, key, phone=to)
    assert (allowed["outcome"], allowed["actor"], allowed["reference"]) == ("allow", "sms", sent["message_id"])
    assert (refused["outcome"], refused["rule"]) == ("refuse", "no_consent_sms")
    # Another account sees none of it, and may not name the business.
    status, body, _ = await api.request("GET", "/api/v1/compliance/decisions", key=other_key,
                                        params={"phone": to})
    assert status == 200 and body["decisions"] == []
    status, body, _ = await api.request("GET", "/api/v1/compliance/decisions", key=other_key,
                                        params={"business_id": account["business_id"]})
    assert status == 403 and body["error"]["code"] == "forbidden"
    # The log refuses to change.
    conn = await asyncpg.connect(stack.database_url)
    try:
        for statement in ("UPDATE messaging.compliance_decisions SET outcome = 'allow' WHERE id = $1",
                          "DELETE FROM messaging.compliance_decisions WHERE id = $1"):
            with pytest.raises(asyncpg.RaiseError, match="append-only"):
                await conn.execute(statement, refused["id"])
    finally:
        await conn.close()
    # Pages walk the log newest first.
    status, first, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key, params={"limit": "1"})
    assert status == 200 and len(first["decisions"]) == 1 and first["has_more"] is True
    status, second, _ = await api.request("GET", "/api/v1/compliance/decisions", key=key,
                                          params={"limit": "1", "cursor": first["next_cursor"]})
    assert second["decisions"][0]["decided_at"] <= first["decisions"][0]["decided_at"]
    assert second["decisions"][0]["id"] != first["decisions"][0]["id"]
