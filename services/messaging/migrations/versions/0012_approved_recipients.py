"""messaging: the addresses a business's owner approved in person (approved_recipients), and the end of the `lead`
recipient: a lead's address is no longer approved for being a lead's (a key can write any lead), only when known
to the business (services.messaging.domain)

Emails queued as to a lead are to another address now (`other`): one still waiting, or approved by a key and not
sent yet, waits for the owner in person.

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

S = "messaging"
Uuid = UUID(as_uuid=False)


def upgrade() -> None:
    op.create_table(
        "approved_recipients",
        sa.Column("business_id", Uuid, primary_key=True),
        sa.Column("address", sa.Text, primary_key=True),
        sa.Column("approved_by", sa.Text, nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=False),
        schema=S)
    op.execute(f"""
        UPDATE {S}.emails SET recipient = 'other',
            status = CASE WHEN status = 'approved' THEN 'pending_approval' ELSE status END,
            approved_by = CASE WHEN status = 'approved' THEN NULL ELSE approved_by END,
            approved_at = CASE WHEN status = 'approved' THEN NULL ELSE approved_at END,
            next_attempt_at = CASE WHEN status = 'approved' THEN NULL ELSE next_attempt_at END
        WHERE recipient = 'lead'
    """)


def downgrade() -> None:
    op.drop_table("approved_recipients", schema=S)
