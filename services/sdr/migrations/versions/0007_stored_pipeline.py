"""sdr: each lead's pipeline segment and next action stored with the instant the clock may change them, and its
inbound times kept on the lead by a trigger on interactions

The pipeline read no longer segments every lead of a business on every request: a lead's segment (its rank in
pipeline_domain.SEGMENTS) and its next action without the compliance facts are stored with pipeline_until (when
the clock alone may change them: pipeline_domain.steady_until) and computed again by the next read after it. A
trigger makes a change of any signal the segment reads (pipeline_signals_changed) due at once and bumps
pipeline_stamp, which a read writes back against so a result computed from older signals is never stored.

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

S = "sdr"
Ts = sa.DateTime(timezone=True)
# The lead columns the segment and next action read (pipeline_domain.Signals); a change of any of them makes the
# stored values due.
SIGNALS = ("status", "source", "created_at", "updated_at", "touch_count", "last_touch_at", "paused", "phone", "email",
           "last_inbound_call_at", "last_inbound_at", "first_inbound_at")


def upgrade() -> None:
    for name in ("last_inbound_call_at", "last_inbound_at", "first_inbound_at"):
        op.add_column("leads", sa.Column(name, Ts), schema=S)
    op.add_column("leads", sa.Column("pipeline_segment", sa.SmallInteger), schema=S)
    op.add_column("leads", sa.Column("pipeline_next", sa.Text), schema=S)
    op.add_column("leads", sa.Column("pipeline_until", Ts, nullable=False, server_default=sa.text("'epoch'")),
                  schema=S)
    op.add_column("leads", sa.Column("pipeline_stamp", sa.BigInteger, nullable=False, server_default="0"), schema=S)
    op.execute(f"""
        UPDATE {S}.leads l SET last_inbound_call_at = i.last_call, last_inbound_at = i.last_any,
                               first_inbound_at = i.first_any
        FROM (SELECT lead_id, max(occurred_at) FILTER (WHERE channel = 'call') AS last_call,
                     max(occurred_at) AS last_any, min(occurred_at) AS first_any
              FROM {S}.interactions WHERE direction = 'inbound' GROUP BY lead_id) i
        WHERE i.lead_id = l.id
    """)
    op.execute(f"""
        CREATE FUNCTION {S}.pipeline_inbound() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE {S}.leads SET
                last_inbound_at = GREATEST(last_inbound_at, NEW.occurred_at),
                first_inbound_at = LEAST(first_inbound_at, NEW.occurred_at),
                last_inbound_call_at = CASE WHEN NEW.channel = 'call'
                    THEN GREATEST(last_inbound_call_at, NEW.occurred_at) ELSE last_inbound_call_at END
            WHERE id = NEW.lead_id;
            RETURN NULL;
        END $$
    """)
    op.execute(f"""
        CREATE TRIGGER interactions_pipeline_inbound AFTER INSERT ON {S}.interactions
            FOR EACH ROW WHEN (NEW.direction = 'inbound') EXECUTE FUNCTION {S}.pipeline_inbound()
    """)
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in SIGNALS)
    op.execute(f"""
        CREATE FUNCTION {S}.pipeline_signals_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.pipeline_until := 'epoch';
            NEW.pipeline_stamp := OLD.pipeline_stamp + 1;
            RETURN NEW;
        END $$
    """)
    op.execute(f"""
        CREATE TRIGGER leads_pipeline_signals BEFORE UPDATE ON {S}.leads
            FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {S}.pipeline_signals_changed()
    """)
    # The page (by segment, hottest first), its counts (index-only: small, as btree deduplicates the values), and
    # the leads due for computing.
    op.create_index("leads_business_pipeline", "leads",
                    ["business_id", "pipeline_segment", sa.text("score DESC"), sa.text("created_at DESC"),
                     sa.text("id DESC")], schema=S)
    op.create_index("leads_business_pipeline_next", "leads", ["business_id", "pipeline_next"], schema=S)
    op.create_index("leads_business_pipeline_until", "leads", ["business_id", "pipeline_until"], schema=S)


def downgrade() -> None:
    op.drop_index("leads_business_pipeline_until", "leads", schema=S)
    op.drop_index("leads_business_pipeline_next", "leads", schema=S)
    op.drop_index("leads_business_pipeline", "leads", schema=S)
    op.execute(f"DROP TRIGGER leads_pipeline_signals ON {S}.leads")
    op.execute(f"DROP FUNCTION {S}.pipeline_signals_changed()")
    op.execute(f"DROP TRIGGER interactions_pipeline_inbound ON {S}.interactions")
    op.execute(f"DROP FUNCTION {S}.pipeline_inbound()")
    for name in ("pipeline_stamp", "pipeline_until", "pipeline_next", "pipeline_segment", "first_inbound_at",
                 "last_inbound_at", "last_inbound_call_at"):
        op.drop_column("leads", name, schema=S)
