"""sdr: the baseline, where the migrations of existing databases start

A new database is created from services/sdr/schema.py's tables and stamped at the head
(core.migrations.run_env), so no migration repeats a table; the ones after this carry existing databases from one
head to the next.

Revision ID: 0010
Revises:
"""
from core.migrations import create_baseline
from services.sdr.schema import metadata

revision = "0010"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    create_baseline(metadata)


def downgrade() -> None:
    raise RuntimeError("the baseline is not undone: drop the schema instead")
