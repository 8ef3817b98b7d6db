"""The storage contracts (tests/storage_contracts.py) on the SQL repositories over the stack's PostgreSQL;
tests/unit/test_storage_contracts.py runs the same on the in-memory ones."""
import pytest

from services.calls.repository import SqlCalls
from tests.storage_contracts import CallsRepositoryContract


class TestSqlCalls(CallsRepositoryContract):
    @pytest.fixture
    def calls_in(self):
        return SqlCalls

