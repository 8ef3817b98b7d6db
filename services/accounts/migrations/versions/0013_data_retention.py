"""accounts: the retention a business sets for its customers' personal data (services.accounts.privacy
data_retention): its settings, when its retention job is due next, and that job's lease

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from core.columns import Ts, Uuid

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None
S = "accounts"


def upgrade() -> None:
    op.add_column("businesses", sa.Column("retention", JSONB, nullable=False, server_default="{}"), schema=S)
    # 'epoch': every business, and each new one, is due at once.
    op.add_column("businesses", sa.Column("retention_next_at", Ts, nullable=False, server_default=sa.text("'epoch'")),
                  schema=S)
    op.add_column("businesses", sa.Column("retention_lease_token", Uuid), schema=S)
    op.add_column("businesses", sa.Column("retention_lease_until", Ts), schema=S)
    op.create_index("businesses_retention_due", "businesses", ["retention_next_at"], schema=S)


def downgrade() -> None:
    op.drop_index("businesses_retention_due", "businesses", schema=S)
    for column in ("retention_lease_until", "retention_lease_token", "retention_next_at", "retention"):
        op.drop_column("businesses", column, schema=S)
