"""accounts: whether a sign-in link went out by e-mail: using one proves the owner reads that address, which confirms
it (signup no longer takes the address on trust)

Revision ID: 0008
Revises: 0007
"""
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE accounts.magic_links ADD COLUMN mailed BOOLEAN NOT NULL DEFAULT false")


def downgrade() -> None:
    op.execute("ALTER TABLE accounts.magic_links DROP COLUMN mailed")
