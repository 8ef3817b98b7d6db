"""The soak's short profile (bench.soak.profile.short: about a minute of mixed load with a fixed seed, a few kills,
a pause and a provider outage) on the package's scaled-out stack: every line of the ledger must be exact, so a
regression in recovery fails CI. `make soak` runs the long one."""
from bench.soak.ledger import render
from bench.soak.profile import short
from bench.soak.run import offered, soaked
from tests.supervising import supervised


async def test_the_books_balance_after_a_short_soak(scaled):
    async with supervised(scaled, 120):
        history, lines = await soaked(scaled, short())
    assert lines and all(line.exact for line in lines), f"{offered(history)}\n{render(lines)}"
    assert len(history.windows) >= 3 and history.calls and history.texts, offered(history)
