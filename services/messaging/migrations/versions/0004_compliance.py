"""messaging: the compliance decision log (append-only) and the call slots counted against frequency caps

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

S = "messaging"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "compliance_decisions",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("channel", sa.Text, nullable=False),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("lead_id", Uuid),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("rule", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("code", sa.Text),
        sa.Column("message", sa.Text, nullable=False),
        sa.Column("not_before", Ts),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("reference", sa.Text),
        sa.Column("inputs", JSONB, nullable=False),
        sa.Column("decided_at", Ts, nullable=False),
        schema=S,
    )
    newest = [sa.text("decided_at DESC"), sa.text("id DESC")]
    op.create_index("compliance_decisions_business_newest", "compliance_decisions", ["business_id", *newest],
                    schema=S)
    op.create_index("compliance_decisions_phone_newest", "compliance_decisions", ["business_id", "phone", *newest],
                    schema=S)
    op.create_index("compliance_decisions_lead_newest", "compliance_decisions", ["business_id", "lead_id", *newest],
                    schema=S, postgresql_where=sa.text("lead_id IS NOT NULL"))
    # The log is evidence: nothing may change or delete a decision once written.
    op.execute(f"""
        CREATE FUNCTION {S}.compliance_decisions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'the compliance decision log is append-only';
        END $$""")
    op.execute(f"""
        CREATE TRIGGER compliance_decisions_append_only BEFORE UPDATE OR DELETE ON {S}.compliance_decisions
        FOR EACH ROW EXECUTE FUNCTION {S}.compliance_decisions_append_only()""")
    op.create_table(
        "call_slots",
        sa.Column("decision_id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("phone", sa.Text, nullable=False),
        sa.Column("placed_at", Ts, nullable=False),
        sa.Column("released_at", Ts),
        schema=S,
    )
    op.create_index("call_slots_callee", "call_slots", ["business_id", "phone", "placed_at"], schema=S,
                    postgresql_where=sa.text("released_at IS NULL"))


def downgrade() -> None:
    op.drop_table("call_slots", schema=S)
    op.execute(f"DROP TABLE {S}.compliance_decisions")
    op.execute(f"DROP FUNCTION {S}.compliance_decisions_append_only()")
