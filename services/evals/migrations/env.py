from core.migrations import run_env
from services.evals.store import metadata

run_env("evals", metadata)
