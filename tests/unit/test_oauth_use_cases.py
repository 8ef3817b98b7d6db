"""The connector's OAuth use cases (services/accounts/identity/oauth_service.py) in the fast tier, on the in-memory accounts
unit (tests/memory/accounts.py): a client known by its metadata document (served in this process and fetched
through the real ClientDocuments) or registered, the account user's approval, the code with PKCE, the token
exchange, refresh with rotation, revocation, and another account's view. The pages and endpoints around them run
on the stack (tests/e2e/test_oauth.py)."""
from dataclasses import dataclass
from datetime import timedelta

import pytest
from aiohttp import web

from core.bus import EventBus
from core.errors import ServiceError
from core.ids import new_id, utcnow
from core.settings import Settings
from core.uow import UnitOfWork
from services.accounts import domain, secret_keys
from services.accounts.identity import oauth_domain as rules
from services.accounts.identity.client_documents import ClientDocuments
from services.accounts.identity.oauth_service import AuthorizationRequest, OAuth
from services.accounts.identity.service import Identity
from services.accounts.schema import outbox, sessions, users
from tests.connector import CALLBACK, pkce, query_of
from tests.integration.servers import serving
from tests.memory import insert
from tests.memory.accounts import MemoryAccounts, MemoryAccountsUnit, MemoryHotPath
from tests.use_cases import refused

MINE, THEIRS = "session-of-the-account", "session-of-another-account"
SCOPES = "agents:read calls:read"
DOCUMENT = web.AppKey("document", dict)
FETCHES = web.AppKey("fetches", list)


@dataclass(frozen=True)
class Account:
    session: str  # its dashboard session's token
    id: str
    business_ids: list[str]  # oldest first


async def an_account(database, service: Identity, session: str, businesses: int) -> Account:
    """An account with a live dashboard session and `businesses` workspaces in their trial."""
    account_id, now = new_id(), utcnow()
    async with database.transaction() as conn:
        insert(conn.rows(users), users, {"id": account_id, "email": f"{account_id}@example.com", "created_at": now})
        insert(conn.rows(sessions), sessions, {
            "token_hash": service.hash(secret_keys.SESSION, session), "account_id": account_id, "created_at": now,
            "expires_at": now + timedelta(days=1), "last_used_at": now})
        made = [await MemoryAccounts(conn).add_business(
            id=new_id(), account_id=account_id, name=f"Business {n}", lifecycle_state="active", metadata={},
            plan_id="starter", subscription_status="trialing", trial_ends_at=now + domain.trial_length(),
            created_at=now + timedelta(seconds=n), updated_at=now, timezone="UTC") for n in range(businesses)]
    return Account(session, account_id, [b.id for b in made])


@pytest.fixture
async def document_server():
    """A client's metadata document, served at /client.json (naming itself by that URL), with the fetches it saw."""
    async def document(request: web.Request) -> web.Response:
        request.app[FETCHES].append(request.path)
        return web.json_response(request.app[DOCUMENT])

    app = web.Application()
    app[DOCUMENT], app[FETCHES] = {}, []
    app.router.add_get("/client.json", document)
    async with serving(app) as server:
        url = str(server.make_url("/client.json"))
        app[DOCUMENT].update(client_id=url, client_name="Assistant", redirect_uris=[CALLBACK],
                             grant_types=["authorization_code", "refresh_token"])
        yield server


@pytest.fixture
async def oauth(database):
    """The use cases on the in-memory unit with a bus that never connected (the gateways' invalidation is best
    effort) and the real metadata document fetcher, loopback allowed as on a developer's stack."""
    documents = ClientDocuments(allow_loopback=True)
    identity = Identity(UnitOfWork(database, MemoryAccountsUnit, events=outbox), MemoryHotPath(database),
                        EventBus("nats://127.0.0.1:9", "accounts-fast-tier"), Settings())
    yield OAuth(identity, documents)
    await documents.close()


@pytest.fixture
async def me(database, oauth):
    return await an_account(database, oauth.identity, MINE, 2)


@pytest.fixture
async def them(database, oauth):
    return await an_account(database, oauth.identity, THEIRS, 1)


@pytest.fixture
async def client_id(oauth) -> str:
    """A client registered dynamically (RFC 7591)."""
    client = await oauth.register({"client_name": "Assistant", "redirect_uris": [CALLBACK],
                                   "grant_types": ["authorization_code", "refresh_token"]})
    return client.client_id


def request(client_id: str, challenge: str, scope: str = SCOPES) -> AuthorizationRequest:
    return AuthorizationRequest(response_type="code", client_id=client_id, redirect_uri=CALLBACK, scope=scope,
                                state="xyz", code_challenge=challenge, code_challenge_method="S256")


async def approved_code(oauth: OAuth, account: Account, client_id: str, scopes: list[str] | None = None,
                        business_ids: list[str] | None = None) -> tuple[str, str]:
    """The account user approves the client (all it asked and all their businesses unless told): the code the
    browser brings back, and its PKCE verifier."""
    verifier, challenge = pkce()
    location = await oauth.decide(account.session, request(client_id, challenge), True,
                                  SCOPES.split() if scopes is None else scopes,
                                  account.business_ids if business_ids is None else business_ids)
    back = query_of(location)
    assert location.startswith(CALLBACK) and back["state"] == "xyz" and back["iss"] == oauth.issuer
    return back["code"], verifier


def exchange(client_id: str, code: str, verifier: str) -> dict[str, str]:
    return {"grant_type": "authorization_code", "code": code, "code_verifier": verifier, "client_id": client_id,
            "redirect_uri": CALLBACK}


def refresh(client_id: str, refresh_token: str, **extra: str) -> dict[str, str]:
    return {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id, **extra}


async def oauth_refused(call, oauth_error: str, message: str = "") -> None:
    """Await `call` and check it is refused with the RFC 6749 error `oauth_error`, its message containing
    `message`."""
    with pytest.raises(ServiceError) as error:
        await call
    assert error.value.details["oauth_error"] == oauth_error and message in error.value.message, error.value


async def test_a_documents_client_signs_in_with_pkce_for_the_scopes_and_businesses_approved(oauth, me, them,
                                                                                          document_server):
    client_id = str(document_server.make_url("/client.json"))
    _, challenge = pkce()
    consent = await oauth.consent(MINE, request(client_id, challenge))
    assert (consent.account_id, consent.authorization.client.client_name, consent.authorization.scopes) == (
        me.id, "Assistant", ("agents:read", "calls:read"))
    assert [(b.id, b.name) for b in consent.businesses] == [(me.business_ids[0], "Business 0"),
                                                            (me.business_ids[1], "Business 1")]
    # one of the two scopes, one of the account's businesses (another account's is dropped)
    code, verifier = await approved_code(oauth, me, client_id, ["calls:read", "leads:write"],
                                         [me.business_ids[1], them.business_ids[0]])
    assert document_server.app[FETCHES] == ["/client.json"]  # fetched once, then known for DOCUMENT_TTL
    await oauth_refused(oauth.token(exchange(client_id, code, pkce()[0])), "invalid_grant", "PKCE")
    tokens = await oauth.token(exchange(client_id, code, verifier))  # the refusal did not spend the code
    assert (tokens.scopes, tokens.expires_in) == (("calls:read",), rules.ACCESS_TTL.total_seconds())
    principal = await oauth.authenticate(tokens.access_token)
    assert (principal.account_id, principal.scopes, principal.business_ids, principal.bound_business_id) == (
        me.id, ["calls:read"], [me.business_ids[1]], me.business_ids[1])


async def test_a_code_is_refused_to_another_client_redirect_uri_or_a_second_use_which_revokes_its_grant(
        oauth, me, client_id):
    code, verifier = await approved_code(oauth, me, client_id)
    other = (await oauth.register({"redirect_uris": [CALLBACK]})).client_id
    await oauth_refused(oauth.token(exchange(other, code, verifier)), "invalid_grant", "another client")
    await oauth_refused(oauth.token({**exchange(client_id, code, verifier), "redirect_uri": CALLBACK + "/x"}),
                        "invalid_grant", "redirect_uri")
    tokens = await oauth.token(exchange(client_id, code, verifier))
    await oauth_refused(oauth.token(exchange(client_id, code, verifier)), "invalid_grant", "already used")
    await refused(oauth.authenticate(tokens.access_token), "unauthorized", "revoked")
    await oauth_refused(oauth.token(refresh(client_id, tokens.refresh_token)), "invalid_grant", "revoked")
    await oauth_refused(oauth.token(exchange(client_id, "no-such-code", verifier)), "invalid_grant", "invalid")


async def test_refresh_rotates_the_token_narrows_scopes_and_a_used_refresh_token_revokes_the_sign_in(
        oauth, me, client_id):
    code, verifier = await approved_code(oauth, me, client_id)
    first = await oauth.token(exchange(client_id, code, verifier))
    await oauth_refused(oauth.token(refresh(client_id, first.refresh_token, scope="leads:write")), "invalid_scope")
    second = await oauth.token(refresh(client_id, first.refresh_token, scope="calls:read"))
    assert second.refresh_token != first.refresh_token and second.scopes == ("calls:read",)
    assert (await oauth.authenticate(second.access_token)).scopes == ["calls:read"]
    third = await oauth.token(refresh(client_id, second.refresh_token))  # the grant's scopes again
    assert third.scopes == ("agents:read", "calls:read")
    await oauth_refused(oauth.token(refresh(client_id, first.refresh_token)), "invalid_grant", "already used")
    await oauth_refused(oauth.token(refresh(client_id, third.refresh_token)), "invalid_grant", "revoked")
    await refused(oauth.authenticate(third.access_token), "unauthorized", "revoked")


async def test_revoking_a_token_ends_its_grant_and_another_clients_revocation_is_ignored(oauth, me, client_id):
    by_refresh = await oauth.token(exchange(client_id, *await approved_code(oauth, me, client_id)))
    by_access = await oauth.token(exchange(client_id, *await approved_code(oauth, me, client_id)))
    assert await oauth.revoke(by_refresh.refresh_token, "sbc_another") is None
    assert await oauth.revoke(by_access.access_token, "sbc_another") is None
    assert await oauth.revoke("no-such-token", client_id) is None
    assert len(await oauth.connections(MINE)) == 2
    assert await oauth.revoke(by_refresh.refresh_token, client_id) == me.id
    await refused(oauth.authenticate(by_refresh.access_token), "unauthorized", "revoked")
    await oauth_refused(oauth.token(refresh(client_id, by_refresh.refresh_token)), "invalid_grant", "revoked")
    assert (await oauth.authenticate(by_access.access_token)).account_id == me.id  # the other grant stays
    assert await oauth.revoke(by_access.access_token, client_id) == me.id
    await refused(oauth.authenticate(by_access.access_token), "unauthorized", "revoked")
    await oauth_refused(oauth.token(refresh(client_id, by_access.refresh_token)), "invalid_grant", "revoked")
    assert await oauth.connections(MINE) == []


async def test_another_account_neither_sees_nor_disconnects_a_grant(oauth, me, them, client_id):
    tokens = await oauth.token(exchange(client_id, *await approved_code(oauth, me, client_id,
                                                                         business_ids=[me.business_ids[0]])))
    [connection] = await oauth.connections(MINE)
    assert (connection.client_id, connection.client_name, connection.scopes, connection.business_ids) == (
        client_id, "Assistant", ["agents:read", "calls:read"], [me.business_ids[0]])
    assert await oauth.connections(THEIRS) == []
    await refused(oauth.disconnect(THEIRS, connection.id), "not_found", "connected client")
    assert (await oauth.authenticate(tokens.access_token)).business_ids == [me.business_ids[0]]
    await refused(oauth.decide(THEIRS, request(client_id, pkce()[1]), True, ["calls:read"], me.business_ids),
                  "invalid_request", "your businesses")  # their approval cannot name my businesses
    assert await oauth.disconnect(MINE, connection.id) == me.id
    await refused(oauth.authenticate(tokens.access_token), "unauthorized", "revoked")
    assert await oauth.connections(MINE) == []
