"""The geometry of the dashboard's server-drawn charts (gateway.dashboard.charts)."""
import pytest

from gateway.dashboard import charts


@pytest.mark.parametrize(("largest", "top"), [(0, 1), (1, 1), (2, 2), (3, 5), (7, 10), (11, 20), (120, 200), (500, 500)])
def test_the_scale_ends_at_a_round_number_at_or_above_the_largest(largest, top):
    assert charts.scale_top(largest) == top


def test_columns_share_the_width_and_stand_on_the_base_line():
    bars = charts.columns([("a", 5), ("b", 0), ("c", 10)], top=10)
    assert [b.label for b in bars] == ["a", "b", "c"]
    assert [b.height for b in bars] == [charts.HEIGHT / 2, 0, charts.HEIGHT]
    assert all(b.y + b.height == charts.HEIGHT for b in bars)
    assert bars[0].x < bars[1].x < bars[2].x and bars[2].x + bars[2].width < charts.WIDTH
    assert charts.columns([], top=1) == []


def test_rows_are_as_long_as_their_share_of_the_top():
    bars = charts.rows([("new", 4), ("contacted", 1)], top=5)
    room = charts.WIDTH - charts.LABEL_ROOM
    assert [b.width for b in bars] == [room * 4 / 5, room / 5]
    assert bars[0].y < bars[1].y
