"""core.caller: a caller context is what a token signed by an accepted key says, within its lifetime, from an issuer
that may vouch for it; anything else is refused as unauthorized."""
import base64
import json
import time

import jwt
import pytest

from core import caller
from core.errors import ServiceError
from core.tenant import Tenant

KEY_HOLDER = Tenant(account_id="acc", business_ids=("b1", "b2"), api_key_id="key", scopes=("calls:write",),
                    standings=(("b1", "active"),))
WORKER = Tenant(account_id="service:sms-consumer", business_ids=("b1",))


def ring(*kids: str, signing: str | None = None) -> caller.KeyRing:
    pairs = {kid: caller.new_key(kid) for kid in kids}
    return caller.KeyRing.parse(pairs[signing][0] if signing else "", ",".join(v for _, v in pairs.values()))


def keys_of(kid: str, seed: bytes = b"s" * 32) -> tuple[caller.Signer, caller.Verifier]:
    signing, verify = caller.new_key(kid, seed)
    return caller.Signer(caller.KeyRing.parse(signing, "")), caller.Verifier(caller.KeyRing.parse("", verify))


def refusal(verifier: caller.Verifier, token: str | None) -> str:
    with pytest.raises(ServiceError) as refused:
        verifier.verify(token)
    assert refused.value.code == "unauthorized"
    return refused.value.message


def test_the_gateway_vouches_for_a_key_holder_and_the_verified_caller_keeps_its_token():
    signer, verifier = keys_of("gateway:1")
    token = signer.token_for(KEY_HOLDER)
    who = verifier.verify(token)
    assert who == KEY_HOLDER and who.token == token
    assert signer.token_for(who) == token  # passed on unchanged, never re-minted
    assert verifier.verify(token) is who  # kept once verified


def test_a_token_is_reused_while_it_has_long_to_live():
    signer, _ = keys_of("gateway:1")
    assert signer.token_for(KEY_HOLDER) == signer.token_for(KEY_HOLDER)
    assert signer.token_for(KEY_HOLDER) != signer.token_for(WORKER)


def test_missing_malformed_tampered_and_foreign_tokens_are_refused():
    signer, verifier = keys_of("gateway:1")
    assert "no x-sb-caller token" in refusal(verifier, None)
    assert "malformed" in refusal(verifier, "not-a-jwt")
    token = signer.token_for(KEY_HOLDER)
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    claims["biz"] = ["b1", "b2", "b3"]  # a wider caller, same signature
    wider = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert "does not verify" in refusal(verifier, f"{head}.{wider}.{signature}")
    impostor, _ = keys_of("gateway:1", b"x" * 32)  # the right key id, another key
    assert "does not verify" in refusal(verifier, impostor.token_for(KEY_HOLDER))
    stranger, _ = keys_of("elsewhere:1")
    assert "not one this service accepts" in refusal(verifier, stranger.token_for(WORKER))


def test_an_expired_token_is_refused_even_once_verified(monkeypatch):
    signer, verifier = keys_of("gateway:1")
    token = signer.token_for(KEY_HOLDER)
    verifier.verify(token)
    now = time.time()
    monkeypatch.setattr(caller.time, "time", lambda: now + caller.LIFETIME + 10)
    assert "expired" in refusal(verifier, token)
    monkeypatch.setattr(caller.time, "time", lambda: now - caller.LIFETIME - 10)
    stale = keys_of("gateway:1")[0].token_for(KEY_HOLDER)  # minted long ago, never seen here
    monkeypatch.undo()
    assert "expired" in refusal(verifier, stale)


def test_only_the_gateway_vouches_for_keys_scopes_and_several_businesses():
    signer, verifier = keys_of("calls:1")
    assert verifier.verify(signer.token_for(WORKER)) == WORKER
    assert verifier.verify(signer.token_for(Tenant())) == Tenant()  # the process itself
    for wider in (KEY_HOLDER, Tenant(account_id="acc", business_ids=("b1", "b2")),
                  Tenant(account_id="acc", business_ids=("b1",), scopes=("*",))):
        with pytest.raises(RuntimeError, match="may not vouch"):
            signer.token_for(wider)
    # Minted by hand with the process's own key, it is still refused where it is verified.
    forged = jwt.encode({"acc": "acc", "biz": ["b1", "b2"], "key": "k", "scp": ["*"], "bnd": "", "std": [],
                         "iss": "calls", "aud": caller.AUDIENCE, "iat": int(time.time()),
                         "exp": int(time.time()) + 60}, signer.keys.signing, algorithm="EdDSA",
                        headers={"kid": "calls:1"})
    assert "may not vouch" in refusal(verifier, forged)


def test_a_rotation_accepts_both_versions_then_only_the_new_one():
    old_signing, old_verify = caller.new_key("gateway:1")
    new_signing, new_verify = caller.new_key("gateway:2")
    old = caller.Signer(caller.KeyRing.parse(old_signing, "")).token_for(KEY_HOLDER)
    new = caller.Signer(caller.KeyRing.parse(new_signing, "")).token_for(KEY_HOLDER)
    overlap = caller.Verifier(caller.KeyRing.parse("", f"{old_verify},{new_verify}"))
    assert overlap.verify(old) == overlap.verify(new) == KEY_HOLDER
    after = caller.Verifier(caller.KeyRing.parse("", new_verify))
    assert after.verify(new) == KEY_HOLDER
    assert "'gateway:1' is not one this service accepts" in refusal(after, old)


def test_malformed_key_settings_name_the_setting():
    with pytest.raises(ValueError, match="CALLER_SIGNING_KEY"):
        caller.KeyRing.parse("gateway:1=short", "")
    with pytest.raises(ValueError, match="CALLER_VERIFY_KEYS"):
        caller.KeyRing.parse("", "gateway:1")


def test_the_local_keys_are_one_pair_per_process_derived_from_the_secret():
    first = caller.derived_keys("secret", ["gateway", "calls"])
    assert first == caller.derived_keys("secret", ["gateway", "calls"])
    assert first["gateway"] != first["calls"] != caller.derived_keys("other", ["calls"])["calls"]
