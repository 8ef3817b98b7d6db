"""core.caller: a caller context is what a token signed by an accepted key says, within its lifetime, addressed to
the service verifying it, from an issuer that may vouch for that caller to that service (the vouch table); anything
else is refused as unauthorized."""
import base64
import json
import time
from types import SimpleNamespace

import jwt
import pytest

from core import caller, registry
from core.errors import ServiceError
from core.tenant import Tenant

KEY_HOLDER = Tenant(account_id="acc", business_ids=("b1", "b2"), api_key_id="key", scopes=("calls:write",),
                    standings=(("b1", "active"),))
WORKER = Tenant(account_id="service:sms-consumer", business_ids=("b1",))
RECORD_USAGE = "/switchboard.v1.Accounts/RecordUsage"


def keys_of(kid: str, audience: str = "calls", seed: bytes = b"s" * 32) -> tuple[caller.Signer, caller.Verifier]:
    signing, verify = caller.new_key(kid, seed)
    return caller.Signer(caller.KeyRing.parse(signing, "")), caller.Verifier(caller.KeyRing.parse("", verify), audience)


def refusal(verifier: caller.Verifier, token: str | None, method: str = "") -> str:
    with pytest.raises(ServiceError) as refused:
        verifier.verify(token, method)
    assert refused.value.code == "unauthorized"
    return refused.value.message


def forged(signer: caller.Signer, audience: str, **claims) -> str:
    """A token signed by `signer`'s own key by hand, past its own checks."""
    now = int(time.time())
    body = {"acc": "acc", "biz": ["b1"], "key": "", "scp": [], "bnd": "", "std": [], "act": [],
            "iss": caller.issuer_of(signer.keys.kid), "aud": audience, "iat": now, "exp": now + 60, **claims}
    return jwt.encode(body, signer.keys.signing, algorithm="EdDSA", headers={"kid": signer.keys.kid})


def test_the_gateway_vouches_for_a_key_holder_to_the_service_named():
    signer, verifier = keys_of("gateway:1", "calls")
    token = signer.token_for(KEY_HOLDER, "calls")
    who = verifier.verify(token)
    assert who == KEY_HOLDER and who.via == ("gateway",)
    assert verifier.verify(token) is who  # kept once verified


def test_a_token_is_reused_per_caller_and_callee_while_it_has_long_to_live():
    signer, _ = keys_of("gateway:1")
    assert signer.token_for(KEY_HOLDER, "calls") == signer.token_for(KEY_HOLDER, "calls")
    assert signer.token_for(KEY_HOLDER, "calls") != signer.token_for(KEY_HOLDER, "accounts")
    assert signer.token_for(KEY_HOLDER, "calls") != signer.token_for(WORKER, "calls")


def test_a_token_for_one_service_is_refused_by_another():
    """The replay of a token captured on the hop to calls, against accounts."""
    signer, _ = keys_of("gateway:1")
    _, accounts = keys_of("gateway:1", "accounts")
    assert "not for accounts" in refusal(accounts, signer.token_for(KEY_HOLDER, "calls"))


def _accepting(audience: str, *kids: str) -> caller.Verifier:
    """The verifier of `audience` accepting the keys `kids` (each as keys_of makes it)."""
    return caller.Verifier(caller.KeyRing.parse("", ",".join(caller.new_key(k, b"s" * 32)[1] for k in kids)), audience)


def test_a_service_re_signs_its_callers_context_for_the_services_it_calls():
    """sdr, serving the gateway's caller, mints its own token for calls: same claims, the chain in `act`, the
    gateway's token as proof; calls forwards it on to messaging likewise."""
    gateway, sdr, calls = (keys_of(kid)[0] for kid in ("gateway:1", "sdr:1", "calls:1"))
    root = gateway.token_for(KEY_HOLDER, "sdr")
    received = _accepting("sdr", "gateway:1").verify(root)
    assert received.proof == root
    onward = sdr.token_for(received, "calls")
    who = _accepting("calls", "gateway:1", "sdr:1").verify(onward)
    assert who == KEY_HOLDER and who.via == ("gateway", "sdr") and who.proof == root
    assert jwt.decode(onward, options={"verify_signature": False})["iss"] == "sdr"
    third = _accepting("messaging", "gateway:1", "calls:1").verify(calls.token_for(who, "messaging"))
    assert third == KEY_HOLDER and third.via == ("gateway", "sdr", "calls")
    assert sdr.token_for(received, "calls") == onward  # reused, as the gateway's are
    # Not to a service it does not call, and never a key holder of its own making.
    with pytest.raises(RuntimeError, match="may not vouch"):
        sdr.token_for(received, "nowhere")
    with pytest.raises(RuntimeError, match="may not vouch"):
        sdr.token_for(KEY_HOLDER, "calls")
    evals, _ = keys_of("evals:1")
    assert "may not vouch" in refusal(_accepting("calls", "evals:1"), forged(evals, "calls"))  # it calls agents and accounts


def test_a_service_cannot_vouch_for_a_key_holder_it_was_not_sent():
    gateway, sdr = keys_of("gateway:1")[0], keys_of("sdr:1")[0]
    at_calls = _accepting("calls", "gateway:1", "sdr:1")
    wide = {"key": "key", "scp": ["calls:write"], "biz": ["b1", "b2"], "std": [["b1", "active"]], "act": ["gateway"]}
    assert "may not vouch" in refusal(at_calls, forged(sdr, "calls", **wide))  # no proof
    other = Tenant(account_id="acc", business_ids=("b1",), api_key_id="key", scopes=("calls:write",))
    for proof, why in ((gateway.token_for(other, "sdr"), "does not"),  # a narrower caller's token
                       (gateway.token_for(KEY_HOLDER, "agents"), "does not verify"),  # sent to another service
                       (sdr.token_for(WORKER, "calls"), "not the gateway's")):
        assert why in refusal(at_calls, forged(sdr, "calls", **wide, prf=proof))
    narrowed = forged(sdr, "calls", **{**wide, "biz": ["b1"], "std": []}, prf=gateway.token_for(KEY_HOLDER, "sdr"))
    assert at_calls.verify(narrowed).business_ids == ("b1",)  # fewer businesses: within its proof


def test_a_worker_vouches_for_one_business_to_the_services_it_calls_alone():
    scheduler, at_calls = keys_of("runs-scheduler:1", "calls")
    assert at_calls.verify(scheduler.token_for(WORKER, "calls")) == WORKER
    assert at_calls.verify(scheduler.token_for(Tenant(), "calls")) == Tenant()  # the process itself
    for wider in (KEY_HOLDER, Tenant(account_id="acc", business_ids=("b1", "b2")),
                  Tenant(account_id="acc", business_ids=("b1",), scopes=("*",))):
        with pytest.raises(RuntimeError, match="may not vouch"):
            scheduler.token_for(wider, "calls")
    assert "may not vouch" in refusal(at_calls, forged(scheduler, "calls", key="k", scp=["*"], act=["gateway"]))
    _, at_webhooks = keys_of("runs-scheduler:1", "webhooks")
    with pytest.raises(RuntimeError, match="may not vouch"):
        scheduler.token_for(WORKER, "webhooks")
    assert "may not vouch" in refusal(at_webhooks, forged(scheduler, "webhooks"))


def test_the_webhooks_dispatcher_vouches_for_nobody():
    dispatcher, _ = keys_of("webhooks-dispatcher:1")
    for service in registry.SERVICES:
        with pytest.raises(RuntimeError, match="may not vouch"):
            dispatcher.token_for(WORKER, service.name)
        _, verifier = keys_of("webhooks-dispatcher:1", service.name)
        assert "may not vouch" in refusal(verifier, forged(dispatcher, service.name))


def test_the_vouch_table():
    table = {(issuer, service): caller.may_vouch(issuer, WORKER, service)
             for issuer in registry.PROCESSES for service in registry.BY_NAME}
    assert {s for (i, s), ok in table.items() if ok and i == "gateway"} == set(registry.BY_NAME)
    assert not any(ok for (i, _), ok in table.items() if i == "webhooks-dispatcher")
    assert {s for (i, s), ok in table.items() if ok and i == "runs-scheduler"} == set(
        registry.worker("runs-scheduler").rpc_to)
    forwarded = Tenant(**{**KEY_HOLDER.__dict__, "via": ("gateway",), "proof": "the gateway's token"})
    assert caller.may_vouch("calls", forwarded, "sdr") and not caller.may_vouch("calls", KEY_HOLDER, "sdr")
    assert not caller.may_vouch("runs-scheduler", forwarded, "calls")
    assert caller.may_make("gateway", RECORD_USAGE) and not caller.may_make("calls", RECORD_USAGE)
    assert caller.may_make("calls", "/switchboard.v1.Accounts/GetWorkspace")
    assert caller.may_make("runs-scheduler", "/switchboard.v1.Calls/PlaceCall")
    assert not caller.may_make("runs-scheduler", "/switchboard.v1.Calls/ListCalls")  # not among its rpcs


def test_only_the_gateway_records_usage_and_runs_the_pipelines_window():
    """Each a caller the service accepts otherwise: a refusal of the RPC, not of the key."""
    seed = b"s" * 32
    accepted = ",".join(caller.new_key(kid, seed)[1] for kid in ("gateway:1", "calls:1"))
    at_accounts = caller.Verifier(caller.KeyRing.parse("", accepted), "accounts")
    at_sdr = caller.Verifier(caller.KeyRing.parse("", accepted), "sdr")
    gateway, calls = (keys_of(kid)[0] for kid in ("gateway:1", "calls:1"))
    assert at_accounts.verify(gateway.token_for(Tenant(), "accounts"), RECORD_USAGE) == Tenant()
    assert at_accounts.verify(calls.token_for(WORKER, "accounts")) == WORKER
    assert "calls may not call RecordUsage" in refusal(at_accounts, calls.token_for(WORKER, "accounts"), RECORD_USAGE)
    assert "calls may not call RunScheduled" in refusal(at_sdr, calls.token_for(WORKER, "sdr"),
                                                  "/switchboard.v1.Sdr/RunScheduled")


def test_missing_malformed_tampered_and_foreign_tokens_are_refused():
    signer, verifier = keys_of("gateway:1")
    assert "no x-sb-caller token" in refusal(verifier, None)
    assert "malformed" in refusal(verifier, "not-a-jwt")
    token = signer.token_for(KEY_HOLDER, "calls")
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["biz"] = ["b1", "b2", "b3"]  # a wider caller, same signature
    wider = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert "does not verify" in refusal(verifier, f"{head}.{wider}.{signature}")
    impostor, _ = keys_of("gateway:1", seed=b"x" * 32)  # the right key id, another key
    assert "does not verify" in refusal(verifier, impostor.token_for(KEY_HOLDER, "calls"))
    stranger, _ = keys_of("sdr:1")
    assert "not one this service accepts" in refusal(verifier, stranger.token_for(WORKER, "calls"))


def test_an_expired_token_is_refused_even_once_verified(monkeypatch):
    signer, verifier = keys_of("gateway:1")
    token = signer.token_for(KEY_HOLDER, "calls")
    verifier.verify(token)
    now = time.time()
    monkeypatch.setattr(caller.time, "time", lambda: now + caller.LIFETIME + 10)
    assert "expired" in refusal(verifier, token)
    monkeypatch.setattr(caller.time, "time", lambda: now - caller.LIFETIME - 10)
    stale = keys_of("gateway:1")[0].token_for(KEY_HOLDER, "calls")  # minted long ago, never seen here
    monkeypatch.undo()
    assert "expired" in refusal(verifier, stale)


def test_a_rotation_accepts_both_versions_then_only_the_new_one():
    old_signing, old_verify = caller.new_key("gateway:1")
    new_signing, new_verify = caller.new_key("gateway:2")
    old = caller.Signer(caller.KeyRing.parse(old_signing, "")).token_for(KEY_HOLDER, "calls")
    new = caller.Signer(caller.KeyRing.parse(new_signing, "")).token_for(KEY_HOLDER, "calls")
    overlap = caller.Verifier(caller.KeyRing.parse("", f"{old_verify},{new_verify}"), "calls")
    assert overlap.verify(old) == overlap.verify(new) == KEY_HOLDER
    after = caller.Verifier(caller.KeyRing.parse("", new_verify), "calls")
    assert after.verify(new) == KEY_HOLDER
    assert "'gateway:1' is not one this service accepts" in refusal(after, old)


def _settings(signing: str, verify: str) -> SimpleNamespace:
    return SimpleNamespace(caller_signing_key=SimpleNamespace(reveal=lambda: signing), caller_verify_keys=verify,
                           environment="production")


def test_a_process_accepts_the_keys_of_its_callers_alone():
    keys = caller.derived_keys("secret", registry.PROCESSES)
    every = ",".join(verify for _, verify in keys.values())
    accounts = caller.keyring_of(_settings(keys["accounts"][0], every), "accounts")
    assert {caller.issuer_of(kid) for kid in accounts.accepted} == set(registry.callers_of("accounts"))
    assert "webhooks-dispatcher" not in registry.callers_of("accounts")
    dispatcher = caller.keyring_of(_settings(keys["webhooks-dispatcher"][0], ""), "webhooks-dispatcher")
    assert dispatcher.accepted == {}  # nobody calls it: it needs no verify key
    with pytest.raises(SystemExit, match="CALLER_VERIFY_KEYS must be set"):
        caller.keyring_of(_settings(keys["calls"][0], ""), "calls")


def test_malformed_key_settings_name_the_setting():
    with pytest.raises(ValueError, match="CALLER_SIGNING_KEY"):
        caller.KeyRing.parse("gateway:1=short", "")
    with pytest.raises(ValueError, match="CALLER_VERIFY_KEYS"):
        caller.KeyRing.parse("", "gateway:1")


def test_the_local_keys_are_one_pair_per_process_derived_from_the_secret():
    first = caller.derived_keys("secret", ["gateway", "calls"])
    assert first == caller.derived_keys("secret", ["gateway", "calls"])
    assert first["gateway"] != first["calls"] != caller.derived_keys("other", ["calls"])["calls"]
