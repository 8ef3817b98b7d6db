"""calls: an idempotency key's claim holds a lease while its request places the call (core.leases; service.py,
issue 55); a claim left unsettled before this revision has a lapsed one, so a retry takes it over

Revision ID: 0010
Revises: 0009
"""
from alembic import op

from core.leases import lease_columns

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None
SCHEMA = "calls"


def upgrade() -> None:
    for column in lease_columns():
        op.add_column("idempotency_keys", column, schema=SCHEMA)
    op.execute(f"UPDATE {SCHEMA}.idempotency_keys SET lease_token = gen_random_uuid(), lease_until = created_at "
               "WHERE call_id IS NULL")


def downgrade() -> None:
    op.drop_column("idempotency_keys", "lease_until", schema=SCHEMA)
    op.drop_column("idempotency_keys", "lease_token", schema=SCHEMA)
