"""accounts: calls in the usage log (no API key behind them; their minutes)

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "accounts"


def upgrade() -> None:
    op.alter_column("usage_log", "api_key_id", nullable=True, schema=S)
    op.add_column("usage_log", sa.Column("minutes", sa.Integer, nullable=False, server_default="0"), schema=S)
    op.create_index("usage_log_business_calls", "usage_log", ["business_id"], schema=S,
                    postgresql_where=sa.text("call_id IS NOT NULL"))
    op.create_index("usage_log_call_once", "usage_log", ["call_id"], unique=True, schema=S,
                    postgresql_where=sa.text("method = 'CALL'"))


def downgrade() -> None:
    op.drop_index("usage_log_call_once", "usage_log", schema=S)
    op.drop_index("usage_log_business_calls", "usage_log", schema=S)
    op.drop_column("usage_log", "minutes", schema=S)
    op.execute(f"DELETE FROM {S}.usage_log WHERE api_key_id IS NULL")
    op.alter_column("usage_log", "api_key_id", nullable=False, schema=S)
