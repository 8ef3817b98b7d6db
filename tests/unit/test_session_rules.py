"""Dashboard sessions' rules (security review, issue 36): where a sign-in may lead, the cookie's attributes from the
public URL, the idle timeout and its cheap bookkeeping, and secrets compared without raising."""
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp import web

from core.constant_time import same_secret
from gateway.dashboard.pages import next_page
from gateway.dashboard.session_cookie import clear_session_cookie, set_session_cookie
from services.accounts import domain

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", [
    "/%09/evil.com", "/\t/evil.com", "//evil.com", "/\\evil.com", "https://evil.com/dashboard", "http:/dashboard",
    "/api/v1/keys", "/dashboard/../api/v1/keys", "/dashboardx", "/dashboard\n", "/dashboard#x", "", "dashboard",
    "/dashboard/login?token=x", "/oauth/token", "/\u00e9", "/dashboard/calls/../../api/v1/keys",
    "/dashboard/keys/k_1", "/dashboard/calls/a/b", "//[evil]/dashboard", "//evil.com:99999/dashboard"])
def test_a_sign_in_leads_nowhere_but_the_dashboards_pages(value):
    assert next_page(value) == "/dashboard"


@pytest.mark.parametrize("value", ["/dashboard", "/dashboard/connections", "/dashboard?checkout=complete",
                                   "/dashboard/calls/call_01J9", "/dashboard/leads?status=new",
                                   "/oauth/authorize?response_type=code&client_id=https%3A%2F%2Fa.example%2Fc"])
def test_a_sign_in_goes_back_to_the_dashboard_page_that_asked(value):
    assert next_page(value) == value


@dataclass(frozen=True)
class _Settings:
    public_base_url: str


def test_the_cookie_is_secure_and_host_only_where_the_public_url_is_https():
    response = web.Response()
    set_session_cookie(response, _Settings("https://switchboard.example"), "tok", 3600)
    cookie = response.cookies["__Host-sb_session"]
    assert cookie.value == "tok" and cookie["secure"] and cookie["path"] == "/" and not cookie["domain"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["max-age"] == "3600"
    plain = web.Response()
    set_session_cookie(plain, _Settings("http://127.0.0.1:8080"), "tok", 3600)
    assert "__Host-sb_session" not in plain.cookies and not plain.cookies["sb_session"]["secure"]
    cleared = web.Response()
    clear_session_cookie(cleared, _Settings("https://switchboard.example"))
    assert cleared.cookies["__Host-sb_session"]["max-age"] == "0" and cleared.cookies["__Host-sb_session"]["secure"]


def test_a_session_ends_after_its_lifetime_or_twelve_hours_unused():
    expires = NOW + timedelta(days=1)
    assert domain.session_live(expires, NOW - timedelta(hours=11, minutes=59), NOW)
    assert not domain.session_live(expires, NOW - timedelta(hours=12), NOW)
    assert not domain.session_live(NOW, NOW, NOW)  # however recently used, never past its lifetime


def test_a_use_is_written_at_most_once_a_minute():
    assert not domain.session_touch_due(NOW - timedelta(seconds=59), NOW)
    assert domain.session_touch_due(NOW - timedelta(minutes=1), NOW)


@pytest.mark.parametrize("presented", ["caf\u00e9", "\udce9", "s3cret\u0000", ""])
def test_a_secret_that_is_not_ours_or_not_ascii_does_not_match(presented):
    assert same_secret("s3cret", "s3cret") and not same_secret(presented, "s3cret")
