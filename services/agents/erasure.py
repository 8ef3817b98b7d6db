"""A torn-down business's deletion in the agents service (ErasePerson with `whole_business`: the accounts service's
teardown deletion, services.accounts.privacy.teardown_deletion, alone may ask, core.registry.RPC_CALLERS). The
agents service holds no one person's records, so a request without `whole_business` is refused.

What it does, for the request's business:
- its phone numbers go back to the pool (released at the voice provider first), as the teardown's consumer does
  already (teardown_consumer.py): again here in case that failed, which is safe (a released number is not held);
- each agent's assistant is deleted at the voice provider (the assistant's prompts, its greetings and what the
  provider keeps of its configuration; one already gone counts as deleted), with no transaction or connection held,
  then the agent is deleted here with its versions and prompt history: its prompts, which may name the business's
  customers, go with it (the calls and evals that name the agent keep its id).

BATCH agents per request; `more` when there may be others. An assistant the provider could not delete (an outage)
keeps its agent, and the request fails `provider_error` once the others are done, for the job to retry.
"""
from __future__ import annotations

import asyncio
import logging

from core.errors import ServiceError, invalid
from core.ids import require_uuid
from core.uow import UnitOfWork
from providers.voice.port import ProviderError, VoiceProvider
from services.agents.numbers_service import Numbers
from services.agents.repository import AgentsUnit
from switchboard.v1 import common_pb2

log = logging.getLogger(__name__)

BATCH = 25
AT_ONCE = 5  # provider deletions in flight


class Erasure:
    def __init__(self, uow: UnitOfWork[AgentsUnit], voice: VoiceProvider, numbers: Numbers, *, batch: int = BATCH):
        self.uow = uow
        self.voice = voice
        self.numbers = numbers
        self.batch = batch

    async def erase(self, request: common_pb2.ErasureRequest) -> common_pb2.ErasureReport:
        if not request.whole_business:
            raise invalid("the agents service holds no one person's records: only a whole business is erased here "
                          "(whole_business)")
        business_id = require_uuid(request.business_id, "business_id").lower()
        released = await self.numbers.release_all(business_id)
        async with self.uow.read() as work:
            found = await work.agents.assistants_of(business_id, self.batch)
        deleted = await self._at_provider(found, business_id)
        async with self.uow.transaction() as work:
            removed = await work.agents.delete_agents(business_id, [agent_id for agent_id, _ in found
                                                                    if agent_id in deleted])
        log.info("teardown of business %s in agents: numbers released %d, assistants deleted at the provider %d, "
                 "agents deleted %d", business_id, released, len(deleted), removed)
        if len(deleted) < len(found):
            raise ServiceError("provider_error", "the voice provider could not delete every assistant of this "
                               "business; the others are deleted, and the same request again finishes the rest")
        return common_pb2.ErasureReport(items=[
            common_pb2.ErasedItem(what="agents.phone_number", action="released", count=released),
            common_pb2.ErasedItem(what="provider.assistant", action="provider_deleted", count=len(deleted)),
            common_pb2.ErasedItem(what="agents.agent", action="deleted", count=removed)],
            more=len(found) >= self.batch)

    async def _at_provider(self, found: list[tuple[str, str]], business_id: str) -> set[str]:
        """The ids of the agents whose assistant the provider no longer holds."""
        limit = asyncio.Semaphore(AT_ONCE)

        async def delete(agent_id: str, assistant_id: str) -> str | None:
            async with limit:
                try:
                    await self.voice.delete_assistant(assistant_id)
                except ProviderError as exc:
                    log.warning("teardown of business %s: the voice provider did not delete assistant %s (%s): "
                                "retried with the job", business_id, assistant_id, exc.message)
                    return None
            return agent_id

        return {i for i in await asyncio.gather(*(delete(*pair) for pair in found)) if i is not None}
