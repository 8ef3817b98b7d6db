"""accounts: at most one export of a business under way (queued or running): a request while one is answers it

Revision ID: 0017
Revises: 0016
"""
from alembic import op
from sqlalchemy import text

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None
S = "accounts"


def upgrade() -> None:
    # Any business with several under way keeps its newest; the others fail, saying why (their parts go at expiry).
    op.execute(f"""
        UPDATE {S}.exports SET status = 'failed', error = 'superseded: one export of a business runs at a time',
               completed_at = now(), updated_at = now(), lease_token = NULL, lease_until = NULL
         WHERE status IN ('queued', 'running') AND id NOT IN (
               SELECT DISTINCT ON (business_id) id FROM {S}.exports WHERE status IN ('queued', 'running')
                ORDER BY business_id, created_at DESC, id DESC)""")
    op.create_index("exports_one_under_way", "exports", ["business_id"], unique=True, schema=S,
                    postgresql_where=text("status IN ('queued', 'running')"))


def downgrade() -> None:
    op.drop_index("exports_one_under_way", table_name="exports", schema=S)
