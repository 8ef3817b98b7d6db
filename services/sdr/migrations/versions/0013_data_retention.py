"""sdr: what the retention a business set deletes, found oldest first (issue 56)

Partial indexes over what services.sdr.data_retention has still to delete: voicemails' transcripts and recording
links, and the words of ended text touches (communication_jobs.context's body).

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None
SCHEMA = "sdr"


def upgrade() -> None:
    op.create_index("voicemails_transcribed", "voicemails", ["business_id", "received_at"], schema=SCHEMA,
                    postgresql_where=sa.text("transcript IS NOT NULL"))
    op.create_index("voicemails_recorded", "voicemails", ["business_id", "received_at"], schema=SCHEMA,
                    postgresql_where=sa.text("recording_url IS NOT NULL"))
    op.create_index("communication_jobs_bodies", "communication_jobs", ["business_id", "ended_at"], schema=SCHEMA,
                    postgresql_where=sa.text("context ? 'body' AND ended_at IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("communication_jobs_bodies", table_name="communication_jobs", schema=SCHEMA)
    op.drop_index("voicemails_recorded", table_name="voicemails", schema=SCHEMA)
    op.drop_index("voicemails_transcribed", table_name="voicemails", schema=SCHEMA)
