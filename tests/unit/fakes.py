"""Stand-ins the unit tests hand to the code under test: a clock they move by hand, a request with its address, a
webhook receiver without a network."""
from multidict import CIMultiDict

from core.uow import forbid_provider_call
from services.webhooks import domain
from services.webhooks.delivery import Outcome


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


class FakeSender:
    """services.webhooks.delivery.Sender without a network: each POST answers `answers[url]` (else `status`) and is
    kept in `sent` as (url, body, headers); like the real one (core.outbound), it refuses to send while a unit of
    work is open."""

    def __init__(self, status=200, answers=None):
        self.status = status
        self.answers = answers or {}
        self.sent = []

    async def post(self, url, body, headers):
        forbid_provider_call("a webhook POST")
        self.sent.append((url, body, headers))
        status = self.answers.get(url, self.status)
        return Outcome(status, 1, None if domain.is_success(status) else f"receiver answered {status}")
