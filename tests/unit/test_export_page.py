"""core.export_page: the checks of an ExportPage request, its lines, the byte budget of a page and the cursors of an
order other than (timestamp, id)."""
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from core import export_page
from core.errors import ServiceError
from core.pagination import Paged, decode_cursor
from core.tenant import Tenant, acting_as
from services.calls.schema import calls
from switchboard.v1 import common_pb2

BUSINESS = str(uuid.uuid4())


def request(**fields) -> common_pb2.ExportPageRequest:
    return common_pb2.ExportPageRequest(**{"business_id": BUSINESS, "kind": "calls", "limit": 10, **fields})


def refused(**fields) -> ServiceError:
    with pytest.raises(ServiceError) as error:
        export_page.asked(request(**fields), ("calls",))
    return error.value


def test_a_request_is_checked_for_its_business_kind_and_limit():
    with acting_as(Tenant(account_id="service:export", business_ids=(BUSINESS,))):
        asked = export_page.asked(request(after="abc", limit=5000), ("calls",))
        assert (asked.business_id, asked.kind, asked.page.limit, asked.page.cursor) == (BUSINESS, "calls", 5000, "abc")
        unknown = refused(kind="invoices")
        assert unknown.code == "validation_error" and "kind must be one of calls" in unknown.message
        for limit in (0, -3, 5001):
            assert refused(limit=limit).code == "validation_error"
        assert refused(business_id="nope").code == "invalid_request"
        assert refused(business_id=str(uuid.uuid4())).code == "not_found"  # not the business it acts for


@dataclass
class Row:
    id: str
    created_at: datetime
    text: str


def test_a_page_ends_early_rather_than_pass_the_byte_budget(monkeypatch):
    monkeypatch.setattr(export_page, "MAX_BYTES", 400)  # two lines of about 160 bytes
    now = datetime(2026, 11, 29, tzinfo=UTC)
    rows = [Row(str(uuid.uuid4()), now - timedelta(seconds=n), "x" * 100) for n in range(5)]
    whole = Paged(rows, True, "next-page")
    reply = export_page.reply(rows, whole, lambda r: {"id": r.id, "text": r.text})
    assert [json.loads(line)["id"] for line in reply.lines] == [rows[0].id, rows[1].id]
    assert decode_cursor(reply.next_after, calls.c.id) == (rows[1].created_at, rows[1].id)
    one = export_page.reply(rows[:1], Paged(rows[:1], False), lambda r: {"text": r.text * 10})
    assert len(one.lines) == 1 and one.next_after == ""  # a single record larger than the budget still goes
    small = export_page.reply(rows[:2], Paged(rows[:2], True, "next-page"), lambda r: {"id": r.id})
    assert len(small.lines) == 2 and small.next_after == "next-page"
    assert ", " not in small.lines[0] and ": " not in small.lines[0]  # compact


def test_a_key_cursor_round_trips_and_a_foreign_one_is_refused():
    cursor = export_page.key_cursor("2026-11-29T00:00:00+00:00", BUSINESS, 3)
    assert export_page.key_of(cursor, (str, str, int)) == ("2026-11-29T00:00:00+00:00", BUSINESS, 3)
    assert export_page.key_of("", (str, str, int)) is None
    for bad in ("not-a-cursor", export_page.key_cursor("a", "b"), export_page.key_cursor("a", "b", True), "%%%"):
        with pytest.raises(ServiceError) as error:
            export_page.key_of(bad, (str, str, int))
        assert error.value.code == "validation_error"
