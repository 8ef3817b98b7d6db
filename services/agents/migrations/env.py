from core.migrations import run_env
from services.agents.schema import metadata

run_env("agents", metadata)
