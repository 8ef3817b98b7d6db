"""The number pool's static inventory: carrier numbers listed in a file, for the local stack (production buys its
numbers from the SMS provider: services.agents.stock).

The inventory is a JSON file (`NUMBER_POOL_FILE`) of
`{"numbers": [{"phone_number", "capabilities": [...], "locality"?, "blocked"?, "block_reason"?}]}`;
the local stack ships `deploy/local/number_pool.json`. At start-up the agents service adds
every number it does not hold yet (existing rows, and their assignments, are never touched),
retrying in the background while the database is unreachable.
"""
from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from core.background import Background
from core.contact import normalize_e164, number_facts
from core.ids import utcnow
from core.uow import UnitOfWork
from services.agents import numbers_domain
from services.agents.repository import AgentsUnit

log = logging.getLogger(__name__)


def read_inventory(path: Path) -> list[dict[str, Any]]:
    """Rows for the phone_numbers table; a malformed entry fails loudly with its position."""
    entries = json.loads(path.read_text())["numbers"]
    rows = []
    for i, entry in enumerate(entries):
        try:
            e164 = normalize_e164(entry["phone_number"])
            caps = numbers_domain.check_capabilities(list(entry.get("capabilities", ())))
        except Exception as exc:  # noqa: BLE001 - whatever is wrong, reported with the entry's position
            raise ValueError(f"{path}: numbers[{i}] is invalid: {exc}") from None
        facts = number_facts(e164)
        rows.append({
            "phone_number": e164, "country": facts.country, "area_code": facts.area_code,
            "locality": entry.get("locality"), "capabilities": caps, "blocked": bool(entry.get("blocked")),
            "block_reason": entry.get("block_reason"),
            "a2p_status": numbers_domain.initial_a2p_status(facts.country, caps),
            "emergency_status": numbers_domain.initial_emergency_status(facts.country, caps),
        })
    return rows


class PoolLoader(Background):
    task_name = "number-pool-loader"

    def __init__(self, uow: UnitOfWork[AgentsUnit], path: Path):
        self.uow = uow
        self.path = path

    async def run(self) -> None:
        rows = read_inventory(self.path)
        while True:
            try:
                async with self.uow.transaction() as work:
                    added = await work.numbers.add_to_pool(rows, utcnow())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the database may not be up yet
                log.warning("number pool: cannot load %s yet: %s", self.path, exc)
                await asyncio.sleep(2.0)
                continue
            log.info("number pool: %d of %d numbers in %s were new", added, len(rows), self.path)
            return
