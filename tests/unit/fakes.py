"""Stand-ins the unit tests hand to the gateway's parts: a clock they move by hand, a request with its address."""
from multidict import CIMultiDict


class FakeClock:
    """A clock that stands still until a test moves `now`."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class FakeRequest:
    """A request from `remote`, with an X-Forwarded-For header when `xff` is given."""

    def __init__(self, remote, xff=None):
        self.remote = remote
        self.headers = CIMultiDict({"X-Forwarded-For": xff} if xff else {})
