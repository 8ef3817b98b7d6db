"""sdr: when a lead became converted (converted_at), kept by a trigger on every write of its status: a purchase is
the established business relationship the national do-not-call registry exempts for 18 months

Leads converted before this migration get their updated_at, the latest write known (their conversion was no later).

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

S = "sdr"


def upgrade() -> None:
    op.add_column("leads", sa.Column("converted_at", sa.DateTime(timezone=True)), schema=S)
    op.execute(f"UPDATE {S}.leads SET converted_at = updated_at WHERE status = 'converted'")
    # The write's own updated_at (the service's clock, as every other time of the lead), else the transaction's.
    op.execute(f"""
        CREATE FUNCTION {S}.lead_converted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.converted_at := COALESCE(NEW.updated_at, now());
            RETURN NEW;
        END $$
    """)
    op.execute(f"""
        CREATE TRIGGER leads_converted_insert BEFORE INSERT ON {S}.leads
            FOR EACH ROW WHEN (NEW.status = 'converted') EXECUTE FUNCTION {S}.lead_converted()
    """)
    op.execute(f"""
        CREATE TRIGGER leads_converted_update BEFORE UPDATE OF status ON {S}.leads
            FOR EACH ROW WHEN (NEW.status = 'converted' AND OLD.status IS DISTINCT FROM 'converted')
            EXECUTE FUNCTION {S}.lead_converted()
    """)


def downgrade() -> None:
    op.execute(f"DROP TRIGGER leads_converted_update ON {S}.leads")
    op.execute(f"DROP TRIGGER leads_converted_insert ON {S}.leads")
    op.execute(f"DROP FUNCTION {S}.lead_converted()")
    op.drop_column("leads", "converted_at", schema=S)
