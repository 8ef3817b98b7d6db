"""Tables of the sdr schema."""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY, UUID

from core.inbox import inbox_table
from core.outbox import outbox_table

SCHEMA = "sdr"
metadata = sa.MetaData(schema=SCHEMA)
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)

# Text fields of a lead, as the API names them.
LEAD_TEXT = ("name", "first_name", "last_name", "email", "phone", "zip", "address", "city", "state", "source_url",
             "source_page", "notes", "message", "event_date", "event_type", "agent_name")

leads = sa.Table(
    "leads", metadata,
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
)

interactions = sa.Table(
    "interactions", metadata,
    sa.Column("id", sa.BigInteger, sa.Identity(), primary_key=True),
    sa.Column("lead_id", Uuid, sa.ForeignKey(leads.c.id, ondelete="CASCADE"), nullable=False),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("channel", sa.Text, nullable=False),
    sa.Column("direction", sa.Text, nullable=False),
    sa.Column("reference", sa.Text, nullable=False),
    sa.Column("intent", sa.Text),
    sa.Column("occurred_at", Ts, nullable=False),
    sa.UniqueConstraint("lead_id", "reference", name="interactions_once"),
)

# Voicemails left for a business (fed by voicemail.received events); "unhandled" until the
# business calls or texts that number back.
voicemails = sa.Table(
    "voicemails", metadata,
    sa.Column("id", Uuid, primary_key=True),
    sa.Column("business_id", Uuid, nullable=False),
    sa.Column("lead_id", Uuid),
    sa.Column("call_id", sa.Text),
    sa.Column("from_number", sa.Text),
    sa.Column("transcript", sa.Text),
    sa.Column("recording_url", sa.Text),
    sa.Column("received_at", Ts, nullable=False),
)

# Every list is one business's leads newest first; each filter gets an index leading with it.
_newest = (leads.c.created_at.desc(), leads.c.id.desc())
sa.Index("leads_business_created", leads.c.business_id, *_newest)
for _column in ("status", "source", "agent_id", "phone", "email"):
    sa.Index(f"leads_business_{_column}", leads.c.business_id, leads.c[_column], *_newest)
sa.Index("leads_business_updated", leads.c.business_id, leads.c.updated_at)
sa.Index("leads_business_score", leads.c.business_id, leads.c.score, *_newest)
sa.Index("interactions_lead", interactions.c.lead_id, interactions.c.occurred_at)
sa.Index("voicemails_business_received", voicemails.c.business_id, voicemails.c.received_at)

outbox = outbox_table(metadata, SCHEMA)
inbox = inbox_table(metadata, SCHEMA)
