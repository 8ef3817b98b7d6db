"""messaging: the email queue

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

from core.leases import lease_columns

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

S = "messaging"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "emails",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("to_address", sa.Text, nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("reference", sa.Text),
        sa.Column("created_by", sa.Text),
        sa.Column("approved_by", sa.Text),
        sa.Column("approved_at", Ts),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("next_attempt_at", Ts),
        sa.Column("last_error", sa.Text),
        sa.Column("message_id", sa.Text),
        sa.Column("sent_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        *lease_columns(),
        sa.UniqueConstraint("business_id", "reference", name="emails_one_per_reference"),
        schema=S,
    )
    op.create_index("emails_business_newest", "emails", ["business_id", sa.text("created_at DESC"),
                                                        sa.text("id DESC")], schema=S)
    op.create_index("emails_due", "emails", ["next_attempt_at"], schema=S,
                    postgresql_where=sa.text("status = 'approved'"))


def downgrade() -> None:
    op.drop_table("emails", schema=S)
