"""evals: the baseline (core.migrations.run_env builds a new database from services/evals/schema.py)

Revision ID: 0003
Revises:
"""
from core.migrations import baseline
from services.evals.schema import metadata

revision, down_revision, branch_labels, depends_on = "0003", None, None, None
upgrade, downgrade = baseline(metadata)
