"""The stock job claimed (services/agents/stock.py) on the real database: two replicas' jobs over the same database
and the stack's SMS-provider simulator refill a place once between them, whichever takes its lease; a place still
stocked buys nothing more."""
import asyncio
from datetime import timedelta

import aiohttp
import pytest
import sqlalchemy as sa

from core.ids import utcnow
from providers.messaging.client import TwilioClient
from services.agents.numbers_domain import StockRules
from services.agents.repository import agents_units
from services.agents.schema import number_stock, phone_numbers
from services.agents.stock import NumberStock

RULES = StockRules(low=2, target=3, idle=timedelta(days=30))
AREA = "406"  # Montana: no number of the local pool file, nor of another test


class SlowSearch(TwilioClient):
    """The real client, whose search takes a moment: both replicas are in a refill at once."""

    async def offered_numbers(self, country, area_code, *, limit):
        await asyncio.sleep(0.3)
        return await super().offered_numbers(country, area_code, limit=limit)


@pytest.fixture
async def provider(cfg):
    client = SlowSearch(cfg.sms_api_url, cfg.sms_account_sid, cfg.sms_auth_token.reveal())
    yield client
    await client.close()


async def test_two_replicas_jobs_buy_a_place_once(database, engine, provider, cfg):
    units = agents_units(database)
    async with units.transaction() as work:
        await work.stock.request("US", AREA, utcnow())
    replicas = [NumberStock(units, provider, "https://switchboard.example/sms", RULES, interval=60) for _ in range(2)]
    bought = await asyncio.gather(*(r.refill() for r in replicas))
    assert sorted(bought) == [0, RULES.target]  # one took the place's lease, the other let it be

    at_provider = [n for n in await provider_numbers(cfg) if n.startswith(f"+1{AREA}")]
    async with engine.connect() as conn:
        pooled = (await conn.execute(sa.select(phone_numbers.c.phone_number, phone_numbers.c.provider_ref)
                                     .where(phone_numbers.c.area_code == AREA))).all()
        place = (await conn.execute(number_stock.select().where(number_stock.c.area_code == AREA))).one()
    assert sorted(at_provider) == sorted(p.phone_number for p in pooled) and len(pooled) == RULES.target
    assert all(p.provider_ref.startswith("PN") for p in pooled)
    assert (place.state, place.lease_token) == ("stocked", None)
    assert await asyncio.gather(*(r.refill() for r in replicas)) == [0, 0]  # stocked: nothing more


async def provider_numbers(cfg) -> list[str]:
    """Every number of the account at the provider (its IncomingPhoneNumbers list)."""
    url = f"{cfg.sms_api_url}/2010-04-01/Accounts/{cfg.sms_account_sid}/IncomingPhoneNumbers.json"
    auth = {"Authorization": aiohttp.encode_basic_auth(cfg.sms_account_sid, cfg.sms_auth_token.reveal())}
    async with aiohttp.ClientSession() as session, session.get(url, params={"PageSize": "1000"}, headers=auth) as r:
        assert r.status == 200, await r.text()
        return [n["phone_number"] for n in (await r.json())["incoming_phone_numbers"]]
