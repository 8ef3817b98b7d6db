"""evals: a business's eval runs newest first by an index (the business's export pages through them)

Revision ID: 0005
Revises: 0004
"""
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("runs_business_created", "runs", ["business_id", "created_at", "id"], schema="evals")


def downgrade() -> None:
    op.drop_index("runs_business_created", table_name="runs", schema="evals")
