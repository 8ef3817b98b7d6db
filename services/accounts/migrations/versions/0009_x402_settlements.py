"""accounts: x402 payments are recorded before they are settled (pending, then settled or failed), with what it
takes to ask the facilitator again (the payment and its requirements), so a settlement whose answer was lost is
reconciled rather than lost; renewals beside signups; the reminder sent before a paid period ends

Revision ID: 0009
Revises: 0008
"""
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

T = "accounts.x402_payments"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {T} ADD COLUMN id UUID NOT NULL DEFAULT gen_random_uuid()")
    op.execute(f"ALTER TABLE {T} DROP CONSTRAINT x402_payments_pkey")
    op.execute(f"ALTER TABLE {T} ADD PRIMARY KEY (id)")
    op.execute(f"ALTER TABLE {T} ALTER COLUMN id DROP DEFAULT")
    op.execute(f"ALTER TABLE {T} ALTER COLUMN transaction DROP NOT NULL")
    op.execute(f"ALTER TABLE {T} ADD CONSTRAINT x402_payments_transaction_key UNIQUE (transaction)")
    op.execute(f"ALTER TABLE {T} ADD COLUMN purpose TEXT NOT NULL DEFAULT 'signup'")
    op.execute(f"ALTER TABLE {T} ADD COLUMN status TEXT NOT NULL DEFAULT 'settled'")
    op.execute(f"ALTER TABLE {T} ADD COLUMN nonce TEXT")
    op.execute(f"ALTER TABLE {T} ADD COLUMN valid_before TIMESTAMPTZ")
    op.execute(f"ALTER TABLE {T} ADD COLUMN payload JSONB")
    op.execute(f"ALTER TABLE {T} ADD COLUMN requirements JSONB")
    op.execute(f"ALTER TABLE {T} ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")
    op.execute(f"ALTER TABLE {T} ADD COLUMN next_attempt_at TIMESTAMPTZ")
    op.execute(f"ALTER TABLE {T} ADD COLUMN last_error TEXT")
    op.execute(f"ALTER TABLE {T} ADD COLUMN settled_at TIMESTAMPTZ")
    op.execute(f"CREATE UNIQUE INDEX x402_payments_authorization ON {T} (payer, nonce)")
    op.execute(f"CREATE INDEX x402_payments_due ON {T} (next_attempt_at) WHERE status = 'pending'")
    op.execute("ALTER TABLE accounts.businesses ADD COLUMN renewal_reminded_through TIMESTAMPTZ")


def downgrade() -> None:
    op.execute("ALTER TABLE accounts.businesses DROP COLUMN renewal_reminded_through")
    op.execute(f"DELETE FROM {T} WHERE transaction IS NULL")
    op.execute("DROP INDEX accounts.x402_payments_due")
    op.execute("DROP INDEX accounts.x402_payments_authorization")
    for column in ("settled_at", "last_error", "next_attempt_at", "attempts", "requirements", "payload",
                   "valid_before", "nonce", "status", "purpose"):
        op.execute(f"ALTER TABLE {T} DROP COLUMN {column}")
    op.execute(f"ALTER TABLE {T} DROP CONSTRAINT x402_payments_transaction_key")
    op.execute(f"ALTER TABLE {T} DROP CONSTRAINT x402_payments_pkey")
    op.execute(f"ALTER TABLE {T} DROP COLUMN id")
    op.execute(f"ALTER TABLE {T} ADD PRIMARY KEY (transaction)")
