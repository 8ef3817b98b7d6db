"""accounts: subscriptions paid by card checkout or x402, payment events seen, signup provisioning saga

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

S = "accounts"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    for column in (sa.Column("payment_capture", sa.Text), sa.Column("checkout_session_id", sa.Text),
                   sa.Column("customer_id", sa.Text), sa.Column("subscription_id", sa.Text),
                   sa.Column("subscription_event_at", Ts), sa.Column("past_due_since", Ts),
                   sa.Column("paid_through", Ts),
                   sa.Column("paused_by_billing", sa.Boolean, nullable=False, server_default=sa.false())):
        op.add_column("businesses", column, schema=S)
    op.create_index("businesses_subscription", "businesses", ["subscription_id"], unique=True, schema=S)
    op.create_index("businesses_billing_watch", "businesses", ["subscription_status"], schema=S,
                    postgresql_where=sa.text("subscription_status IN ('incomplete', 'past_due', 'active')"))
    op.create_table(
        "payment_events",
        sa.Column("event_id", sa.Text, primary_key=True),
        sa.Column("type", sa.Text, nullable=False),
        sa.Column("business_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("received_at", Ts, nullable=False),
        schema=S)
    op.create_table(
        "x402_payments",
        sa.Column("transaction", sa.Text, primary_key=True),
        sa.Column("business_id", Uuid, sa.ForeignKey(f"{S}.businesses.id", ondelete="CASCADE"), nullable=False),
        sa.Column("payer", sa.Text, nullable=False),
        sa.Column("network", sa.Text, nullable=False),
        sa.Column("asset", sa.Text, nullable=False),
        sa.Column("amount", sa.Text, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        schema=S)
    op.create_table(
        "provisionings",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, sa.ForeignKey(f"{S}.businesses.id", ondelete="CASCADE"), nullable=False,
                  unique=True),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("step", sa.Text, nullable=False),
        sa.Column("forward_to", sa.Text),
        sa.Column("agent_id", Uuid),
        sa.Column("phone_number", sa.Text),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_error", sa.Text),
        sa.Column("next_attempt_at", Ts, nullable=False),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S)
    op.create_index("provisionings_due", "provisionings", ["next_attempt_at"], schema=S,
                    postgresql_where=sa.text("status IN ('pending', 'retrying')"))


def downgrade() -> None:
    op.drop_table("provisionings", schema=S)
    op.drop_table("x402_payments", schema=S)
    op.drop_table("payment_events", schema=S)
    op.drop_index("businesses_billing_watch", "businesses", schema=S)
    op.drop_index("businesses_subscription", "businesses", schema=S)
    for name in ("paused_by_billing", "paid_through", "past_due_since", "subscription_event_at", "subscription_id",
                 "customer_id", "checkout_session_id", "payment_capture"):
        op.drop_column("businesses", name, schema=S)
