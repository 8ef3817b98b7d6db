"""Setting a number's ring-first forwarding as a use case: the provider number's ringing hook first, then our
row under the number's lease; when that write cannot be kept, the provider's hooks are put back."""
import uuid

import pytest

from core import leases
from core.errors import ServiceError
from core.tenant import Tenant, acting_as
from services.agents.numbers_service import Numbers
from services.agents.repository import agents_units
from services.agents.schema import phone_numbers
from tests.service.conftest import LeaseStealingVoice, vapi_port


@pytest.fixture
async def numbers(cfg, engine, database):
    voice = LeaseStealingVoice(cfg, engine)
    yield Numbers(agents_units(database), vapi_port(cfg, voice), cfg.trial_pool_numbers), voice
    await voice.close()


def owner_of(agent: dict) -> Tenant:
    return Tenant(account_id=str(uuid.uuid4()), business_ids=(agent["business_id"],), api_key_id=str(uuid.uuid4()))


async def test_a_forwarding_write_that_loses_its_lease_keeps_nothing_and_puts_the_provider_back(
        numbers, engine, calling_agent):
    service, voice = numbers
    with acting_as(owner_of(calling_agent)):
        row = await service.update(None, calling_agent["phone_number"], forward_to="+14155550177", ring_seconds=25)
        assert (row.forward_to, row.ring_seconds, row.lease_token) == ("+14155550177", 25, None)
        voice.steal = (phone_numbers, phone_numbers.c.provider_phone_number_id)
        with pytest.raises(ServiceError) as err:
            await service.update(None, calling_agent["phone_number"], forward_to=None)
        assert err.value.code == "conflict"
    async with engine.connect() as conn:
        kept = (await conn.execute(phone_numbers.select().where(
            phone_numbers.c.phone_number == calling_agent["phone_number"]))).first()
        await conn.execute(phone_numbers.update().where(phone_numbers.c.id == kept.id).values(**leases.RELEASED))
        await conn.commit()  # the other writer is done
    assert (kept.forward_to, kept.ring_seconds) == ("+14155550177", 25)
    [hook] = (await voice.get_phone_number(calling_agent["provider_number"]))["hooks"]
    assert hook["do"][0]["destination"]["number"] == "+14155550177"  # compensated: the ringing hook is back
    assert hook["do"][0]["destination"]["transferPlan"]["dialTimeout"] == 25
