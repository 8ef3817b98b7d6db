"""agents: agents, versions, prompt history, phone numbers (and the pool), outbox, inbox

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

S = "agents"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("provider_assistant_id", sa.Text, nullable=False, unique=True),
        sa.Column("config", JSONB, nullable=False),
        sa.Column("metadata", JSONB, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("inbound_prompt_source", sa.Text, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("agents_business_created", "agents", ["business_id", "created_at"], schema=S)
    op.create_table(
        "agent_versions",
        sa.Column("agent_id", Uuid, sa.ForeignKey(f"{S}.agents.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("content_hash", sa.Text, nullable=False),
        sa.Column("config_snapshot", JSONB, nullable=False),
        sa.Column("parent_version", sa.Integer),
        sa.Column("rollback_of", sa.Integer),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("changed_fields", ARRAY(sa.Text), nullable=False),
        sa.Column("api_key_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_table(
        "prompt_history",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("agent_id", Uuid, sa.ForeignKey(f"{S}.agents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("field", sa.Text, nullable=False),
        sa.Column("previous", sa.Text),
        sa.Column("current", sa.Text),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("api_key_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("prompt_history_agent", "prompt_history", ["agent_id", "created_at"], schema=S)
    op.create_table(
        "phone_numbers",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("phone_number", sa.Text, nullable=False, unique=True),
        sa.Column("country", sa.Text, nullable=False),
        sa.Column("area_code", sa.Text, nullable=False),
        sa.Column("locality", sa.Text),
        sa.Column("capabilities", JSONB, nullable=False),
        sa.Column("blocked", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("block_reason", sa.Text),
        sa.Column("a2p_status", sa.Text, nullable=False),
        sa.Column("emergency_status", sa.Text, nullable=False),
        sa.Column("emergency_address", sa.Text),
        sa.Column("business_id", Uuid),
        sa.Column("agent_id", Uuid, sa.ForeignKey(f"{S}.agents.id", ondelete="SET NULL")),
        sa.Column("provider_phone_number_id", sa.Text),
        sa.Column("assigned_at", Ts),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("phone_numbers_business", "phone_numbers", ["business_id"], schema=S)
    op.create_index("phone_numbers_pool", "phone_numbers", ["country", "area_code"], schema=S,
                    postgresql_where=sa.text("business_id IS NULL"))
    create_event_tables(S)


def downgrade() -> None:
    drop_event_tables(S)
    for table in ("phone_numbers", "prompt_history", "agent_versions", "agents"):
        op.drop_table(table, schema=S)
