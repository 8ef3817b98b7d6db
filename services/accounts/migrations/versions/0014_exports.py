"""accounts: export jobs of a business's data (services.accounts.privacy exports): each kind's progress and cursor,
attempts and lease, and the archive's parts

Revision ID: 0014
Revises: 0013
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from core.columns import Ts, Uuid

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None
S = "accounts"


def upgrade() -> None:
    op.create_table(
        "exports",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, sa.ForeignKey(f"{S}.businesses.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("kinds", JSONB, nullable=False),
        sa.Column("records", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("bytes", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("parts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("crc32", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("raw_bytes", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("sha256", sa.Text),
        sa.Column("idempotency_key", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text),
        sa.Column("next_attempt_at", Ts, nullable=False),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("completed_at", Ts),
        sa.Column("expires_at", Ts),
        schema=S)
    op.create_index("exports_due", "exports", ["next_attempt_at"], schema=S,
                    postgresql_where=sa.text("status IN ('queued', 'running')"))
    op.create_index("exports_expiring", "exports", ["expires_at"], schema=S,
                    postgresql_where=sa.text("status = 'completed'"))
    op.create_index("exports_business", "exports", ["business_id", "created_at"], schema=S)
    op.create_index("exports_idempotency", "exports", ["business_id", "idempotency_key"], unique=True, schema=S,
                    postgresql_where=sa.text("idempotency_key IS NOT NULL"))
    op.create_table(
        "export_parts",
        sa.Column("export_id", Uuid, sa.ForeignKey(f"{S}.exports.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("data", sa.LargeBinary, nullable=False),
        schema=S)


def downgrade() -> None:
    op.drop_table("export_parts", schema=S)
    op.drop_table("exports", schema=S)
