"""agents: a commit that adds events NOTIFYs the outbox relays (core.migrations.notify_on_outbox)

Revision ID: 0006
Revises: 0005
"""
from core.migrations import drop_notify_on_outbox, notify_on_outbox

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    notify_on_outbox("agents")


def downgrade() -> None:
    drop_notify_on_outbox("agents")
