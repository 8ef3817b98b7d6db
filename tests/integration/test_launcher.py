"""The embedded launcher refuses to trample a running stack."""
import pytest

from deploy.local.servers import Postgres, port_is_free
from deploy.local.stack import Stack


def test_second_stack_on_the_same_port_is_refused_with_a_clear_message(stack, tmp_path):
    assert not port_is_free(stack.http_port)
    with pytest.raises(RuntimeError, match="already in use"):
        Stack(home=tmp_path, http_port=stack.http_port).start()


def test_second_postgres_on_the_same_data_is_refused(stack):
    if stack.postgres is None:
        pytest.skip("DATABASE_URL points at an external server")
    with pytest.raises(RuntimeError, match="already running"):
        Postgres(stack.home, durable=False).start()
