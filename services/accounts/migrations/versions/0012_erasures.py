"""accounts: erasure jobs of a person (services.accounts.privacy): the subject while running, the steps' reports, the
ids they found, attempts and lease

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB

from core.columns import Ts, Uuid

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None
S = "accounts"


def upgrade() -> None:
    op.create_table(
        "erasures",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, sa.ForeignKey(f"{S}.businesses.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("phones", ARRAY(sa.Text)),
        sa.Column("emails", ARRAY(sa.Text)),
        sa.Column("subject_key", sa.Text),
        sa.Column("phone_masked", sa.Text),
        sa.Column("email_masked", sa.Text),
        sa.Column("suppress", sa.Boolean, nullable=False),
        sa.Column("reports", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("found", JSONB, nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("idempotency_key", sa.Text),
        sa.Column("request_hash", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("error", sa.Text),
        sa.Column("next_attempt_at", Ts, nullable=False),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.Column("completed_at", Ts),
        schema=S)
    op.create_index("erasures_due", "erasures", ["next_attempt_at"], schema=S,
                    postgresql_where=sa.text("status IN ('queued', 'running')"))
    op.create_index("erasures_business", "erasures", ["business_id", "created_at"], schema=S)
    op.create_index("erasures_idempotency", "erasures", ["business_id", "idempotency_key"], unique=True, schema=S,
                    postgresql_where=sa.text("idempotency_key IS NOT NULL"))
    op.create_index("erasures_one_per_subject", "erasures", ["business_id", "subject_key"], unique=True, schema=S,
                    postgresql_where=sa.text("status IN ('queued', 'running')"))


def downgrade() -> None:
    op.drop_table("erasures", schema=S)
