"""messaging: the touch ledger: every outbound call and text, whatever path placed it, counted by channel against
the callee's frequency caps (was call_slots, calls with compliance enforced only)

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.rename_table("call_slots", "counted_touches", schema="messaging")
    op.add_column("counted_touches", sa.Column("channel", sa.Text, nullable=False, server_default="call"),
                  schema="messaging")
    op.alter_column("counted_touches", "channel", server_default=None, schema="messaging")
    op.execute("ALTER INDEX messaging.call_slots_callee RENAME TO counted_touches_callee")
    op.execute("ALTER TABLE messaging.counted_touches RENAME CONSTRAINT call_slots_pkey TO counted_touches_pkey")


def downgrade() -> None:
    op.execute("ALTER TABLE messaging.counted_touches RENAME CONSTRAINT counted_touches_pkey TO call_slots_pkey")
    op.execute("ALTER INDEX messaging.counted_touches_callee RENAME TO call_slots_callee")
    op.drop_column("counted_touches", "channel", schema="messaging")
    op.rename_table("counted_touches", "call_slots", schema="messaging")
