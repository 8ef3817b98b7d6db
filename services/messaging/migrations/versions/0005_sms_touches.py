"""messaging: a text's idempotency key (one message per business and key) and the communication run's reference
and touch it is for

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "messaging"


def upgrade() -> None:
    op.add_column("messages", sa.Column("idempotency_key", sa.Text), schema=S)
    op.add_column("messages", sa.Column("external_ref", sa.Text), schema=S)
    op.add_column("messages", sa.Column("touch_id", sa.Text), schema=S)
    op.create_index("messages_idempotency_key", "messages", ["business_id", "idempotency_key"], unique=True, schema=S,
                    postgresql_where=sa.text("idempotency_key IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("messages_idempotency_key", "messages", schema=S)
    for column in ("touch_id", "external_ref", "idempotency_key"):
        op.drop_column("messages", column, schema=S)
