"""evals: eval runs driven under leases (the replica following a run, and when it began submitting it)

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts, Uuid

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runs", sa.Column("lease_token", Uuid), schema="evals")
    op.add_column("runs", sa.Column("lease_until", Ts), schema="evals")
    op.add_column("runs", sa.Column("submitting_at", Ts), schema="evals")
    op.create_index("runs_unfinished", "runs", ["lease_until"], schema="evals",
                    postgresql_where=sa.text("status <> 'ended'"))


def downgrade() -> None:
    op.drop_index("runs_unfinished", table_name="runs", schema="evals")
    for column in ("submitting_at", "lease_until", "lease_token"):
        op.drop_column("runs", column, schema="evals")
