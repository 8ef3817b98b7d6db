"""services.agents.store.add_to_pool: rows naming different columns are refused before anything is sent (one INSERT
of many rows takes the first row's columns, so another row's extra values would be dropped silently)."""
import pytest

from core.ids import utcnow
from services.agents import store


class NoDatabase:
    async def execute(self, statement):
        raise AssertionError("nothing may be sent")


async def test_rows_with_different_columns_are_refused_before_the_insert():
    rows = [{"phone_number": "+14155550101", "country": "US"},
            {"phone_number": "+14155550102", "country": "US", "blocked": True}]
    with pytest.raises(ValueError, match="different columns"):
        await store.add_to_pool(NoDatabase(), rows, utcnow())
