from core.migrations import run_env
from services.calls.schema import metadata

run_env("calls", metadata)
