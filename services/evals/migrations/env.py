from core.migrations import run_env

run_env("evals")
