"""The pool's numbers bought from the SMS provider (services/agents/stock.py, numbers_domain's stock rules) in the
fast tier: on the in-memory database and the messaging simulator served in this process with its real client. When
a place is refilled and by how many, what GET /available says of a purchase, a purchase that timed out, numbers
bought and not recorded, and which bought numbers are given back."""
from datetime import timedelta

import pytest

from core.ids import new_id, utcnow
from core.tenant import Tenant, acting_as
from providers.messaging.adapter import ProviderError
from providers.messaging.simulator.app import NUMBERS
from services.agents import numbers_domain
from services.agents.numbers_domain import StockRules
from services.agents.numbers_service import Numbers
from services.agents.repository import agents_units
from services.agents.schema import number_stock, phone_numbers
from services.agents.stock import NumberStock
from tests.memory import insert
from tests.memory.agents import MemoryAgents, MemoryNumbers, MemoryStock

RULES = StockRules(low=2, target=4, idle=timedelta(days=30))
SMS_URL = "https://switchboard.example.com/api/v1/providers/sms/inbound"
VOICE_AND_SMS = {"voice_inbound": True, "voice_outbound": True, "sms_inbound": True, "sms_outbound": True}


def test_a_place_is_refilled_to_the_target_only_once_it_runs_low():
    assert [numbers_domain.to_buy(free, RULES) for free in (0, 1, 2, 3, 4, 7)] == [4, 3, 0, 0, 0, 0]
    assert numbers_domain.after_refill(0, 0, "US area code 907")[0] == "unavailable"
    assert numbers_domain.after_refill(1, 0, "US") == ("stocked", None)  # some left: not told unavailable
    assert numbers_domain.after_refill(0, 3, "US") == ("stocked", None)
    # held back by the day's budget: still requested, not "none for sale"
    assert numbers_domain.after_refill(0, 0, "US", held_back=True) == ("requested", None)


def test_a_refill_spends_only_what_is_left_of_the_days_budget():
    rules = StockRules(low=2, target=4, idle=timedelta(days=30), per_day=10)
    assert [numbers_domain.within_budget(4, bought, rules) for bought in (0, 6, 7, 10, 12)] == [4, 4, 3, 0, 0]
    assert numbers_domain.within_budget(0, 0, rules) == 0


@pytest.fixture
def units(database):
    return agents_units(database, MemoryAgents, MemoryNumbers, MemoryStock)


@pytest.fixture
def caller(business_id) -> Tenant:
    return Tenant(account_id=new_id(), business_ids=(business_id,), api_key_id=new_id(),
                  standings=((business_id, "active"),))


@pytest.fixture
def job(units, sms):
    return NumberStock(units, sms.client, SMS_URL, RULES, interval=60)


@pytest.fixture
def numbers(units, voice_port, job, caller):
    with acting_as(caller):
        yield Numbers(units, voice_port, trial_numbers=1, stock_wanted=job.wake)


async def pool(database, *numbers_, provider_ref=None, pooled_days_ago=0, business_id=None):
    """Numbers added to the pool, able to take calls and texts."""
    async with database.transaction() as conn:
        for number in numbers_:
            insert(conn.rows(phone_numbers), phone_numbers, {
                "id": new_id(), "phone_number": number, "country": "US", "area_code": number[2:5],
                "capabilities": VOICE_AND_SMS, "a2p_status": "not_started", "emergency_status": "not_set",
                "created_at": utcnow() - timedelta(days=pooled_days_ago), "provider_ref": provider_ref,
                "business_id": business_id})


def free(page) -> list[str]:
    return [r.phone_number for r in page.rows]


async def test_an_empty_area_code_asks_for_a_purchase_once_and_the_job_buys_it(numbers, job, sms):
    page, purchase = await numbers.available("US", "907", None, None, 10)
    assert free(page) == [] and purchase.status == "requested"
    assert (purchase.country, purchase.area_code, purchase.message) == ("US", "907", None)
    again = (await numbers.available("US", "907", "voice", None, 10))[1]
    assert again.requested_at == purchase.requested_at  # one purchase, however many ask
    assert job._events().is_set()  # the job's next round starts now

    assert await job.refill() == RULES.target
    page, purchase = await numbers.available("US", "907", None, None, 10)
    assert purchase is None and len(free(page)) == RULES.target
    owned = {r["phone_number"]: r for r in sms.server.app[NUMBERS].records.values()}
    assert set(free(page)) == set(owned) and all(r["sms_url"] == SMS_URL for r in owned.values())
    assert page.rows[0].provider_ref == owned[page.rows[0].phone_number]["sid"]
    assert page.rows[0].capabilities["sms_inbound"] and page.rows[0].a2p_status == "not_started"
    assert {row.locality for row in page.rows} == {"Simulated City, CA"}  # the offer's locality and region
    assert await job.refill() == 0  # stocked: nothing more


async def test_a_later_page_or_a_request_with_no_country_buys_nothing(numbers, database):
    assert (await numbers.available(None, None, None, None, 10))[1] is None
    assert (await numbers.available("US", "907", None, "+19075550100", 10))[1] is None
    async with database.read() as conn:
        assert conn.rows(number_stock) == {}


async def test_a_whole_country_is_a_place_too(numbers, job):
    purchase = (await numbers.available("US", None, None, None, 10))[1]
    assert (purchase.country, purchase.area_code) == ("US", None)
    assert await job.refill() == RULES.target
    assert len(free((await numbers.available("US", None, None, None, 10))[0])) == RULES.target


async def test_places_asked_for_buy_no_more_than_the_days_budget_and_wait_past_it(numbers, units, sms, caplog):
    job = NumberStock(units, sms.client, SMS_URL, StockRules(low=2, target=4, idle=timedelta(days=30), per_day=6),
                      interval=60)
    for area in ("907", "908"):
        await numbers.available("US", area, None, None, 10)
    assert await job.refill() == 6  # 907's four, then the two left of the day's six for 908
    assert len(free((await numbers.available("US", "908", None, None, 10))[0])) == 2
    await numbers.available("US", "909", None, None, 10)
    assert await job.refill() == 0  # 908 has two (not low), 909 waits for the budget
    assert "2 of the 4 numbers US area code 908 needs wait" in caplog.text
    assert "4 of the 4 numbers US area code 909 needs wait: 6 bought in the last 24 hours" in caplog.text
    purchase = (await numbers.available("US", "909", None, None, 10))[1]
    assert (purchase.status, purchase.message) == ("requested", None)  # not "none for sale": asked again later
    assert len(sms.server.app[NUMBERS].records) == 6  # bought at the provider: no more


async def test_a_sold_out_area_code_is_told_unavailable_and_asked_again(numbers, job, sms):
    sms.server.app[NUMBERS].stock[("US", "907")] = 0
    await numbers.available("US", "907", None, None, 10)
    assert await job.refill() == 0
    purchase = (await numbers.available("US", "907", None, None, 10))[1]
    assert purchase.status == "unavailable" and "no number for sale in US area code 907" in purchase.message
    sms.server.app[NUMBERS].stock.clear()  # the carrier has some again
    assert await job.refill() == RULES.target


async def test_a_search_that_fails_leaves_the_place_requested_for_the_next_round(numbers, job, sms, monkeypatch):
    await numbers.available("US", "907", None, None, 10)

    async def refused(*args, **kwargs):
        raise ProviderError("messaging provider rejected our credentials", 401, 20003)

    monkeypatch.setattr(sms.client, "offered_numbers", refused)
    assert await job.refill() == 0
    assert (await numbers.available("US", "907", None, None, 10))[1].status == "requested"  # not "unavailable"
    monkeypatch.undo()
    assert await job.refill() == RULES.target


async def test_a_place_still_stocked_buys_nothing_until_a_take_leaves_it_low(numbers, job, database):
    await pool(database, "+14155550101", "+14155550102")
    async with database.transaction() as conn:
        await MemoryStock(conn).note_demand("US", "415", utcnow())
    assert await job.refill() == 0  # two free: not low
    await numbers.assign(None, "+14155550101", None)
    assert await job.refill() == RULES.target - 1  # one left: refilled to the target


async def test_a_purchase_that_timed_out_but_went_through_is_recorded(numbers, job, sms, monkeypatch):
    await numbers.available("US", "907", None, None, 10)
    buy = sms.client.buy_number
    calls = []

    async def lost_answer(phone_number, sms_url):
        await buy(phone_number, sms_url)  # bought, but the answer never came back
        calls.append(phone_number)
        raise ProviderError("messaging provider unreachable (POST /IncomingPhoneNumbers): timed out", maybe_done=True)

    monkeypatch.setattr(sms.client, "buy_number", lost_answer)
    assert await job.refill() == RULES.target
    assert set(free((await numbers.available("US", "907", None, None, 10))[0])) == set(calls)


async def test_numbers_bought_and_not_recorded_are_released(numbers, job, sms, monkeypatch):
    await numbers.available("US", "907", None, None, 10)

    async def fails(self, rows, now):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(MemoryNumbers, "add_to_pool", fails)
    with pytest.raises(RuntimeError):
        await job.refill()
    assert sms.server.app[NUMBERS].records == {}  # bought, then given back
    monkeypatch.undo()
    assert await job.refill() == RULES.target  # the place's lease was let go: the next round refills it


async def test_only_bought_numbers_free_and_unasked_for_too_long_are_given_back(numbers, job, sms, database):
    kept_ref = (await sms.client.buy_number("+15125550100", SMS_URL)).reference
    gone_ref = (await sms.client.buy_number("+17185550100", SMS_URL)).reference
    held_ref = (await sms.client.buy_number("+12065550100", SMS_URL)).reference
    await pool(database, "+15125550100", provider_ref=kept_ref, pooled_days_ago=40)  # its area code asked for
    await pool(database, "+17185550100", provider_ref=gone_ref, pooled_days_ago=40)
    await pool(database, "+12065550100", provider_ref=held_ref, pooled_days_ago=40, business_id=new_id())
    await pool(database, "+17185550177", pooled_days_ago=400)  # the pool file's: never the provider's to take back
    await pool(database, "+17185550178", provider_ref="PNrecent", pooled_days_ago=3)
    async with database.transaction() as conn:
        await MemoryStock(conn).request("US", "512", utcnow() - timedelta(days=2))
    assert await job.release_idle() == 1
    assert set(sms.server.app[NUMBERS].records) == {kept_ref, held_ref}
    everything = free((await numbers.available("US", None, None, None, 10))[0])
    assert "+17185550100" not in everything and {"+15125550100", "+17185550177", "+17185550178"} <= set(everything)
    assert await job.release_idle() == 0
