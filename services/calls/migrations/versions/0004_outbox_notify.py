"""calls: a commit that adds events NOTIFYs the outbox relays (core.migrations.notify_on_outbox)

Revision ID: 0004
Revises: 0003
"""
from core.migrations import drop_notify_on_outbox, notify_on_outbox

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    notify_on_outbox("calls")


def downgrade() -> None:
    drop_notify_on_outbox("calls")
