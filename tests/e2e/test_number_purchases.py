"""The pool's numbers bought from the SMS provider through its API (services/agents/stock.py): a new business asks
for an area code with no free number, is told a purchase started, the stock job buys numbers there at the simulator
(IncomingPhoneNumbers), and one of them is listed and assigned; another business neither sees nor takes it. An area
code the carrier has none in is told unavailable. A signup finding the pool empty gets a number bought for it."""
import pytest
from jsonschema import Draft202012Validator

from providers.messaging.client import TwilioClient
from providers.x402 import payer
from tests.billing import full_key, provisioned, release_numbers, signup
from tests.waiting import wait_until

AVAILABLE = "/api/v1/phone-numbers/available"


@pytest.fixture
async def provider(stack, sms):
    """The stack's SMS provider as our adapter sees it (the simulator, with the stack's credentials)."""
    env = stack.env()
    client = TwilioClient(sms.url, env["SMS_ACCOUNT_SID"], env["SMS_AUTH_TOKEN"])
    yield client
    await client.close()


async def free_in(api, key, area_code: str) -> dict:
    status, body, _ = await api.request("GET", AVAILABLE, key=key, params={"country": "US", "area_code": area_code})
    assert status == 200, body
    return body


async def test_an_empty_area_code_starts_a_purchase_and_its_number_can_be_assigned(api, account, other_key, provider):
    key, bid = account["key"], account["business_id"]
    asked = await free_in(api, key, "907")  # Alaska: the local pool file has none
    assert asked["numbers"] == [] and asked["has_more"] is False
    purchase = asked["purchase"]
    assert (purchase["country"], purchase["area_code"], purchase["status"]) == ("US", "907", "requested")
    assert purchase["requested_at"] and purchase["message"] is None
    _, schema, _ = await api.request("GET", "/api/v1/schemas", params={"name": "AvailableNumberList"})
    Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(asked)

    found = await wait_until(lambda: free_in(api, key, "907"), "numbers bought in 907", lambda b: b["numbers"],
                             timeout=20)
    assert "purchase" not in found
    number = found["numbers"][0]
    assert number["area_code"] == "907" and number["capabilities"]["sms_inbound"] and number["capabilities"][
        "voice_inbound"]
    bought = await provider.owned_number(number["phone_number"])  # the provider's IncomingPhoneNumbers lists it
    assert bought is not None and bought.reference.startswith("PN")

    status, assigned, _ = await api.request("POST", "/api/v1/phone-numbers", key=key,
                                            json={"phone_number": number["phone_number"]})
    assert status == 201, assigned
    assert assigned["business_id"] == bid and assigned["area_code"] == "907"
    # Another business: not offered, not taken, not listed, not released.
    assert number["phone_number"] not in [n["phone_number"] for n in (await free_in(api, other_key, "907"))["numbers"]]
    status, body, _ = await api.request("POST", "/api/v1/phone-numbers", key=other_key,
                                        json={"phone_number": number["phone_number"]})
    assert status == 409 and "not available" in body["error"]["message"]
    status, theirs, _ = await api.request("GET", "/api/v1/phone-numbers", key=other_key)
    assert number["phone_number"] not in [n["phone_number"] for n in theirs["phone_numbers"]]
    status, body, _ = await api.request("DELETE", "/api/v1/phone-numbers", key=other_key,
                                        params={"phone_number": number["phone_number"]})
    assert status == 404
    status, mine, _ = await api.request("GET", "/api/v1/phone-numbers", key=key)
    assert [n["phone_number"] for n in mine["phone_numbers"]] == [number["phone_number"]]
    status, _, _ = await api.request("DELETE", "/api/v1/phone-numbers", key=key,
                                     params={"phone_number": number["phone_number"]})
    assert status == 200
    assert await provider.owned_number(number["phone_number"]) is not None  # back in the pool: still ours


async def test_an_area_code_the_carrier_has_none_in_is_told_unavailable(api, account, sms):
    status, body = await sms.control("POST", "/available-numbers", {"country": "US", "area_code": "808", "count": 0})
    assert status == 201, body
    assert (await free_in(api, account["key"], "808"))["purchase"]["status"] == "requested"
    told = await wait_until(lambda: free_in(api, account["key"], "808"), "the purchase told unavailable",
                            lambda b: b["purchase"]["status"] == "unavailable", timeout=20)
    assert told["numbers"] == [] and "no number for sale in US area code 808" in told["purchase"]["message"]


async def test_a_signup_finding_the_pool_empty_gets_a_number_bought_from_the_provider(api, held_pool, provider):
    _, _, headers = await signup(api, payment_capture="x402")
    status, body, _ = await signup(api, phone_forward_to="+12815550177", headers={
        "PAYMENT-SIGNATURE": payer.pay(payer.new_private_key(), headers["PAYMENT-REQUIRED"])})
    assert status == 200, body
    ws = await provisioned(api, body["api_key"], body["business_id"])
    number = ws["provisioning"]["phone_number"]
    # Bought (the pool file's numbers are not the provider's): in the owner's area code, or elsewhere in the US when
    # a number was bought there first (provisioning takes the first free one of its searches).
    assert number.startswith("+1") and await provider.owned_number(number) is not None
    await release_numbers(api, await full_key(api, body), [number])
