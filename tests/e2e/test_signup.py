"""POST /api/v1/signup and the magic-link dashboard session."""
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from tests.api import next_client_ip


async def test_signup_creates_account_business_key_and_magic_link(api):
    body = await api.signup(business_name="Bright Dental", website="https://bright.example.com",
                            phone_forward_to="+14155550123", business_type="dental")
    assert body["api_key"].startswith("svc_live_")
    assert body["provisioning_deferred"] is True
    assert body["agent_id"] is None and body["phone_number"] is None
    assert body["payment_capture"] == "stripe_checkout" and body["checkout_url"].startswith("http")
    assert body["dashboard_url"].endswith("/dashboard")
    assert "/dashboard/login?token=" in body["dashboard_magic_link"]
    trial_end = datetime.fromisoformat(body["trial_ends_at"])
    assert timedelta(days=6, hours=23) < trial_end - datetime.now(UTC) <= timedelta(days=7)
    # the signup key works at once, with the default read-only scopes
    status, ws, _ = await api.request("GET", "/api/v1/workspaces", key=body["api_key"])
    assert status == 200
    assert [w["id"] for w in ws["workspaces"]] == [body["business_id"]]
    assert ws["workspaces"][0]["name"] == "Bright Dental"
    assert ws["workspaces"][0]["lifecycle_state"] == "active"
    status, caps, _ = await api.request("GET", "/api/v1/capabilities", key=body["api_key"])
    assert sorted(caps["key"]["scopes"]) == sorted([
        "workspaces:read", "numbers:read", "agents:read", "communication-runs:read", "calls:read", "sms:read",
        "webhooks:read", "events:read"])


async def test_plan_id_takes_a_plan_name_or_an_offered_checkout_price(api, db):
    by_price = await api.signup(plan_id="price_growth_monthly")  # the local stack's stand-in price of growth
    by_name = await api.signup(plan_id="scale")
    plans = dict(await db.fetch("SELECT id::text, plan_id FROM accounts.businesses WHERE id = ANY($1::uuid[])",
                                [by_price["business_id"], by_name["business_id"]]))
    assert plans == {by_price["business_id"]: "growth", by_name["business_id"]: "scale"}
    _, doc, _ = await api.request("GET", "/api/v1/openapi.json")
    offered = doc["components"]["schemas"]["SignupRequest"]["properties"]["plan_id"]["enum"]
    assert {"starter", "growth", "scale", "price_growth_monthly"} <= set(offered)


@pytest.mark.parametrize("payload, fragment", [
    ({"email": "a@example.com"}, "business_name is required"),
    ({"business_name": "X"}, "email is required"),
    ({"business_name": "", "email": "a@example.com"}, "business_name"),
    ({"business_name": "X", "email": "not-an-email"}, "email"),
    ({"business_name": "X", "email": "a@example.com", "website": "ftp://x"}, "website"),
    ({"business_name": "X", "email": "a@example.com", "phone_forward_to": "415-555-0123"}, "phone_forward_to"),
    ({"business_name": "X", "email": "a@example.com", "phone_forward_to": "+1555"}, "phone_forward_to"),
    ({"business_name": "X", "email": "a@example.com", "plan_id": "platinum"}, "plan_id"),
    ({"business_name": 7, "email": "a@example.com"}, "business_name"),
])
async def test_signup_validation_errors(api, payload, fragment):
    status, body, _ = await api.request("POST", "/api/v1/signup", json=payload,
                                        headers={"X-Forwarded-For": next_client_ip()})
    assert status == 400
    assert body["error"]["code"] == "validation_error"
    assert fragment in body["error"]["message"]


async def test_duplicate_email_is_409_case_insensitively(api):
    status, _, _ = await api.request("POST", "/api/v1/signup", json={"business_name": "Dup", "email": "Dup.Owner@Example.com"},
                                     headers={"X-Forwarded-For": next_client_ip()})
    assert status == 200
    status, body, _ = await api.request("POST", "/api/v1/signup", json={"business_name": "Dup", "email": "dup.owner@example.com"},
                                        headers={"X-Forwarded-For": next_client_ip()})
    assert status == 409
    assert body["error"]["code"] == "email_exists"


async def test_signup_is_limited_to_five_per_hour_per_address(api):
    ip = next_client_ip()
    for i in range(5):
        status, body, _ = await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": ip},
                                            json={"business_name": f"B{i}", "email": f"limit-{i}-{ip}@example.com"})
        assert status == 200, body
    status, body, headers = await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": ip},
                                              json={"business_name": "B6", "email": f"limit-6-{ip}@example.com"})
    assert status == 429
    assert body["error"]["code"] == "rate_limited"
    assert 3500 <= int(headers["Retry-After"]) <= 3601
    # another address is not affected
    status, _, _ = await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": next_client_ip()},
                                     json={"business_name": "B7", "email": f"limit-7-{ip}@example.com"})
    assert status == 200


async def test_signup_limits_an_ipv6_client_by_its_64(api):
    """Every address of one /64 is one client, as the public limits count it: the sixth signup from a fresh address
    of the same /64 is refused; another /64 is not affected."""
    async def signup_from(address: str, n: int):
        return await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": address},
                                 json={"business_name": f"V{n}", "email": f"v6-{n}@example.com"})

    for i in range(5):
        status, body, _ = await signup_from(f"2001:db8:51::{i + 1}", i)
        assert status == 200, body
    status, body, _ = await signup_from("2001:db8:51::beef", 6)
    assert status == 429 and body["error"]["code"] == "rate_limited", body
    status, body, _ = await signup_from("2001:db8:52::1", 7)
    assert status == 200, body


async def test_magic_link_signs_in_once_with_a_safe_cookie(api):
    signup = await api.signup()
    status, _, headers = await api.open_link(signup["dashboard_magic_link"])
    assert status == 303 and headers["Location"] == "/dashboard"
    cookie = headers["Set-Cookie"]
    assert "sb_session=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    status, body, _ = await api.open_link(signup["dashboard_magic_link"])
    assert status == 401
    assert "already used" in body
    status, _, _ = await api.open_link(f"{api.base}/dashboard/login?token=forged")
    assert status == 401


async def test_signup_limit_clears_after_the_hour(api, stack):
    """Five attempts that are just over an hour old no longer count."""
    ip = next_client_ip()
    conn = await asyncpg.connect(stack.database_url)
    try:
        await conn.executemany("INSERT INTO accounts.signup_attempts (client_ip, created_at) VALUES ($1, $2)",
                               [(ip, datetime.now(UTC) - timedelta(minutes=61))] * 5)
        status, body, _ = await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": ip},
                                            json={"business_name": "Later", "email": f"later-{ip}@example.com"})
        assert status == 200, body
        await conn.executemany("INSERT INTO accounts.signup_attempts (client_ip, created_at) VALUES ($1, $2)",
                               [(ip, datetime.now(UTC) - timedelta(minutes=59))] * 4)
        status, body, _ = await api.request("POST", "/api/v1/signup", headers={"X-Forwarded-For": ip},
                                            json={"business_name": "Too soon", "email": f"soon-{ip}@example.com"})
        assert status == 429
        assert (await conn.fetchval("SELECT count(*) FROM accounts.signup_attempts WHERE client_ip = $1", ip)) == 5
    finally:
        await conn.close()
