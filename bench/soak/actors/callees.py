"""Who the soak's outbound touches go to: fresh callees whose calling window is open from now until the soak's
quiet period ends (so nothing depends on the hour; open to calls is open to texts: no rule holds texts to a
narrower window than calls), each actor drawing from its own range of last four digits (the frequency caps count
every touch of a business to a callee, whoever placed it), opted in through the API before they are touched."""
from __future__ import annotations

import time
from datetime import timedelta

from bench.runs import open_numbers
from bench.soak.actors.answers import expected
from bench.soak.history import Tenant
from bench.soak.load import LoadContext


def open_callees(ctx: LoadContext, count: int, first: int) -> list[str]:
    """`count` numbers open until the quiet period ends, last four digits from `first`; fewer (noted) if the hour
    has not that many."""
    within = timedelta(seconds=max(0.0, ctx.ends_at - time.monotonic()) + ctx.profile.quiet_seconds)
    try:
        return open_numbers(count, within, first)
    except SystemExit as exc:
        ctx.history.notes.append(f"callees from {first}: {exc}")
        return []


async def opt_in(ctx: LoadContext, tenant: Tenant, phone: str) -> bool:
    """Record `phone`'s opt-in with the tenant (a web form): the consent every automated touch needs."""
    status, body = await ctx.client.request("POST", "/api/v1/sms/consent", tenant=tenant, json={
        "phone": phone, "business_id": tenant.business_id, "state": "opted_in", "note": "soak: web form"})
    return expected(ctx, f"opt-in of {phone} by {tenant.business_id}", status, body)
