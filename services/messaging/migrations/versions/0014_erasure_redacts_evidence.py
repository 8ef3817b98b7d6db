"""messaging: the evidence logs let an erasure's redaction through (issue 56)

consent_events and compliance_decisions stay append-only, but for the one update a person's erasure makes
(services.messaging.erasure): their number replaced by its suppression hash, what they said redacted (a consent
event's note; the number in a decision's message replaced by the hash), every other column unchanged
(schema.CONSENT_ERASURE, schema.DECISION_ERASURE). Deletes stay refused.

Revision ID: 0014
Revises: 0013
"""
from alembic import op

from services.messaging.schema import (
    CONSENT_ERASURE,
    CONSENT_REFUSAL,
    DECISION_ERASURE,
    DECISIONS_REFUSAL,
    append_only_function,
    compliance_decisions,
    consent_events,
)

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(append_only_function(consent_events, CONSENT_REFUSAL, CONSENT_ERASURE))
    op.execute(append_only_function(compliance_decisions, DECISIONS_REFUSAL, DECISION_ERASURE))


def downgrade() -> None:
    op.execute(append_only_function(consent_events, CONSENT_REFUSAL, None))
    op.execute(append_only_function(compliance_decisions, DECISIONS_REFUSAL, None))
