"""accounts: the baseline (core.migrations.run_env builds a new database from services/accounts/schema.py)

Revision ID: 0010
Revises:
"""
from core.migrations import baseline
from services.accounts.schema import metadata

revision, down_revision, branch_labels, depends_on = "0010", None, None, None
upgrade, downgrade = baseline(metadata)
