"""The agent page's difference between two versions: the fields that differ, line by line, marked in words."""
from gateway.dashboard.agents_page import diff_rows


def test_only_changed_fields_with_their_changed_lines():
    old = {"name": "Desk", "inbound_prompt": "one\ntwo\nthree\nfour\nfive", "sms_prompt": None}
    new = {"name": "Desk", "inbound_prompt": "one\ntwo\nthree\nfour\nfive\nsix", "sms_prompt": "Text briefly."}
    assert diff_rows(old, new) == [
        ("field", "inbound_prompt"), ("gap", ""), ("same", "three"), ("same", "four"), ("same", "five"),
        ("added", "six"),
        ("field", "sms_prompt"), ("removed", "(not set)"), ("added", "Text briefly.")]


def test_a_changed_line_is_removed_then_added_and_other_values_compare_as_json():
    assert diff_rows({"inbound_prompt": "a\nb", "model": {"model": "x"}},
                     {"inbound_prompt": "a\nc", "model": {"model": "y"}}) == [
        ("field", "inbound_prompt"), ("same", "a"), ("removed", "b"), ("added", "c"),
        ("field", "model"), ("removed", '{"model": "x"}'), ("added", '{"model": "y"}')]


def test_equal_snapshots_have_no_difference():
    assert diff_rows({"name": "Desk"}, {"name": "Desk"}) == []
