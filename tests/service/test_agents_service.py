"""The agents' configuration write as a use case: provider sync, the one short transaction, and the
compensation when that transaction cannot keep the write, on the real database and voice simulator."""
import pytest
import sqlalchemy as sa

from core import rpc
from core.errors import ServiceError
from core.sealing import SecretBox
from core.tenant import acting_as
from providers.voice.port import ProviderError
from providers.voice.vapi import assistants
from providers.voice.vapi.client import VapiClient
from services.agents.evals_port import GrpcEvalGate
from services.agents.repository import agents_units
from services.agents.schema import agent_versions, agents, outbox, prompt_history
from services.agents.service import Agents
from tests.service.conftest import LeaseStealingVoice, new_tenant, vapi_port


@pytest.fixture
async def service(cfg, engine, database):
    voice = LeaseStealingVoice(cfg, engine)
    evals, channel = rpc.connect("evals", cfg, forward_tenant=True)
    yield Agents(agents_units(database), vapi_port(cfg, voice), GrpcEvalGate(evals),
                 cfg.eval_gate_max_wait_seconds, SecretBox(cfg.webhook_secrets_key.reveal()), allow_loopback=True), voice
    await channel.close()
    await voice.close()


async def live_prompt(voice: VapiClient, row) -> str:
    return assistants.live(await voice.get_assistant(row.provider_assistant_id)).prompt


async def history(engine, agent_id) -> tuple[list[int], list[str], int]:
    """The agent's versions, its inbound prompts in the audit history, and its prompt-change events."""
    async with engine.connect() as conn:
        versions = (await conn.scalars(sa.select(agent_versions.c.version).where(agent_versions.c.agent_id == agent_id)
                                       .order_by(agent_versions.c.version))).all()
        prompts = (await conn.scalars(sa.select(prompt_history.c.current).where(
            prompt_history.c.agent_id == agent_id, prompt_history.c.field == "inbound_prompt")
            .order_by(prompt_history.c.id))).all()
        events = await conn.scalar(sa.select(sa.func.count()).select_from(outbox).where(
            outbox.c.type == "agent.prompt_changed", outbox.c.data["agent_id"].astext == str(agent_id)))
    return list(versions), list(prompts), events


async def test_a_write_syncs_the_provider_and_records_version_history_and_event(service, engine):
    agents_, voice = service
    with acting_as(new_tenant()) as who:
        row = (await agents_.create(who.business_ids[0], "Front desk", "Prompt A", None, {}, {}, {})).row
        written = await agents_.update(str(row.id), {"inbound_prompt": "Prompt B"}, metadata={"team": "east"})
    assert written.row.version == 2 and written.updated_fields == ["inbound_prompt", "metadata"]
    assert written.row.lease_token is None and written.row.metadata == {"team": "east"}
    assert await live_prompt(voice, row) == "Prompt B"
    assert await history(engine, row.id) == ([1, 2], ["Prompt A", "Prompt B"], 1)


async def test_a_write_that_loses_its_lease_keeps_nothing_and_puts_the_provider_back(service, engine):
    agents_, voice = service
    with acting_as(new_tenant()) as who:
        row = (await agents_.create(who.business_ids[0], "Front desk", "Prompt A", None, {}, {}, {})).row
        voice.steal = (agents, agents.c.provider_assistant_id)
        with pytest.raises(ServiceError) as err:
            await agents_.update(str(row.id), {"inbound_prompt": "Prompt C"})
        assert err.value.code == "conflict"
        assert (await agents_.get(str(row.id))).row.version == 1
    assert await live_prompt(voice, row) == "Prompt A"  # compensated
    assert await history(engine, row.id) == ([1], ["Prompt A"], 0)


async def test_a_provider_failure_changes_nothing_and_frees_the_agent(service, engine, voice):
    agents_, provider = service
    with acting_as(new_tenant()) as who:
        row = (await agents_.create(who.business_ids[0], "Front desk", "Prompt A", None, {}, {}, {})).row
        await voice.fail_next("PATCH", "/assistant", 500)
        with pytest.raises(ProviderError):
            await agents_.update(str(row.id), {"inbound_prompt": "Prompt D"})
        assert (await agents_.get(str(row.id))).row.lease_token is None
        assert (await agents_.update(str(row.id), {"inbound_prompt": "Prompt E"})).row.version == 2
    assert await live_prompt(provider, row) == "Prompt E"
    assert await history(engine, row.id) == ([1, 2], ["Prompt A", "Prompt E"], 1)


async def test_another_business_cannot_write_the_agent(service):
    agents_, _ = service
    with acting_as(new_tenant()) as who:
        row = (await agents_.create(who.business_ids[0], "Front desk", "Prompt A", None, {}, {}, {})).row
    with acting_as(new_tenant()), pytest.raises(ServiceError) as err:
        await agents_.update(str(row.id), {"inbound_prompt": "Mine now"})
    assert err.value.code == "not_found"
