"""The real SMS-provider client's number calls against the simulator process: Twilio's AvailablePhoneNumbers (Local)
search, a purchase through IncomingPhoneNumbers, the account's numbers listed and looked up, and a release; texts to
a bought number going to its SmsUrl; the simulator-only stock of an area code; Twilio's refusals."""
import pytest

from providers.messaging.adapter import ProviderError
from providers.messaging.client import TwilioClient
from providers.messaging.numbers import Capabilities
from tests.integration.servers import serving
from tests.integration.test_messaging_provider import ACCOUNT, ACCOUNT_SID, TOKEN, Receiver, Simulator

WEBHOOK = "https://switchboard.example/api/v1/providers/sms/inbound"


@pytest.fixture(scope="module")
def simulator(tmp_path_factory):
    sim = Simulator(tmp_path_factory.mktemp("sms-sim-numbers"), WEBHOOK)
    sim.start()
    yield sim
    assert sim.stop() == 0


@pytest.fixture
async def client(simulator):
    c = TwilioClient(simulator.url, ACCOUNT_SID, TOKEN, timeout=2.0)
    yield c
    await c.close()
    await simulator.control("DELETE", "/faults")
    await simulator.control("DELETE", "/available-numbers")


async def test_numbers_are_searched_bought_listed_and_released(client, simulator):
    offers = await client.offered_numbers("US", "512", limit=5)
    assert len(offers) == 5
    assert all(o.phone_number.startswith("+1512") and o.country == "US" for o in offers)
    assert offers[0].capabilities == Capabilities(voice=True, sms=True, mms=True)
    status, _, raw = await simulator.raw("GET", f"{ACCOUNT}/AvailablePhoneNumbers/US/Local.json?AreaCode=512&PageSize=2")
    assert status == 200 and len(raw["available_phone_numbers"]) == 2 and raw["uri"].endswith("/US/Local.json")

    bought = await client.buy_number(offers[0].phone_number, WEBHOOK)
    assert bought.reference.startswith("PN") and bought.phone_number == offers[0].phone_number
    status, _, resource = await simulator.raw("GET", f"{ACCOUNT}/IncomingPhoneNumbers/{bought.reference}.json")
    assert status == 200 and resource["sms_url"] == WEBHOOK and resource["sms_method"] == "POST"
    assert resource["account_sid"] == ACCOUNT_SID and resource["status"] == "in-use"
    # A bought number is the account's: listed, no longer offered, not for sale twice.
    assert await client.owned_number(bought.phone_number) == bought
    assert bought.phone_number not in [o.phone_number for o in await client.offered_numbers("US", "512", limit=50)]
    with pytest.raises(ProviderError) as refused:
        await client.buy_number(bought.phone_number, WEBHOOK)
    assert refused.value.status == 400 and refused.value.code == 21422

    await client.release_number(bought.reference)
    assert await client.owned_number(bought.phone_number) is None
    status, _, body = await simulator.raw("GET", f"{ACCOUNT}/IncomingPhoneNumbers/{bought.reference}.json")
    assert status == 404 and body["code"] == 20404
    await client.release_number(bought.reference)  # no longer held: released all the same


async def test_the_list_is_twilios_envelope_filtered_by_number(client, simulator):
    first, second = (o.phone_number for o in await client.offered_numbers("US", "718", limit=2))
    for number in (first, second):
        await client.buy_number(number, WEBHOOK)
    status, _, page = await simulator.raw("GET", f"{ACCOUNT}/IncomingPhoneNumbers.json?PhoneNumber={second[-4:]}")
    assert status == 200 and [r["phone_number"] for r in page["incoming_phone_numbers"]] == [second]
    assert {"page", "page_size", "start", "end", "uri", "first_page_uri", "next_page_uri"} <= set(page)
    _, _, everything = await simulator.raw("GET", f"{ACCOUNT}/IncomingPhoneNumbers.json?PageSize=1")
    assert len(everything["incoming_phone_numbers"]) == 1 and everything["next_page_uri"]


async def test_an_area_code_sold_out_offers_nothing(client, simulator):
    await simulator.control("POST", "/available-numbers", {"country": "US", "area_code": "907", "count": 0})
    assert await client.offered_numbers("US", "907", limit=10) == []
    assert await client.offered_numbers("US", "503", limit=3) != []
    await simulator.control("POST", "/available-numbers", {"country": "US", "area_code": "907", "count": 1})
    assert len(await client.offered_numbers("US", "907", limit=10)) == 1
    bad = await simulator.control("POST", "/available-numbers", {"country": "us", "count": -1}, expect=400)
    assert "country" in bad["message"] and "count" in bad["message"]


async def test_other_countries_offer_their_own_numbers(client):
    offers = await client.offered_numbers("GB", "20", limit=3)
    assert offers and all(o.phone_number.startswith("+4420") and o.country == "GB" for o in offers)


async def test_twilios_refusals(client, simulator):
    status, _, body = await simulator.raw("POST", f"{ACCOUNT}/IncomingPhoneNumbers.json", data={"PhoneNumber": "12"})
    assert status == 400 and body["code"] == 21421
    status, _, body = await simulator.raw("POST", f"{ACCOUNT}/IncomingPhoneNumbers.json", data={"SmsUrl": WEBHOOK})
    assert status == 400
    status, _, body = await simulator.raw("GET", f"{ACCOUNT}/AvailablePhoneNumbers/XX/Local.json")
    assert status == 404 and body["code"] == 20404
    other = "AC" + "f" * 32
    status, _, body = await simulator.raw("GET", f"/2010-04-01/Accounts/{other}/IncomingPhoneNumbers.json")
    assert status == 404
    await simulator.fault("GET", f"{ACCOUNT}/AvailablePhoneNumbers", 503, times=1)
    assert await client.offered_numbers("US", "415", limit=1)  # a read: retried
    await simulator.fault("POST", f"{ACCOUNT}/IncomingPhoneNumbers.json", 503, times=1)
    with pytest.raises(ProviderError) as failed:  # a purchase: never repeated
        await client.buy_number((await client.offered_numbers("US", "415", limit=1))[0].phone_number, WEBHOOK)
    assert failed.value.status == 503


async def test_a_text_to_a_bought_number_goes_to_the_sms_url_it_was_bought_with(client, simulator):
    receiver = Receiver()
    async with serving(receiver.app) as receiver.server:
        offer = (await client.offered_numbers("US", "303", limit=1))[0]
        await client.buy_number(offer.phone_number, receiver.url("/sms-silent"))
        answer = await simulator.control("POST", "/inbound", {"from": "+14155550123", "to": offer.phone_number,
                                                              "body": "Hi"})
        assert answer["status"] == 200
        [text] = receiver.requests
        assert text["path"] == "/sms-silent" and text["valid"] and text["form"]["To"] == offer.phone_number
