from core.migrations import run_env
from services.accounts.schema import metadata

run_env("accounts", metadata)
