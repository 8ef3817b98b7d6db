"""accounts: a workspace made through the API is billed on its account's subscription (`billed_on`: the business
whose subscription pays for it), added there under a lease (`lease_token`, `lease_until`) while the payment
provider is asked; workspaces made before are put on their account's first paying business

Revision ID: 0010
Revises: 0009
"""
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

T = "accounts.businesses"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {T} ADD COLUMN billed_on UUID REFERENCES {T} (id)")
    op.execute(f"ALTER TABLE {T} ADD COLUMN lease_token UUID")
    op.execute(f"ALTER TABLE {T} ADD COLUMN lease_until TIMESTAMPTZ")
    op.execute(f"CREATE INDEX businesses_billed_on ON {T} (billed_on) WHERE billed_on IS NOT NULL")
    # Workspaces made through the API before: billed on the account's first business that pays (its signup's).
    op.execute(f"""
        UPDATE {T} AS b SET billed_on = (
            SELECT h.id FROM {T} AS h WHERE h.account_id = b.account_id AND h.payment_capture IS NOT NULL
            ORDER BY h.created_at, h.id LIMIT 1)
        WHERE b.payment_capture IS NULL""")


def downgrade() -> None:
    op.execute("DROP INDEX accounts.businesses_billed_on")
    for column in ("lease_until", "lease_token", "billed_on"):
        op.execute(f"ALTER TABLE {T} DROP COLUMN {column}")
