"""messaging: the baseline (core.migrations.run_env builds a new database from services/messaging/schema.py)

Revision ID: 0012
Revises:
"""
from core.migrations import baseline
from services.messaging.schema import metadata

revision, down_revision, branch_labels, depends_on = "0012", None, None, None
upgrade, downgrade = baseline(metadata)
