"""The number pool: carrier numbers the platform holds and hands out to businesses.

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

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from core.background import Background
from core.contact import normalize_e164
from core.ids import new_id, utcnow
from services.agents import numbers
from services.agents.store import phone_numbers

log = logging.getLogger(__name__)


def read_inventory(path: Path) -> list[dict]:
    """Rows for the phone_numbers table; a malformed entry fails loudly with its position."""
    entries = json.loads(path.read_text())["numbers"]
    rows = []
    for i, entry in enumerate(entries):
        try:
            e164 = normalize_e164(entry["phone_number"])
            caps = numbers.check_capabilities(list(entry.get("capabilities", ())))
        except Exception as exc:
            raise ValueError(f"{path}: numbers[{i}] is invalid: {exc}") from None
        facts = numbers.number_facts(e164)
        rows.append({
            "phone_number": e164, "country": facts.country, "area_code": facts.area_code,
            "locality": entry.get("locality"), "capabilities": caps, "blocked": bool(entry.get("blocked")),
            "block_reason": entry.get("block_reason"),
            "a2p_status": numbers.initial_a2p_status(facts.country, caps),
            "emergency_status": numbers.initial_emergency_status(facts.country, caps),
        })
    return rows


async def add_to_pool(engine: AsyncEngine, rows: list[dict]) -> int:
    """Insert the numbers not held yet; returns how many were added."""
    if not rows:
        return 0
    now = utcnow()
    async with engine.begin() as conn:
        result = await conn.execute(
            insert(phone_numbers).values([{**r, "id": new_id(), "created_at": now} for r in rows])
            .on_conflict_do_nothing(index_elements=["phone_number"]).returning(phone_numbers.c.id))
        return len(result.all())


class PoolLoader(Background):
    task_name = "number-pool-loader"

    def __init__(self, engine: AsyncEngine, path: Path):
        self.engine = engine
        self.path = path

    async def run(self) -> None:
        rows = read_inventory(self.path)
        while True:
            try:
                added = await add_to_pool(self.engine, rows)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the database may not be up yet
                log.warning("number pool: cannot load %s yet: %s", self.path, exc)
                await asyncio.sleep(2.0)
                continue
            log.info("number pool: %d of %d numbers in %s were new", added, len(rows), self.path)
            return
