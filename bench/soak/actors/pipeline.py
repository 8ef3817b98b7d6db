"""The soak's sales pipeline: SDR enabled for a tenant (calls and texts on, its own hours all day, so only the
callees' windows apply), fresh opted-in leads created for it, and at `profile.pipeline_runs_per_minute` the
scheduled runner asked with the server secret (POST /api/sdr/runner, as the CronJob does: it works the business's
two-hour window once, however often it is asked) and the pipeline run with the tenant's key (POST /api/sdr/run:
the leads created since). Every touch it places goes through the compliance decision and its ledger. The tenant is
kept until it is torn down; then another is enabled."""
from __future__ import annotations

import math

from bench.soak.actors.answers import expected
from bench.soak.actors.callees import open_callees, opt_in
from bench.soak.actors.tenants import pick_tenant
from bench.soak.history import Tenant
from bench.soak.load import LoadContext

FIRST_SUFFIX = 6000  # the leads' numbers' last four digits: 6000 up
LEADS_PER_RUN = 2
MIN_TOUCH_GAP_HOURS = 24  # a lead is touched once in the soak, however many runs find it
CONFIG = {"enabled": True, "auto_call": True, "auto_sms": True, "auto_email": False,
          "min_touch_gap_hours": MIN_TOUCH_GAP_HOURS, "max_touches": 3, "business_hours_start": 0,
          "business_hours_end": 23}


async def sales_pipeline(ctx: LoadContext) -> None:
    rate = ctx.profile.pipeline_runs_per_minute
    # twice the expected number of leads: the Poisson arrivals may bring more runs than the rate's mean
    phones = iter(open_callees(ctx, math.ceil(rate * ctx.profile.seconds / 60 * LEADS_PER_RUN * 2) + 10,
                               FIRST_SUFFIX))
    secret = ctx.stack.env()["SDR_RUNNER_SECRET"]
    enabled: set[str] = set()
    tenant: Tenant | None = None
    while await ctx.every(rate):
        if tenant is None or tenant.business_id in ctx.history.torn_down:
            tenant = pick_tenant(ctx)
        if tenant is None:
            continue
        business = tenant.business_id
        if business not in enabled:
            status, body = await ctx.client.request("PUT", "/api/sdr/config", tenant=tenant,
                                                    json={"businessId": business, **CONFIG})
            if not expected(ctx, f"SDR config of {business}", status, body, (200,)):
                continue
            enabled.add(business)
        for _ in range(LEADS_PER_RUN):
            if (phone := next(phones, None)) is None:
                break
            if await opt_in(ctx, tenant, phone):
                status, lead = await ctx.client.request("POST", "/api/v1/leads", tenant=tenant, json={
                    "business_id": business, "name": f"Soak lead {phone[-4:]}", "phone": phone,
                    "source": "soak"})
                expected(ctx, f"lead {phone} of {business}", status, lead, (201,))
        status, body = await ctx.client.request("POST", "/api/sdr/runner", key=secret, json={"businessId": business})
        expected(ctx, f"the SDR runner for {business}", status, body, (200,))
        status, body = await ctx.client.request("POST", "/api/sdr/run", tenant=tenant, json={"businessId": business})
        expected(ctx, f"the SDR run of {business}", status, body, (200,))
