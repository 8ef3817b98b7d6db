"""NATS identities: each process signs in as its own NATS user (an nkey), allowed only what core.registry.BUS says
it does.

Why nkey users in the server's `authorization` block rather than accounts and JWTs: every process shares the one
JetStream domain (the EVENTS and PROVIDER streams), so accounts would have to export and import the streams back
into one another, and JWTs need an operator, a resolver and `nsc` beside the server. Users with permissions need
nothing but the server's config, which is generated here from the registry like the network policies, and the
server never holds a secret: it knows each user by its public key and checks a signature of its nonce.

A process's user may (`permissions`):
- publish `events.<type>` for each event type its outbox relays, and the PROVIDER subjects the gateway stores the
  providers' verified messages on; the plain subjects it declares (the rate-limit and auth-invalidation chatter);
  for each durable consumer it runs, that consumer's dead letters (`deadletter.<stream>.<consumer>`, on the
  DEADLETTERS stream, which the processes with a consumer or an outbox create: core.deadletters), and with an
  outbox its relay's (`deadletter.EVENTS.outbox-<process>`: an event NATS never takes, set aside, core.outbox);
- subscribe only to its own reply inbox (`_INBOX.<process>.>`, the prefix `Login` sets: another process's
  replies, JetStream's deliveries of pulled messages among them, stay unreadable) and the plain subjects it declares;
- of the JetStream API: the info of the streams it uses, the creation of those it publishes to (a stream is created
  by its publishers: the outbox services EVENTS, the gateway PROVIDER; nobody may update or delete one), and for
  each durable consumer it runs its creation (with its declared filter subject), info and next-message requests and
  its acknowledgements.

Besides the processes, OPERATOR is the operator's dead-letter command (`python -m core.deadletters`): it may read
and delete what DEADLETTERS holds and publish again on the subjects the consumers read (a replay), nothing else.
Those include `events.>` (the webhooks dispatcher's filter), so it may replay an outbox relay's dead letter of any
event type, one its service's user may not publish among them (`operator_permissions`).

The local stack's server (deploy.local) runs with `server_config`, whose users are the registry's processes and
OPERATOR (their seeds derived from the stack's server secret) plus TEST_ADMIN, the test harness's identity, which may
do anything and exists on the local stack only. A deployment's users come from deploy/nats-auth-values.generated.yaml
(each identity's public key from a Secret: `python -m core.nats_auth new-keys`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import nkeys

from core import registry

if TYPE_CHECKING:
    from core.settings import Settings

# The test harness's identity on the local stack (never in a deployment): it places what a test needs on the bus.
TEST_ADMIN = "test-admin"
# The operator's dead-letter command (core.deadletters): an identity of every deployment, not a process.
OPERATOR = "deadletters-operator"
JS_API = "$JS.API"


def inbox(process: str) -> str:
    """The process's reply inbox prefix: it may subscribe under it and nowhere else for replies."""
    return f"_INBOX.{process}"


def new_seed(raw: bytes | None = None) -> str:
    """A user nkey seed (`SU...`), random unless `raw` (32 bytes)."""
    return bytes(nkeys.encode_seed(raw or os.urandom(32), nkeys.PREFIX_BYTE_USER)).decode()


def public_key(seed: str) -> str:
    """The user's public key (`U...`) of a seed; ValueError when it is not a user seed."""
    try:
        pair = nkeys.from_seed(bytearray(seed.strip().encode()))
    except (nkeys.NkeysError, ValueError) as exc:
        raise ValueError(f"not an nkey seed ({type(exc).__name__})") from None
    key = bytes(pair.public_key).decode()
    if not key.startswith("U"):
        raise ValueError("not a user nkey seed (a user's starts with SU)")
    return key


def derived_seed(secret: str, process: str) -> str:
    """The local stack's seed of `process`, derived from the server secret."""
    return new_seed(hmac.new(secret.encode(), f"nats-user:{process}".encode(), hashlib.sha256).digest())


@dataclass(frozen=True)
class Login:
    """How one identity signs in: its seed and the inbox prefix its permissions allow."""

    seed: str
    inbox: str

    def options(self) -> dict[str, Any]:
        """Keyword arguments of nats.connect."""
        return {"nkeys_seed_str": self.seed, "inbox_prefix": self.inbox}

    @classmethod
    def of(cls, identity: str, seed: str) -> Login:
        return cls(seed, inbox(identity))


def login_of(settings: Settings, process: str) -> Login | None:
    """The process's NATS login from its settings (NATS_SEED); on the local stack, a process started by hand
    without one derives it from the server secret. None (anonymous) only when neither is there: a process the
    registry does not know, outside the launcher (core.settings.load requires NATS_SEED of every process outside
    the local stack)."""
    seed = settings.nats_seed.reveal()
    if not seed and settings.environment == "local":
        try:
            seed = derived_seed(settings.secret_key.reveal(), process)
        except RuntimeError:  # withheld (core.settings.load): its launcher gives it its seed
            raise SystemExit(f"{process}: NATS_SEED must be set") from None
    if not seed:
        return None
    try:
        public_key(seed)
    except ValueError as exc:
        raise SystemExit(f"{process}: NATS_SEED is {exc}: python -m core.nats_auth new-keys makes one") from None
    return Login.of(process, seed)


def _consumer_api(c: registry.Consumer) -> list[str]:
    # created by name with its filter in the subject (core.bus.DurableConsumer), so the filter is pinned: a process
    # cannot widen its consumer to subjects it does not declare
    return [f"{JS_API}.CONSUMER.CREATE.{c.stream}.{c.durable}.{c.subject}",
            f"{JS_API}.CONSUMER.INFO.{c.stream}.{c.durable}",
            f"{JS_API}.CONSUMER.MSG.NEXT.{c.stream}.{c.durable}",
            f"$JS.ACK.{c.stream}.{c.durable}.>",
            f"deadletter.{c.stream}.{c.durable}"]  # core.deadletters.subject_of


SETTINGS_LIMITED = (registry.EVENTS_STREAM, registry.PROVIDER_STREAM)


def permissions(process: str) -> dict[str, Any]:
    """The NATS permissions of `process`'s user, from core.registry.BUS."""
    use = registry.BUS[process]
    streams = dict.fromkeys([*use.creates, *(c.stream for c in use.consumers)])
    publish = [*(f"events.{t}" for t in use.events), *use.provider, *use.publishes,
               *(f"{JS_API}.STREAM.INFO.{s}" for s in streams),
               *(f"{JS_API}.STREAM.CREATE.{s}" for s in use.creates),
               # the streams whose limits come from the settings: their creators set them (core.bus.ensure_stream)
               *(f"{JS_API}.STREAM.UPDATE.{s}" for s in use.creates if s in SETTINGS_LIMITED),
               *(subject for c in use.consumers for subject in _consumer_api(c)),
               # its outbox relay's dead letters (core.outbox; core.deadletters.subject_of)
               *((f"deadletter.{registry.EVENTS_STREAM}.{registry.relay_consumer(process)}",) if use.events else ())]
    subscribe = [f"{inbox(process)}.>", *use.subscribes]
    return {"publish": {"allow": publish}, "subscribe": {"allow": subscribe}}


def operator_permissions() -> dict[str, Any]:
    """OPERATOR's: DEADLETTERS' messages read and deleted, and a replay published on any subject a consumer reads.

    An outbox relay's dead letter (core.outbox: an event its service's user could not publish, or NATS would not
    store) is replayed on its own subject, `events.<type>`, which the webhooks dispatcher's `events.>` covers: the
    operator's replay publishes it on EVENTS even when the service's own user may not (once whatever refused it is
    fixed, or knowing its consumers will skip or dead-letter it), and every consumer of that subject then gets it,
    after the events that followed it. Should no consumer read `events.>` any more, such a replay is refused
    (a permissions violation: no acknowledgement, the command fails) and the dead letter kept."""
    stream = registry.DEADLETTER_STREAM
    read = [f"{JS_API}.STREAM.INFO.{stream}", f"{JS_API}.STREAM.MSG.GET.{stream}", f"{JS_API}.STREAM.MSG.DELETE.{stream}"]
    replay = dict.fromkeys(c.subject for use in registry.BUS.values() for c in use.consumers)
    return {"publish": {"allow": [*read, *replay]}, "subscribe": {"allow": [f"{inbox(OPERATOR)}.>"]}}


# Every identity of a deployment: the processes of core.registry.BUS, then the operator's.
IDENTITIES = (*registry.BUS, OPERATOR)


def users(public_keys: dict[str, str]) -> list[dict[str, Any]]:
    """The server's users: one per identity of IDENTITIES, `public_keys` naming each one's nkey (a literal key, or a
    `$VARIABLE` the server reads from its environment)."""
    return [{"nkey": public_keys[identity],
             "permissions": operator_permissions() if identity == OPERATOR else permissions(identity)}
            for identity in IDENTITIES]


def server_config(secret: str, port: int, store_dir: str) -> dict[str, Any]:
    """The local stack's NATS server config (JSON is valid NATS config): JetStream, and the users of every process
    (seeds derived from the stack's `secret`) and TEST_ADMIN."""
    keys = {identity: public_key(derived_seed(secret, identity)) for identity in IDENTITIES}
    admin = {"nkey": public_key(derived_seed(secret, TEST_ADMIN)),
             "permissions": {"publish": {"allow": [">"]}, "subscribe": {"allow": [">"]}}}
    return {"host": "127.0.0.1", "port": port, "jetstream": {"store_dir": store_dir},
            "authorization": {"users": [*users(keys), admin]}}


def main(argv: list[str]) -> int:
    """`python -m core.nats_auth new-keys`: a new seed for every process (the Secret switchboard-secrets'
    NATS_SEED_<PROCESS>) and its public key (the Secret nats-nkeys' NKEY_<PROCESS>, which the NATS server reads), and
    the same for OPERATOR (its seed kept by the operators, as the dead-letter command's NATS_SEED).
    `python -m core.nats_auth local-users`: the `authorization` block (JSON) an external NATS server needs to serve the
    local stack (`make run` with NATS_URL set), from SWITCHBOARD_SECRET_KEY (the stack's server secret)."""
    if argv == ["local-users"]:
        secret = os.environ.get("SWITCHBOARD_SECRET_KEY", "")
        if not secret:
            print("SWITCHBOARD_SECRET_KEY: must be set to the local stack's server secret", file=sys.stderr)
            return 1
        print(json.dumps({"authorization": server_config(secret, 4222, "")["authorization"]}, indent=1))
        return 0
    if argv != ["new-keys"]:
        print("usage: python -m core.nats_auth new-keys | local-users", file=sys.stderr)
        return 2
    for process in IDENTITIES:
        seed = new_seed()
        variable = registry.env_prefix(process)
        print(f"NATS_SEED_{variable}={seed}   (switchboard-secrets)\nNKEY_{variable}={public_key(seed)}   (nats-nkeys)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
