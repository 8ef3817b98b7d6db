"""calls: the recording disclosure each call opened with (or why not), and the other party's consent

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

S = "calls"


def upgrade() -> None:
    op.add_column("calls", sa.Column("recording_disclosure", JSONB), schema=S)
    op.add_column("calls", sa.Column("recording_consent", JSONB), schema=S)


def downgrade() -> None:
    op.drop_column("calls", "recording_consent", schema=S)
    op.drop_column("calls", "recording_disclosure", schema=S)
