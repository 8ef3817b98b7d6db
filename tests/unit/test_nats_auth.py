"""NATS identities (core.nats_auth) and their declarations (core.registry.BUS), and the gateway's proof on PROVIDER
messages (core.provider_proof)."""
import pytest
import yaml

from core import caller, events, nats_auth, provider_proof, registry
from core.settings import Secret, Settings
from deploy import generate


def test_every_event_type_on_the_bus_has_one_publisher_the_service_with_the_outbox():
    publishers = {e.type: [p for p, use in registry.BUS.items() if e.type in use.events] for e in events.CATALOGUE}
    # webhook.test goes straight to the partner (services.webhooks), never on the bus
    assert {t: owners for t, owners in publishers.items() if len(owners) != 1} == {"webhook.test": []}
    relaying = {s.name for s in registry.SERVICES if s.outbox}
    assert {p for p, use in registry.BUS.items() if use.events} == relaying


def test_every_process_is_declared_and_each_consumer_reads_its_own_stream():
    assert set(registry.BUS) == set(registry.PROCESSES)
    prefixes = {registry.EVENTS_STREAM: "events.", registry.PROVIDER_STREAM: "provider."}
    durables = [c.durable for use in registry.BUS.values() for c in use.consumers]
    assert len(durables) == len(set(durables))
    for use in registry.BUS.values():
        assert all(c.subject.startswith(prefixes[c.stream]) for c in use.consumers)
    assert [p for p, use in registry.BUS.items() if use.provider] == [registry.GATEWAY]


def _allowed(process: str, direction: str) -> list[str]:
    return nats_auth.permissions(process)[direction]["allow"]


def test_a_process_may_publish_only_its_own_subjects():
    dispatcher = _allowed("webhooks-dispatcher", "publish")
    assert not [s for s in dispatcher if s.startswith(("events.", "provider.", "switchboard.", ">"))]
    assert "$JS.API.CONSUMER.CREATE.EVENTS.webhooks-dispatcher.events.>" in dispatcher
    # it waits for the streams' publishers (leaving their limits to them), and creates only the stream of its own
    # dead letters
    assert [s for s in dispatcher if ".STREAM.CREATE." in s] == ["$JS.API.STREAM.CREATE.DEADLETTERS"]
    assert not [s for s in dispatcher if ".STREAM.UPDATE." in s]
    assert [s for s in dispatcher if s.startswith("deadletter.")] == ["deadletter.EVENTS.webhooks-dispatcher"]
    gateway = _allowed(registry.GATEWAY, "publish")
    assert {"provider.payments.events", "$JS.API.STREAM.CREATE.PROVIDER"} <= set(gateway)
    assert not [s for s in gateway if s.startswith("events.")]
    accounts = _allowed("accounts", "publish")
    assert "events.workspace.teardown_completed" in accounts
    assert [p for p in registry.BUS if "events.workspace.teardown_completed" in _allowed(p, "publish")] == ["accounts"]
    assert not [s for p in registry.BUS for s in _allowed(p, "publish") + _allowed(p, "subscribe")
                if s in (">", "$JS.API.>", "_INBOX.>") or ".STREAM.DELETE." in s]
    # a stream's creators alone may update it (they set its limits on start: core.bus.ensure_stream)
    assert {(p, s.rpartition(".")[2]) for p in registry.BUS for s in _allowed(p, "publish") if ".STREAM.UPDATE." in s} \
        == {(p, stream) for p, use in registry.BUS.items() for stream in use.creates
            if stream in (registry.EVENTS_STREAM, registry.PROVIDER_STREAM)}


def test_each_consumer_and_outbox_relay_may_store_its_own_dead_letters_and_the_operator_read_and_replay_them():
    for process, use in registry.BUS.items():
        dead = [s for s in _allowed(process, "publish") if s.startswith("deadletter.")]
        # an outbox relay's too (core.outbox: an event NATS never takes, set aside), under its own name
        relayed = [f"deadletter.EVENTS.outbox-{process}"] if use.events else []
        assert dead == [*(f"deadletter.{c.stream}.{c.durable}" for c in use.consumers), *relayed]
        # DEADLETTERS is created by whoever stores on it, so a service with an outbox and no consumer could too
        assert ("$JS.API.STREAM.CREATE.DEADLETTERS" in _allowed(process, "publish")) == bool(use.consumers or use.events)
        assert ("$JS.API.STREAM.INFO.DEADLETTERS" in _allowed(process, "publish")) == bool(use.consumers or use.events)
    operator = nats_auth.operator_permissions()
    assert operator["subscribe"]["allow"] == ["_INBOX.deadletters-operator.>"]
    allowed = operator["publish"]["allow"]
    assert {"$JS.API.STREAM.MSG.GET.DEADLETTERS", "$JS.API.STREAM.MSG.DELETE.DEADLETTERS",
            "events.workspace.teardown_completed", "provider.voice.messages"} <= set(allowed)
    # a relay's dead letter is replayed on events.<type>, whatever its type: the webhooks dispatcher reads events.>
    assert "events.>" in allowed
    # a replay goes to a subject some consumer reads; nothing of the streams' or consumers' management
    assert not [s for s in allowed if s.startswith(("deadletter.", "switchboard.", ">"))
                or ".CONSUMER." in s or ".STREAM.CREATE." in s or ".STREAM.DELETE." in s]


def test_a_process_reads_only_its_own_replies_and_the_plain_subjects_it_declares():
    assert _allowed("agents", "subscribe") == ["_INBOX.agents.>", registry.STANDING_CHANGED_SUBJECT]
    assert _allowed("messaging", "subscribe") == ["_INBOX.messaging.>", "events.phone_number.*",
                                                  registry.STANDING_CHANGED_SUBJECT]
    assert _allowed("webhooks", "subscribe") == ["_INBOX.webhooks.>"]
    assert set(_allowed(registry.GATEWAY, "subscribe")) == {
        "_INBOX.gateway.>", registry.RATELIMIT_TAKEN_SUBJECT, registry.AUTH_INVALIDATE_SUBJECT}
    assert nats_auth.Login.of("agents", "SU").options()["inbox_prefix"] == "_INBOX.agents"


def test_seeds_are_user_nkeys_and_the_local_stacks_are_derived_from_its_secret():
    seed = nats_auth.new_seed()
    assert seed.startswith("SU") and nats_auth.public_key(seed).startswith("U")
    assert nats_auth.derived_seed("k", "calls") == nats_auth.derived_seed("k", "calls")
    assert nats_auth.derived_seed("k", "calls") != nats_auth.derived_seed("k", "sdr")
    with pytest.raises(ValueError):
        nats_auth.public_key("SUnot-a-seed")


def test_a_process_signs_in_with_its_seed_or_on_the_local_stack_with_one_derived():
    local = Settings(SWITCHBOARD_ENV="local", SWITCHBOARD_SECRET_KEY="k")
    assert nats_auth.login_of(local, "calls") == nats_auth.Login.of("calls", nats_auth.derived_seed("k", "calls"))
    seed = nats_auth.new_seed()
    given = local.model_copy(update={"environment": "production", "nats_seed": Secret(seed)})
    assert nats_auth.login_of(given, "calls") == nats_auth.Login(seed, "_INBOX.calls")
    with pytest.raises(SystemExit, match="NATS_SEED"):
        nats_auth.login_of(local.model_copy(update={"nats_seed": Secret("SUbad")}), "calls")


def test_the_local_server_knows_every_process_and_the_test_harness():
    config = nats_auth.server_config("k", 4222, "/tmp/x")
    keys = [u["nkey"] for u in config["authorization"]["users"]]
    assert keys == [*(nats_auth.public_key(nats_auth.derived_seed("k", p)) for p in registry.BUS),
                    nats_auth.public_key(nats_auth.derived_seed("k", nats_auth.OPERATOR)),
                    nats_auth.public_key(nats_auth.derived_seed("k", nats_auth.TEST_ADMIN))]


def test_the_helm_values_name_each_processs_public_key_from_the_secret():
    values = yaml.safe_load(generate.nats_auth_values())
    users = values["config"]["merge"]["authorization"]["users"]
    identities = [*registry.BUS, nats_auth.OPERATOR]
    assert [u["nkey"] for u in users] == [f"<< $NKEY_{registry.env_prefix(p)} >>" for p in identities]
    assert set(values["container"]["env"]) == {f"NKEY_{registry.env_prefix(p)}" for p in identities}
    assert "test-admin" not in generate.nats_auth_values()


def _keys(process: str) -> caller.KeyRing:
    pairs = caller.derived_keys("k", [registry.GATEWAY, "accounts"])
    return caller.KeyRing.parse(pairs[process][0], ",".join(verify for _, verify in pairs.values()))


def test_the_gateways_proof_verifies_only_for_what_it_signed():
    gateway, accounts = _keys(registry.GATEWAY), _keys("accounts")
    proof = provider_proof.sign(gateway, "provider.payments.events", "evt_1", b"{}")
    assert provider_proof.refusal(accounts, "provider.payments.events", "evt_1", b"{}", proof) is None
    assert provider_proof.refusal(accounts, "provider.payments.events", "evt_1", b"{ }", proof)
    assert provider_proof.refusal(accounts, "provider.sms.status", "evt_1", b"{}", proof)
    assert provider_proof.refusal(accounts, "provider.payments.events", "evt_2", b"{}", proof)
    assert provider_proof.refusal(accounts, "provider.payments.events", "evt_1", b"{}", None) == \
        f"no {provider_proof.HEADER} header"
    own = provider_proof.sign(accounts, "provider.payments.events", "evt_1", b"{}")
    assert "not by the gateway" in provider_proof.refusal(accounts, "provider.payments.events", "evt_1", b"{}", own)
    stranger = caller.KeyRing.parse(caller.new_key("gateway:9")[0], "")
    foreign = provider_proof.sign(stranger, "provider.payments.events", "evt_1", b"{}")
    assert "not one this process accepts" in provider_proof.refusal(accounts, "provider.payments.events", "evt_1",
                                                                    b"{}", foreign)
    assert provider_proof.refusal(accounts, "provider.payments.events", "evt_1", b"{}", "gateway:1=!!!")
