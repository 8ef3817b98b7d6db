"""Leads and the sales pipeline through the API, for the tests."""

CONFIG, PIPELINE = "/api/sdr/config", "/api/sdr/pipeline"
ACTION, ACTIVITY = "/api/sdr/action", "/api/sdr/activity"


async def new_lead(api, key, business_id: str, **fields) -> dict:
    status, lead, _ = await api.request("POST", "/api/v1/leads", key=key, json={"business_id": business_id,
                                                                              **fields})
    assert status == 201, lead
    return lead


async def leads_with(api, key: str, phone: str) -> list[dict]:
    """The leads with this phone number, as GET /api/v1/leads lists them."""
    status, page, _ = await api.request("GET", "/api/v1/leads", key=key, params={"phone": phone})
    assert status == 200, page
    return page["leads"]


async def put_config(api, key, business_id: str, **changes):
    """PUT the business's SDR config with `changes`."""
    return await api.request("PUT", CONFIG, key=key, json={"businessId": business_id, **changes})
