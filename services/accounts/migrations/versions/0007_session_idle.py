"""accounts: when each dashboard session was last used (its idle timeout), and sessions by account (sign out
everywhere)

Revision ID: 0007
Revises: 0006
"""
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Sessions open today count as used when they began: one unused for the idle timeout since then ends.
    op.execute("ALTER TABLE accounts.sessions ADD COLUMN last_used_at TIMESTAMPTZ")
    op.execute("UPDATE accounts.sessions SET last_used_at = created_at")
    op.execute("ALTER TABLE accounts.sessions ALTER COLUMN last_used_at SET NOT NULL")
    op.execute("CREATE INDEX sessions_account ON accounts.sessions (account_id)")


def downgrade() -> None:
    op.execute("DROP INDEX accounts.sessions_account")
    op.execute("ALTER TABLE accounts.sessions DROP COLUMN last_used_at")
