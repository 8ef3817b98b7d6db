"""The caller a service names in its gRPC metadata, for tests that call the services as another process does: a
token signed with that process's key (core.caller) for the service called, derived from the test stack's secret as
the stack derives it."""
from core import caller, registry
from core.tenant import Tenant


def signer(stack, process: str = registry.GATEWAY) -> caller.Signer:
    """Mints tokens as `process` of the test stack."""
    signing, _ = caller.derived_keys(stack.env()["SWITCHBOARD_SECRET_KEY"], [process])[process]
    return caller.Signer(caller.KeyRing.parse(signing, ""))


def signed(stack, who: Tenant, process: str = registry.GATEWAY, *, to: str) -> tuple[tuple[str, str], ...]:
    """The metadata of a call made by `process` for `who` to the service `to`."""
    return ((caller.METADATA_KEY, signer(stack, process).token_for(who, to)),)


def as_business(stack, account, to: str, process: str = "calls") -> tuple:
    """The metadata `process` (a service, or a worker that calls `to`) passes to the service `to` when it acts for
    one business (e.g. on an inbound call)."""
    return signed(stack, Tenant(account_id=account["signup"]["business_id"], business_ids=(account["business_id"],)),
                  process, to=to)


def act_as(stack, process: str = registry.GATEWAY) -> None:
    """This test process calls the stack's services as `process` does (core.rpc's clients mint its tokens)."""
    keys = caller.derived_keys(stack.env()["SWITCHBOARD_SECRET_KEY"], registry.PROCESSES)
    caller.configure(caller.KeyRing.parse(keys[process][0], ",".join(verify for _, verify in keys.values())), process)
