"""messaging: a commit that adds events NOTIFYs the outbox relays (core.migrations.notify_on_outbox)

Revision ID: 0003
Revises: 0002
"""
from core.migrations import drop_notify_on_outbox, notify_on_outbox

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    notify_on_outbox("messaging")


def downgrade() -> None:
    drop_notify_on_outbox("messaging")
