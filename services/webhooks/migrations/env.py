from core.migrations import run_env
from services.webhooks.schema import metadata

run_env("webhooks", metadata)
