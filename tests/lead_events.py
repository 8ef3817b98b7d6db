"""A business's new leads and the `lead.created` webhooks they send, for the tests that break the path between them
(a killed dispatcher, a restarted NATS)."""
from tests.leads import new_lead
from tests.receiver import Receiver


async def subscribe(api, account, url: str) -> None:
    status, body, _ = await api.request("POST", "/api/v1/webhooks", key=account["key"],
                                        json={"webhook_url": url, "events": ["lead.created"]})
    assert status == 201, body


async def lead_named(api, account, name: str) -> str:
    """A new lead of the account's business; its id."""
    return (await new_lead(api, account["key"], account["business_id"], name=name))["id"]


def lead_ids(receiver: Receiver) -> set[str]:
    return {r["json"]["data"]["id"] for r in receiver.events("lead.created").values()}
