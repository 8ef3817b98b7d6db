"""messaging: who a queued email is for (the owner, a lead, or another address that only the owner may approve)
and the business it is sent on behalf of (From display name, Reply-To)

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

S = "messaging"


def upgrade() -> None:
    op.add_column("emails", sa.Column("recipient", sa.Text), schema=S)
    op.add_column("emails", sa.Column("on_behalf_of", sa.Text), schema=S)
    op.add_column("emails", sa.Column("reply_to", sa.Text), schema=S)


def downgrade() -> None:
    for column in ("reply_to", "on_behalf_of", "recipient"):
        op.drop_column("emails", column, schema=S)
