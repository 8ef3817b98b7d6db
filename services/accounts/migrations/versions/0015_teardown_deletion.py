"""accounts: a torn-down business's data deletion (services.accounts.privacy.teardown_deletion): when it is due (the
grace period's end), once done, each step's report, attempts and the runner's lease

Revision ID: 0015
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from core.columns import Ts, Uuid

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None
S = "accounts"
COLUMNS = ("data_deletion_due_at", "data_deleted_at", "data_deletion_next_at", "data_deletion_steps",
           "data_deletion_attempts", "data_deletion_error", "data_deletion_lease_token", "data_deletion_lease_until")


def upgrade() -> None:
    op.add_column("businesses", sa.Column("data_deletion_due_at", Ts), schema=S)
    op.add_column("businesses", sa.Column("data_deleted_at", Ts), schema=S)
    op.add_column("businesses", sa.Column("data_deletion_next_at", Ts), schema=S)
    op.add_column("businesses", sa.Column("data_deletion_steps", JSONB, nullable=False, server_default="{}"),
                  schema=S)
    op.add_column("businesses", sa.Column("data_deletion_attempts", sa.Integer, nullable=False, server_default="0"),
                  schema=S)
    op.add_column("businesses", sa.Column("data_deletion_error", sa.Text), schema=S)
    op.add_column("businesses", sa.Column("data_deletion_lease_token", Uuid), schema=S)
    op.add_column("businesses", sa.Column("data_deletion_lease_until", Ts), schema=S)
    op.create_index("businesses_data_deletion_due", "businesses", ["data_deletion_next_at"], schema=S,
                    postgresql_where=sa.text("data_deletion_due_at IS NOT NULL AND data_deleted_at IS NULL"))


def downgrade() -> None:
    op.drop_index("businesses_data_deletion_due", table_name="businesses", schema=S)
    for column in COLUMNS:
        op.drop_column("businesses", column, schema=S)
