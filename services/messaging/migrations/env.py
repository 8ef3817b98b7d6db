from core.migrations import run_env
from services.messaging.schema import metadata

run_env("messaging", metadata)
