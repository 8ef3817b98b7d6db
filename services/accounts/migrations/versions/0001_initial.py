"""accounts: users, businesses, keys, sessions, signup attempts, usage log, outbox, inbox

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

from core.migrations import create_event_tables, drop_event_tables

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "accounts"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("email", sa.Text, nullable=False, unique=True),
        sa.Column("email_confirmed_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_table(
        "businesses",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("account_id", Uuid, sa.ForeignKey(f"{S}.users.id"), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("lifecycle_state", sa.Text, nullable=False),
        sa.Column("metadata", JSONB, nullable=False),
        sa.Column("external_ref", sa.Text),
        sa.Column("business_type", sa.Text),
        sa.Column("website", sa.Text),
        sa.Column("phone_forward_to", sa.Text),
        sa.Column("plan_id", sa.Text, nullable=False),
        sa.Column("subscription_status", sa.Text, nullable=False),
        sa.Column("trial_ends_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("businesses_account_created", "businesses", ["account_id", sa.text("created_at DESC")], schema=S)
    op.create_table(
        "api_keys",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("account_id", Uuid, sa.ForeignKey(f"{S}.users.id"), nullable=False),
        sa.Column("business_id", Uuid, sa.ForeignKey(f"{S}.businesses.id")),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("prefix", sa.Text, nullable=False),
        sa.Column("key_hash", sa.Text, nullable=False, unique=True),
        sa.Column("scopes", ARRAY(sa.Text), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("last_used_at", Ts),
        sa.Column("expires_at", Ts),
        sa.Column("revoked_at", Ts),
        schema=S,
    )
    op.create_index("api_keys_account", "api_keys", ["account_id"], schema=S)
    op.create_table(
        "magic_links",
        sa.Column("token_hash", sa.Text, primary_key=True),
        sa.Column("account_id", Uuid, sa.ForeignKey(f"{S}.users.id"), nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.Column("used_at", Ts),
        schema=S,
    )
    op.create_table(
        "sessions",
        sa.Column("token_hash", sa.Text, primary_key=True),
        sa.Column("account_id", Uuid, sa.ForeignKey(f"{S}.users.id"), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        schema=S,
    )
    op.create_table(
        "signup_attempts",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("client_ip", sa.Text, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("signup_attempts_ip_time", "signup_attempts", ["client_ip", "created_at"], schema=S)
    op.create_table(
        "usage_log",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("account_id", Uuid, nullable=False),
        sa.Column("business_id", Uuid),
        sa.Column("api_key_id", Uuid, nullable=False),
        sa.Column("endpoint", sa.Text, nullable=False),
        sa.Column("method", sa.Text, nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("call_id", sa.Text),
        sa.Column("cost_cents", sa.Integer, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("usage_log_account_created", "usage_log", ["account_id", sa.text("created_at DESC")], schema=S)
    create_event_tables(S)


def downgrade() -> None:
    drop_event_tables(S)
    for table in ("usage_log", "signup_attempts", "sessions", "magic_links", "api_keys", "businesses", "users"):
        op.drop_table(table, schema=S)
