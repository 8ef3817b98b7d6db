"""sdr: when a lead's email address became known to the business (email_known_at): the person gave it on an inbound
call. An address a key wrote is a stranger's (the messaging service holds a key's email to it for the owner's
approval).

Leads from before this migration get none: a key could write any source and any address, so which addresses came
from the person themselves is not known; mail to them waits for the owner once, or for the person's next call.

Revision ID: 0010
Revises: 0009
"""
import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

S = "sdr"


def upgrade() -> None:
    op.add_column("leads", sa.Column("email_known_at", sa.DateTime(timezone=True)), schema=S)


def downgrade() -> None:
    op.drop_column("leads", "email_known_at", schema=S)
