"""messaging: what the retention a business set redacts (issue 56)

A text's redaction is marked (messages.redacted_at: its body "" here, its body and media gone at the provider; a
photo alone has no body to tell it by), and what each kind has still to redact is found oldest first by a partial
index (services.messaging.data_retention). The evidence's redaction is the one its triggers already let through
(an erasure's, 0014: the number replaced by its suppression hash, the content dropped), so they are unchanged.

Revision ID: 0015
Revises: 0014
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None
SCHEMA = "messaging"
UNHASHED = sa.text("phone NOT LIKE 'hmac-sha256:%'")


def upgrade() -> None:
    op.add_column("messages", sa.Column("redacted_at", Ts), schema=SCHEMA)
    op.create_index("messages_unredacted", "messages", ["business_id", "created_at"], schema=SCHEMA,
                    postgresql_where=sa.text("redacted_at IS NULL"))
    op.create_index("emails_unredacted", "emails", ["business_id", "created_at"], schema=SCHEMA,
                    postgresql_where=sa.text("body <> ''"))
    op.create_index("consent_events_unredacted", "consent_events", ["business_id", "created_at"], schema=SCHEMA,
                    postgresql_where=UNHASHED)
    op.create_index("compliance_decisions_unredacted", "compliance_decisions", ["business_id", "decided_at"],
                    schema=SCHEMA, postgresql_where=UNHASHED)


def downgrade() -> None:
    for index, table in (("compliance_decisions_unredacted", "compliance_decisions"),
                         ("consent_events_unredacted", "consent_events"), ("emails_unredacted", "emails"),
                         ("messages_unredacted", "messages")):
        op.drop_index(index, table_name=table, schema=SCHEMA)
    op.drop_column("messages", "redacted_at", schema=SCHEMA)
