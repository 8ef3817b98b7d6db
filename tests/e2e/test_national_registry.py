"""The national do-not-call registry end to end: the operator's command (python -m services.messaging.registry) imports
a full file into the stack's database, then a communication run's touches (preview and execution), a text and an
enforced call to a number on it are refused with number_on_dnc and the decision log names the national registry;
an opt-in or a purchase exempts a number; data older than 31 days refuses every touch to its area code; another
business's key sees none of the log.

The stack subscribes to area code 505 (tests/conftest.py TEST_ENV), which no other test calls; the rows imported
are removed afterwards. A refusal by the registry comes before any calling window, so these tests do not depend
on the hour; where a touch passes the registry, they check what the decision said of it, not the window's verdict."""
import asyncio
import sys
import uuid

import asyncpg
import pytest

from core import registry as processes
from tests.compliance import decisions, enforced
from tests.runs import create, jobs_of, run_of, settled, touch
from tests.texting import opt_in, send

AREA = 505
LISTED, CONSENTING, CUSTOMER, UNLISTED = "+15055550142", "+15055550143", "+15055550144", "+15055550145"


async def operator_import(stack, path) -> tuple[int, str]:
    """The operator's command against the stack's database, as its role: (exit status, what it printed)."""
    env = {**stack.env(), "DATABASE_URL": stack.database_url_of(processes.NATIONAL_DNC_IMPORT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.messaging.registry", "import", str(path), env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode()


@pytest.fixture
async def registry(stack, tmp_path):
    """Area code 505 imported with LISTED, CONSENTING and CUSTOMER on the registry; a connection to the database."""
    path = tmp_path / f"national-{uuid.uuid4().hex[:8]}-full-{AREA}.txt"
    path.write_text("".join(f"{phone[2:]}\n" for phone in (LISTED, CONSENTING, CUSTOMER)))
    status, said = await operator_import(stack, path)
    assert status == 0, said
    assert f"{path.name}: full file, 3 lines loaded" in said and f"{AREA} (3 numbers)" in said
    conn = await asyncpg.connect(stack.database_url)
    try:
        yield conn
    finally:
        await conn.execute("DELETE FROM messaging.national_dnc WHERE number / 10000000 = $1", AREA)
        await conn.execute("DELETE FROM messaging.national_dnc_areas WHERE area_code = $1", AREA)
        await conn.execute("DELETE FROM messaging.national_dnc_files WHERE name = $1", path.name)
        await conn.close()


async def test_a_runs_touches_a_text_and_an_enforced_call_to_a_listed_number_are_refused_naming_the_registry(
        api, account, other_key, registry, calling_agent):
    key = account["key"]
    body = run_of(account, calling_agent, touch("call", LISTED),
                  touch("text", LISTED, channel="sms", seconds=1, context={"body": "Your quote is ready"}))
    status, plan, _ = await api.request("POST", "/api/v1/communication-runs/preview", key=key, json=body)
    assert status == 200, plan
    assert {(p["outcome"], p["code"], p["rule"]) for p in plan["planned"]} == {
        ("refuse", "number_on_dnc", "national_dnc")}
    status, run, _ = await create(api, key, body)
    assert status == 201, run
    await settled(api, key, run["id"])
    jobs = await jobs_of(api, key, run["id"])
    assert {(j["status"], j["code"]) for j in jobs} == {("refused", "number_on_dnc")}, jobs

    status, refused, _ = await send(api, key, calling_agent, LISTED)
    assert status == 400 and refused["error"]["code"] == "number_on_dnc", refused
    assert refused["error"]["message"].startswith(f"{LISTED} is on the national do-not-call registry (area code 505")
    status, refused, _ = await enforced(api, key, calling_agent, LISTED)
    assert status == 400 and refused["error"]["code"] == "number_on_dnc", refused

    logged = await decisions(api, key, phone=LISTED)
    assert sorted((d["actor"], d["channel"]) for d in logged) == [
        ("enforced_call", "call"), ("run", "call"), ("run", "sms"), ("sms", "sms")]
    for decision in logged:
        assert (decision["outcome"], decision["rule"], decision["code"]) == ("refuse", "national_dnc", "number_on_dnc")
        assert "national do-not-call registry" in decision["source"]
        assert decision["inputs"]["national_registry"]["listed"] is True
    status, body, _ = await api.request("GET", "/api/v1/compliance/decisions", key=other_key,
                                        params={"phone": LISTED})
    assert status == 200 and body["decisions"] == []


async def test_an_opt_in_or_a_purchase_exempts_a_listed_number(api, account, registry, calling_agent):
    key = account["key"]
    await opt_in(api, key, CONSENTING)
    await enforced(api, key, calling_agent, CONSENTING)  # placed or deferred by the hour: not refused
    [decided] = await decisions(api, key, phone=CONSENTING)
    assert decided["rule"] != "national_dnc" and decided["outcome"] in ("allow", "defer"), decided
    assert decided["inputs"]["national_registry"]["exemption"] == "opt_in"

    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={
        "business_id": account["business_id"], "phone": CUSTOMER, "status": "contacted"})
    assert status == 201 and lead["converted_at"] is None, lead
    status, lead, _ = await api.request("PATCH", "/api/v1/leads", key=key, json={"id": lead["id"],
                                                                                  "status": "converted"})
    assert status == 200 and lead["converted_at"] == lead["updated_at"], lead  # the purchase, as the lead records it
    await enforced(api, key, calling_agent, CUSTOMER)
    [decided] = await decisions(api, key, phone=CUSTOMER)
    assert decided["rule"] != "national_dnc" and decided["inputs"]["consent_basis"] == "existing_relationship"
    assert decided["inputs"]["national_registry"]["exemption"] == "purchase"

    await opt_in(api, key, UNLISTED)
    await send(api, key, calling_agent, UNLISTED)
    [decided] = await decisions(api, key, phone=UNLISTED)
    assert decided["inputs"]["national_registry"]["status"] == "checked"
    assert decided["inputs"]["national_registry"]["listed"] is False


async def test_data_older_than_31_days_refuses_every_touch_to_its_area_code(api, account, registry,
                                                                            calling_agent):
    key = account["key"]
    await opt_in(api, key, UNLISTED)
    await registry.execute("UPDATE messaging.national_dnc_areas SET refreshed_at = now() - interval '32 days' "
                           "WHERE area_code = $1", AREA)
    status, refused, _ = await send(api, key, calling_agent, UNLISTED)
    assert status == 400 and refused["error"]["code"] == "dnc_registry_stale", refused
    assert "area code 505" in refused["error"]["message"]
    [decided] = await decisions(api, key, phone=UNLISTED)
    assert decided["rule"] == "national_dnc_stale" and "31 days" in decided["source"]
