"""webhooks: the baseline (core.migrations.run_env builds a new database from services/webhooks/schema.py)

Revision ID: 0002
Revises:
"""
from core.migrations import baseline
from services.webhooks.schema import metadata

revision, down_revision, branch_labels, depends_on = "0002", None, None, None
upgrade, downgrade = baseline(metadata)
