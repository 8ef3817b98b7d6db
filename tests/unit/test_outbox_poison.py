"""The outbox relay's rule for an event NATS never takes (core.outbox.counted, poisoned): set aside as a dead letter
once refused alone on OUTBOX_POISON_AFTER passes, never for an outage that fails every event."""
from core.outbox import HeadFailures, counted, poisoned

AFTER = 3


def passes(*outcomes: tuple[int | None, bool]) -> list[tuple[HeadFailures, bool]]:
    """The count and the verdict after each pass: (the row it stopped at, whether NATS took events after it)."""
    failures, seen = HeadFailures(), []
    for stopped_at, others_taken in outcomes:
        failures = counted(failures, stopped_at, others_taken)
        seen.append((failures, poisoned(failures, others_taken, AFTER)))
    return seen


def test_a_row_refused_alone_on_enough_passes_is_poison():
    seen = passes((7, True), (7, True), (7, True))
    assert [v for _, v in seen] == [False, False, True]
    assert seen[-1][0] == HeadFailures(7, 3)


def test_an_outage_failing_every_event_never_counts_nor_decides():
    # JetStream unavailable, or EVENTS full and refusing new messages: the head fails with all after it
    assert passes(*[(7, False)] * 10)[-1] == (HeadFailures(7, 0), False)
    # amid refusals of the row alone, such a pass leaves the count, and is no ground to set the row aside
    seen = passes((7, True), (7, True), (7, False), (7, False), (7, True))
    assert [f.passes for f, _ in seen] == [1, 2, 2, 2, 3]
    assert [v for _, v in seen] == [False, False, False, False, True]
    assert passes((7, True), (7, True), (7, True), (7, False))[-1] == (HeadFailures(7, 3), False)


def test_the_count_starts_again_when_another_row_is_at_the_head_or_all_went_out():
    assert passes((7, True), (7, True), (8, True))[-1] == (HeadFailures(8, 1), False)
    assert passes((7, True), (7, True), (None, False), (7, True))[-1] == (HeadFailures(7, 1), False)
    # a row last in its batch (nothing after it to take) waits without counting, until events follow it
    assert passes((7, False), (7, False), (7, True))[-1] == (HeadFailures(7, 1), False)


def test_a_row_whose_dead_letter_could_not_be_stored_is_tried_again_on_the_next_refusal():
    # the relay keeps the count when the store fails (NATS away): the next pass refusing it alone decides again
    seen = passes((7, True), (7, True), (7, True), (7, True))
    assert [v for _, v in seen] == [False, False, True, True]
