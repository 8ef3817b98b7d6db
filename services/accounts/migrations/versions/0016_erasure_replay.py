"""accounts: a completed erasure's replay entry (services.accounts.privacy.replay), to erase again what a restored
backup brings back

Revision ID: 0016
Revises: 0015
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts, Uuid

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None
S = "accounts"


def upgrade() -> None:
    op.create_table(
        "erasure_replay",
        sa.Column("erasure_id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("suppress", sa.Boolean, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("completed_at", Ts, nullable=False),
        sa.Column("replay_requested_at", Ts),
        schema=S)
    op.create_index("erasure_replay_completed", "erasure_replay", ["completed_at"], schema=S)
    op.create_index("erasure_replay_requested", "erasure_replay", ["replay_requested_at"], schema=S,
                    postgresql_where=sa.text("replay_requested_at IS NOT NULL"))


def downgrade() -> None:
    op.drop_table("erasure_replay", schema=S)
