"""messaging: conversations, messages, consent events (append-only), do-not-call entries, outbox, inbox

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

from core.migrations import create_event_tables, drop_event_tables

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "messaging"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("business_number", sa.Text, nullable=False),
        sa.Column("contact_number", sa.Text, nullable=False),
        sa.Column("agent_id", Uuid),
        sa.Column("lead_id", Uuid),
        sa.Column("inbound_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("outbound_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("unread_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_message_at", Ts, nullable=False),
        sa.Column("last_message_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        sa.UniqueConstraint("business_id", "business_number", "contact_number", name="conversations_one_per_pair"),
        schema=S,
    )
    op.create_index("conversations_business_latest", "conversations",
                    ["business_id", sa.text("last_message_at DESC"), sa.text("id DESC")], schema=S)
    op.create_table(
        "messages",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("conversation_id", Uuid, sa.ForeignKey(f"{S}.conversations.id"), nullable=False),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("direction", sa.Text, nullable=False),
        sa.Column("from_number", sa.Text, nullable=False),
        sa.Column("to_number", sa.Text, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("provider_sid", sa.Text, unique=True),
        sa.Column("error_code", sa.Text),
        sa.Column("error_message", sa.Text),
        sa.Column("agent_id", Uuid),
        sa.Column("lead_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    newest = [sa.text("created_at DESC"), sa.text("id DESC")]
    op.create_index("messages_conversation_newest", "messages", ["conversation_id", *newest], schema=S)
    op.create_index("messages_business_newest", "messages", ["business_id", *newest], schema=S)
    op.create_table(
        "consent_events",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("actor", sa.Text),
        sa.Column("reference", sa.Text),
        sa.Column("note", sa.Text),
        sa.Column("created_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("consent_events_phone", "consent_events", ["business_id", "phone", "id"], schema=S)
    # Consent history is evidence: nothing may change or delete it once written.
    op.execute(f"""
        CREATE FUNCTION {S}.consent_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'consent history is append-only';
        END $$""")
    op.execute(f"""
        CREATE TRIGGER consent_events_append_only BEFORE UPDATE OR DELETE ON {S}.consent_events
        FOR EACH ROW EXECUTE FUNCTION {S}.consent_events_append_only()""")
    op.create_table(
        "dnc_entries",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("added_by", sa.Text),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("removed_at", Ts),
        sa.Column("removed_reason", sa.Text),
        sa.Column("removed_by", sa.Text),
        schema=S,
    )
    op.create_index("dnc_entries_listed", "dnc_entries", ["business_id", "phone"], unique=True, schema=S,
                    postgresql_where=sa.text("removed_at IS NULL"))
    op.create_index("dnc_entries_business_newest", "dnc_entries", ["business_id", *newest], schema=S)
    create_event_tables(S)


def downgrade() -> None:
    drop_event_tables(S)
    op.drop_table("dnc_entries", schema=S)
    op.execute(f"DROP TABLE {S}.consent_events")
    op.execute(f"DROP FUNCTION {S}.consent_events_append_only()")
    op.drop_table("messages", schema=S)
    op.drop_table("conversations", schema=S)
