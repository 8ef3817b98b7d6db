"""The connector's access tokens (services.accounts.identity.oauth_tokens): what they say, and that a token forged, expired,
for another audience or of another issuer is not read."""
from datetime import UTC, datetime, timedelta

from services.accounts.identity.oauth_tokens import AccessTokens
from services.accounts.secret_keys import SecretKeys

NOW = datetime.now(UTC)  # when the module is imported: a whole test run may come between it and a test
LIFETIME = timedelta(days=1)
RESOURCE = "https://api.example.com/api/mcp"


def issue(tokens: AccessTokens, expires_at=NOW + LIFETIME) -> str:
    return tokens.issue(account_id="acct", grant_id="grant", client_id="sbc_x", scopes=("agents:read", "calls:read"),
                        now=NOW, expires_at=expires_at)


def test_a_token_carries_its_grant_scopes_and_expiry():
    tokens = AccessTokens(SecretKeys("secret"), "https://api.example.com", RESOURCE)
    claims = tokens.read(issue(tokens))
    assert (claims.account_id, claims.grant_id, claims.client_id) == ("acct", "grant", "sbc_x")
    assert claims.scopes == ("agents:read", "calls:read") and claims.expires_at == int((NOW + LIFETIME).timestamp())


def test_only_this_servers_live_tokens_for_this_resource_are_read():
    tokens = AccessTokens(SecretKeys("secret"), "https://api.example.com", RESOURCE)
    token = issue(tokens)
    assert AccessTokens(SecretKeys("other secret"), "https://api.example.com", RESOURCE).read(token) is None
    other_resource = "https://api.example.com/other"
    assert AccessTokens(SecretKeys("secret"), "https://api.example.com", other_resource).read(token) is None
    assert AccessTokens(SecretKeys("secret"), "https://elsewhere.example", RESOURCE).read(token) is None
    head, body, signature = token.split(".")
    assert tokens.read(f"{head}.{body}.{signature[::-1]}") is None
    assert tokens.read("svc_live_not_a_token") is None and tokens.read("") is None
    expired = issue(tokens, NOW - timedelta(seconds=1))
    assert tokens.read(expired) is None
    assert tokens.read(expired, check_expiry=False).grant_id == "grant"  # revocation reads expired tokens


def test_a_token_signed_before_a_rotation_is_read_while_the_previous_secret_is_held():
    before = AccessTokens(SecretKeys("secret"), "https://api.example.com", RESOURCE)
    token = issue(before)
    rotated = AccessTokens(SecretKeys("new secret", 2, previous="secret"), "https://api.example.com", RESOURCE)
    assert rotated.read(token).grant_id == "grant" and rotated.read(issue(rotated)).grant_id == "grant"
    assert before.read(issue(rotated)) is None  # a version it does not hold
    later = AccessTokens(SecretKeys("newest", 3, previous="new secret"), "https://api.example.com", RESOURCE)
    assert later.read(token) is None
