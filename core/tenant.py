"""The caller's tenant context, carried from the gateway to services in gRPC metadata as a signed token
(core.caller).

Every service query filters by `current().business_ids`; a record of another
business is reported as not found, never as forbidden.
"""
from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from core import standing
from core.errors import ServiceError
from core.ids import require_uuid


@dataclass(frozen=True)
class Tenant:
    account_id: str = ""
    business_ids: tuple[str, ...] = field(default=())
    api_key_id: str = ""
    scopes: tuple[str, ...] = field(default=())
    # Set when the key is restricted to a single business.
    bound_business_id: str = ""
    # (business id, core.standing value) for each business, as the accounts service saw it when authenticating;
    # empty for a worker acting for a business (it checks the standing itself before it acts).
    standings: tuple[tuple[str, str], ...] = field(default=())
    # The processes that vouched for this caller, in order, the last the one whose signed token it came in
    # (core.caller): a service calling another for its caller signs a token of its own that names them (`act`).
    # Empty for a context this process made. Not part of the caller's identity.
    via: tuple[str, ...] = field(default=(), compare=False)
    # For a caller only authentication gives (a key, scopes, standings, several businesses): the gateway's token it
    # came in on the first hop, which a service re-signing it carries on as proof (core.caller). Not its identity.
    proof: str = field(default="", compare=False, repr=False)

    @property
    def actor(self) -> str:
        """Who acts, for records of who did what: the API key when one was used, else the account."""
        return f"api_key:{self.api_key_id}" if self.api_key_id else self.account_id

    @property
    def owner_in_person(self) -> bool:
        """Whether the caller is the owner signed in to the dashboard: a session has every scope and no key (keys and
        assistant connections carry their id; workers carry no scope)."""
        return bool(self.account_id) and not self.api_key_id and self.scopes == ("*",)

    def can_access(self, business_id: str) -> bool:
        return business_id in self.business_ids

    def standing_of(self, business_id: str) -> str:
        return next((value for b, value in self.standings if b == business_id), "")

    def require_good_standing(self, business_id: str, action: str) -> None:
        """Refuse (403 forbidden, saying what to do) `action`, which costs money, for a business held by its
        workspace's state or its subscription (core.standing)."""
        value = self.standing_of(business_id)
        if not standing.is_good(value):
            raise standing.refusal(value, action)


_current: contextvars.ContextVar[Tenant] = contextvars.ContextVar("tenant", default=Tenant())


def current() -> Tenant:
    return _current.get()


def set_current(tenant: Tenant) -> contextvars.Token[Tenant]:
    return _current.set(tenant)


def reset_current(token: contextvars.Token[Tenant]) -> None:
    _current.reset(token)


@contextmanager
def acting_as(who: Tenant) -> Iterator[Tenant]:
    """Run the block as `who` (a worker or a consumer acting for a business), the caller's tenant restored after."""
    token = _current.set(who)
    try:
        yield who
    finally:
        _current.reset(token)


def require_account() -> Tenant:
    """The tenant of an authenticated caller, or `unauthorized`."""
    tenant = current()
    if not tenant.account_id:
        raise ServiceError("unauthorized", "this call needs an authenticated caller")
    return tenant


def require_business(who: Tenant, business_id: str) -> str:
    """A business the caller named: a UUID (else 400) of one of its businesses (else 403)."""
    require_uuid(business_id, "business_id")
    if not who.can_access(business_id):
        raise ServiceError("forbidden", "business_id is not one of this key's businesses")
    return business_id


def pick_business(who: Tenant, business_id: str | None) -> str:
    """The business a request is about: the one named (it must be the caller's, else 403), or the
    caller's only business; a key spanning several must name one (400 bad_request)."""
    if business_id:
        return require_business(who, business_id)
    if len(who.business_ids) == 1:
        return who.business_ids[0]
    if not who.business_ids:
        raise ServiceError("forbidden", "this key has no business")
    raise ServiceError("bad_request", "business_id is required: this key spans several businesses")


def acting_for(business_id: str, actor: str) -> Tenant:
    """The tenant a service takes when an event rather than a caller makes it act for one business (e.g. the
    sdr service recording a call with its lead)."""
    return Tenant(account_id=f"service:{actor}", business_ids=(business_id,))
