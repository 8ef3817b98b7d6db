from core.migrations import run_env
from services.evals.schema import metadata

run_env("evals", metadata)
