"""sdr: leads (with an index per list filter), interactions, voicemails, outbox, inbox

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from core.migrations import create_event_tables, drop_event_tables

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

S = "sdr"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)
LEAD_TEXT = ("name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "source_url",
             "source_page", "notes", "message", "event_date", "event_type", "agent_name")


def upgrade() -> None:
    op.create_table(
        "leads",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        *(sa.Column(name, sa.Text) for name in LEAD_TEXT),
        sa.Column("agent_id", Uuid),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("score_confidence", sa.Text, nullable=False),
        sa.Column("score_explanation", sa.Text, nullable=False),
        sa.Column("score_factors", ARRAY(sa.Text), nullable=False),
        sa.Column("intent", sa.Text),
        sa.Column("interaction_count", sa.Integer, nullable=False, server_default="0"),
        sa.Column("last_activity_at", Ts, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S,
    )
    # Every list is one business's leads newest first; each filter gets an index leading with it.
    newest = [sa.text("created_at DESC"), sa.text("id DESC")]
    op.create_index("leads_business_created", "leads", ["business_id", *newest], schema=S)
    for column in ("status", "source", "agent_id", "phone", "email"):
        op.create_index(f"leads_business_{column}", "leads", ["business_id", column, *newest], schema=S)
    op.create_index("leads_business_updated", "leads", ["business_id", "updated_at"], schema=S)
    op.create_index("leads_business_score", "leads", ["business_id", "score", *newest], schema=S)
    op.create_table(
        "interactions",
        sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
        sa.Column("lead_id", Uuid, sa.ForeignKey(f"{S}.leads.id", ondelete="CASCADE"), nullable=False),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("direction", sa.Text, nullable=False),
        sa.Column("reference", sa.Text, nullable=False),
        sa.Column("intent", sa.Text),
        sa.Column("occurred_at", Ts, nullable=False),
        sa.UniqueConstraint("lead_id", "reference", name="interactions_once"),
        schema=S,
    )
    op.create_index("interactions_lead", "interactions", ["lead_id", "occurred_at"], schema=S)
    op.create_table(
        "voicemails",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("lead_id", Uuid),
        sa.Column("call_id", sa.Text),
        sa.Column("from_number", sa.Text),
        sa.Column("transcript", sa.Text),
        sa.Column("recording_url", sa.Text),
        sa.Column("received_at", Ts, nullable=False),
        schema=S,
    )
    op.create_index("voicemails_business_received", "voicemails", ["business_id", "received_at"], schema=S)
    create_event_tables(S)


def downgrade() -> None:
    drop_event_tables(S)
    for table in ("voicemails", "interactions", "leads"):
        op.drop_table(table, schema=S)
