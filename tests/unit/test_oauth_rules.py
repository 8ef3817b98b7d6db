"""The assistant connector's OAuth rules (services.accounts.identity.oauth_domain): PKCE S256 only, the connector's scopes,
the resource a token is bound to, redirect URIs (exact, loopback on any port), registration metadata of a public
client and client ID metadata documents."""
import base64
import hashlib

import pytest

from services.accounts.identity import oauth_domain as oauth
from services.accounts.identity.oauth_domain import OAuthError

VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 appendix B
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
RESOURCE = "https://api.example.com/api/mcp"


def test_pkce_is_s256_over_the_verifier():
    assert base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode() == CHALLENGE
    assert oauth.pkce_holds(VERIFIER, CHALLENGE)
    assert not oauth.pkce_holds(VERIFIER[:-1] + "j", CHALLENGE)
    assert not oauth.pkce_holds(CHALLENGE, CHALLENGE)  # the challenge itself is not a verifier of itself
    assert not oauth.pkce_holds("short", CHALLENGE) and not oauth.pkce_holds("", CHALLENGE)


@pytest.mark.parametrize("challenge, method, why", [
    (None, "S256", "required"), (CHALLENGE, "plain", "S256"), (CHALLENGE, None, "S256"), ("abc", "S256", "43 to 128"),
])
def test_an_authorization_request_needs_an_s256_challenge(challenge, method, why):
    with pytest.raises(OAuthError) as refused:
        oauth.check_challenge(challenge, method)
    assert refused.value.error == "invalid_request" and why in refused.value.description
    assert oauth.check_challenge(CHALLENGE, "S256") == CHALLENGE


def test_scopes_are_the_connectors_and_default_to_reading():
    assert oauth.requested_scopes(None) == oauth.requested_scopes("") == ("agents:read", "calls:read")
    assert oauth.requested_scopes("calls:write calls:read calls:write") == ("calls:write", "calls:read")
    for asked in ("keys:write", "calls:read *", "webhooks:write"):
        with pytest.raises(OAuthError) as refused:
            oauth.requested_scopes(asked)
        assert refused.value.error == "invalid_scope"


def test_a_token_is_for_the_connector_only():
    assert oauth.check_resource(RESOURCE + "/", RESOURCE) == RESOURCE
    for other in (None, "https://api.example.com/api/v1", "https://evil.example/api/mcp"):
        with pytest.raises(OAuthError) as refused:
            oauth.check_resource(other, RESOURCE)
        assert refused.value.error == "invalid_target"


def test_redirect_uris_match_exactly_except_a_loopback_port():
    registered = ["https://claude.ai/api/mcp/auth_callback", "http://127.0.0.1:33418/callback"]
    assert oauth.redirect_matches(registered, "https://claude.ai/api/mcp/auth_callback")
    assert oauth.redirect_matches(registered, "http://127.0.0.1:50123/callback")
    for given in ("https://claude.ai/api/mcp/auth_callback/", "https://claude.ai/api/mcp/auth_callback?x=1",
                  "https://evil.example/api/mcp/auth_callback", "http://127.0.0.1:50123/other",
                  "http://localhost:33418/callback", "http://claude.ai/api/mcp/auth_callback"):
        assert not oauth.redirect_matches(registered, given), given


def test_registration_takes_public_clients_with_safe_redirects():
    stored = oauth.check_registration({"redirect_uris": ["http://localhost:8976/cb"], "client_name": "Claude Code",
                                       "grant_types": ["authorization_code", "refresh_token"],
                                       "token_endpoint_auth_method": "none"})
    assert stored["client_name"] == "Claude Code" and stored["redirect_uris"] == ["http://localhost:8976/cb"]
    for metadata, error in (
            ({}, "invalid_redirect_uri"), ({"redirect_uris": []}, "invalid_redirect_uri"),
            ({"redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
            ({"redirect_uris": ["https://example.com/cb#frag"]}, "invalid_redirect_uri"),
            ({"redirect_uris": ["https://example.com/cb"], "token_endpoint_auth_method": "client_secret_basic"},
             "invalid_client_metadata"),
            ({"redirect_uris": ["https://example.com/cb"], "grant_types": ["client_credentials"]},
             "invalid_client_metadata"),
            ({"redirect_uris": ["https://example.com/cb"], "response_types": ["token"]}, "invalid_client_metadata"),
            ({"redirect_uris": ["https://example.com/cb"], "client_uri": "not a uri"}, "invalid_client_metadata")):
        with pytest.raises(OAuthError) as refused:
            oauth.check_registration(metadata)
        assert refused.value.error == error, metadata


def test_a_client_id_metadata_document_names_itself():
    url = "https://app.example.com/oauth/client.json"
    assert oauth.is_metadata_document_id(url)
    for other in ("http://app.example.com/client.json", "https://app.example.com", "https://app.example.com/",
                  "8f14e45f-ceea-467e-9a0a-1f2b3c4d5e6f"):
        assert not oauth.is_metadata_document_id(other), other
    document = {"client_id": url, "client_name": "App", "redirect_uris": ["https://app.example.com/cb"],
                "token_endpoint_auth_method": "none"}
    assert oauth.check_metadata_document(url, document)["client_name"] == "App"
    for wrong in ({**document, "client_id": "https://evil.example/client.json"}, {**document, "redirect_uris": []},
                  ["not", "an", "object"]):
        with pytest.raises(OAuthError) as refused:
            oauth.check_metadata_document(url, wrong)
        assert refused.value.error == "invalid_client"


def test_metadata_document_ids_are_https_urls_with_a_path_or_loopback_on_a_developer_stack():
    assert oauth.is_metadata_document_id("https://app.example.com/oauth/client.json")
    assert not oauth.is_metadata_document_id("https://app.example.com/")
    assert not oauth.is_metadata_document_id("sbc_abc")
    assert not oauth.is_metadata_document_id("http://127.0.0.1:8080/client.json")
    assert oauth.is_metadata_document_id("http://127.0.0.1:8080/client.json", allow_loopback=True)
    assert not oauth.is_metadata_document_id("http://example.com/client.json", allow_loopback=True)
    with pytest.raises(OAuthError, match="invalid_client"):
        oauth.check_client_id("https://app.example.com/" + "a" * 2000)
