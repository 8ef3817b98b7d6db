from core.migrations import run_env
from services.sdr.schema import metadata

run_env("sdr", metadata)
