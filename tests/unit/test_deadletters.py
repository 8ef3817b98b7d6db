"""Dead letters (core.deadletters): the record a consumer stores when it gives up, the headers of its replay, and
the operator command's filters."""
import json
from datetime import UTC, datetime

import pytest
from nats.aio.msg import Msg

from core import deadletters, provider_proof
from core.deadletters import DeadLetter, Filter
from core.deadletters.command import chosen, filter_of, parser, shown

AT = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
PAYLOAD = json.dumps({"event_id": "0b6f6f1e-9a3f-4a51-9f4e-4cbbf2f0c1de", "type": "workspace.teardown_completed"})


def delivered(subject: str = "events.workspace.teardown_completed", stream: str = "EVENTS", sequence: int = 42,
              deliveries: int = 3, headers: dict | None = None, data: bytes = PAYLOAD.encode()) -> Msg:
    """A message as JetStream delivers it to the consumer agents-workspace-teardown (its metadata in the reply
    subject)."""
    reply = f"$JS.ACK.{stream}.agents-workspace-teardown.{deliveries}.{sequence}.17.1764410400000000000.0"
    return Msg(None, subject=subject, reply=reply, data=data,
               headers=headers if headers is not None else {"Nats-Msg-Id": "0b6f6f1e", "traceparent": "00-ab-cd-01"})


def letter(**changes) -> DeadLetter:
    base = DeadLetter.of(delivered(), "agents-workspace-teardown", ConnectionError("provider down"), AT)
    return DeadLetter(**{**base.__dict__, **changes})


def test_the_record_keeps_where_the_message_was_why_and_the_message_itself():
    msg = delivered(headers={"Nats-Msg-Id": "0b6f6f1e", "traceparent": "00-ab-cd-01", "Nats-Stream": "EVENTS"})
    dead = DeadLetter.of(msg, "agents-workspace-teardown", ConnectionError("the voice provider answered 503"), AT)
    assert (dead.stream, dead.consumer, dead.subject, dead.sequence, dead.deliveries) == (
        "EVENTS", "agents-workspace-teardown", "events.workspace.teardown_completed", 42, 3)
    assert (dead.error_type, dead.error, dead.at) == ("ConnectionError", "the voice provider answered 503",
                                                      "2026-11-29T10:00:00+00:00")
    # the publisher's headers, not those JetStream adds
    assert dead.headers == {"Nats-Msg-Id": "0b6f6f1e", "traceparent": "00-ab-cd-01"}
    assert dead.payload == PAYLOAD.encode()
    assert dead.dead_subject == "deadletter.EVENTS.agents-workspace-teardown"
    # stored twice (its consumer died before terminating the original), the stream keeps it once
    assert dead.message_id == "EVENTS.42.agents-workspace-teardown"
    assert DeadLetter.from_json(dead.to_json()) == dead


def test_a_refusal_has_no_error_class_and_a_long_error_is_truncated():
    dead = DeadLetter.of(delivered(data=b"\xff not json"), "c", "without the gateway's proof", AT)
    assert (dead.error_type, dead.error) == ("", "without the gateway's proof")
    assert DeadLetter.from_json(dead.to_json()).payload == b"\xff not json"  # any bytes survive the record
    long = DeadLetter.of(delivered(), "c", ValueError("x" * 5000), AT)
    assert len(long.error) == deadletters.ERROR_LIMIT and long.error.endswith("…")
    assert long.summary()["error"].startswith("ValueError: xxx")


def test_a_replay_keeps_the_payload_and_gets_an_id_of_its_own_unless_the_gateway_signed_it():
    dead = letter()
    headers = dead.replay_headers(7)
    # the consumers' inbox dedupes on the event id in the payload, which a replay does not touch; the broker's
    # duplicate window would drop the original id, and drops a second replay of the same dead letter
    assert headers == {"Nats-Msg-Id": "0b6f6f1e.replay.7", "traceparent": "00-ab-cd-01", "Sb-Replay-Of": "7"}
    signed = letter(stream="PROVIDER", subject="provider.voice.messages",
                    headers={"Nats-Msg-Id": "call-1:status", provider_proof.HEADER: "gateway:1=sig"})
    assert signed.replay_headers(8)["Nats-Msg-Id"] == "call-1:status"  # signed with the body: kept


@pytest.mark.parametrize(("pattern", "subject", "matches"), [
    ("events.workspace.teardown_completed", "events.workspace.teardown_completed", True),
    ("events.workspace.*", "events.workspace.teardown_completed", True),
    ("events.*", "events.workspace.teardown_completed", False),
    ("events.>", "events.workspace.teardown_completed", True),
    ("events.>", "events", False),
    ("provider.*.messages", "provider.voice.messages", True),
    ("events.workspace.paused", "events.workspace.teardown_completed", False),
    ("events.workspace.teardown_completed.x", "events.workspace.teardown_completed", False),
])
def test_subjects_match_as_nats_patterns(pattern, subject, matches):
    assert deadletters.subject_matches(pattern, subject) is matches


def test_a_filter_matches_on_every_field_it_names():
    dead = letter()
    assert Filter().matches(dead)
    assert Filter().dead_subject == "deadletter.*.*"
    narrowed = Filter(stream="EVENTS", consumer="agents-workspace-teardown")
    assert narrowed.matches(dead) and narrowed.dead_subject == "deadletter.EVENTS.agents-workspace-teardown"
    assert not Filter(stream="PROVIDER").matches(dead)
    assert not Filter(consumer="webhooks-dispatcher").matches(dead)
    assert Filter(subject="events.workspace.*").matches(dead)
    assert not Filter(subject="events.call.*").matches(dead)
    assert Filter(error="connectionerror").matches(dead) and Filter(error="PROVIDER DOWN").matches(dead)
    assert not Filter(error="timeout").matches(dead)
    assert Filter(since=AT).matches(dead) and not Filter(since=datetime(2026, 11, 29, 10, 1, tzinfo=UTC)).matches(dead)
    assert Filter(until=datetime(2026, 11, 29, 10, 1, tzinfo=UTC)).matches(dead) and not Filter(until=AT).matches(dead)


def test_the_commands_filters_and_sequences_choose_the_dead_letters():
    args = parser().parse_args(["replay", "--consumer", "agents-workspace-teardown", "--subject", "events.>",
                                "--error", "503", "--since", "2026-11-29T09:00"])
    assert filter_of(args) == Filter(consumer="agents-workspace-teardown", subject="events.>", error="503",
                                     since=datetime(2026, 11, 29, 9, 0, tzinfo=UTC))  # UTC unless given
    assert (args.sequence, args.all) == ([], False)
    assert parser().parse_args(["drop", "3", "5"]).sequence == [3, 5]
    assert parser().parse_args(["show", "3"]).sequence == 3
    with pytest.raises(SystemExit):
        parser().parse_args(["show"])  # show takes one sequence
    found = [(3, letter()), (5, letter(sequence=43)), (9, letter(sequence=44))]
    assert chosen(found, []) == found
    assert chosen(found, [5, 9, 11]) == found[1:]


def test_show_prints_a_json_payload_as_json_and_any_other_as_base64():
    assert shown(3, letter())["payload"] == json.loads(PAYLOAD)
    assert shown(3, letter(payload=b"\xff"))["payload"] == "/w=="
    assert shown(3, letter())["dead_letter"] == 3
