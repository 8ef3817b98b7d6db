"""The soak load's actors, one flow each (bench.soak.load)."""
