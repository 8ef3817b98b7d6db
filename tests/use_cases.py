"""Helpers of the use-case tests (tests/unit/test_*_use_cases.py)."""
import pytest

from core.errors import ServiceError


async def refused(call, code: str, message: str = "") -> None:
    """Await the use case `call` and check it is refused with the error `code`, its message containing `message`."""
    with pytest.raises(ServiceError) as error:
        await call
    assert error.value.code == code and message in error.value.message
