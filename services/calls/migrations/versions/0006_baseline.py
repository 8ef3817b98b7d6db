"""calls: the baseline (core.migrations.run_env builds a new database from services/calls/schema.py)

Revision ID: 0006
Revises:
"""
from core.migrations import baseline
from services.calls.schema import metadata

revision, down_revision, branch_labels, depends_on = "0006", None, None, None
upgrade, downgrade = baseline(metadata)
