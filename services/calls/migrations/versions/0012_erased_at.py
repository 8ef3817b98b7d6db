"""calls: when a privacy erasure redacted a call's personal data (calls.erased_at; services.calls.erasure, issue 56)

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None
SCHEMA = "calls"


def upgrade() -> None:
    op.add_column("calls", sa.Column("erased_at", Ts), schema=SCHEMA)


def downgrade() -> None:
    op.drop_column("calls", "erased_at", schema=SCHEMA)
