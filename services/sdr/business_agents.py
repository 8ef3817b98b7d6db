"""Which of a business's agents calls and texts, as the runs and the pipeline pick it (services.sdr.ports gives each
agent with its number)."""
from __future__ import annotations

from core.errors import invalid


def only_agent_with_number(numbers: dict[str, str | None], setting: str) -> str:
    """The business's one agent with a number; a 400 naming `setting` when it has none or several."""
    with_numbers = sorted(a for a, n in numbers.items() if n)
    if len(with_numbers) != 1:
        raise invalid("the business has no agent with a phone number: assign one a number" if not with_numbers else
                      f"the business has {len(with_numbers)} agents with numbers: name the one to use in {setting}")
    return with_numbers[0]
