"""sdr: a business's availability (booking_availability) and the appointments booked on it (bookings), for the
bookings API and the agent's check_availability and book_appointment tools (services.sdr.bookings_domain)

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

S = "sdr"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "booking_availability",
        sa.Column("business_id", Uuid, primary_key=True),
        sa.Column("weekly_hours", JSONB, nullable=False),
        sa.Column("slot_minutes", sa.Integer, nullable=False),
        sa.Column("buffer_minutes", sa.Integer, nullable=False),
        sa.Column("blackout_dates", JSONB, nullable=False),
        sa.Column("horizon_days", sa.Integer, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S)
    op.create_table(
        "bookings",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("business_id", Uuid, nullable=False),
        sa.Column("starts_at", Ts, nullable=False),
        sa.Column("ends_at", Ts, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("phone_number", sa.Text, nullable=False),
        sa.Column("email", sa.Text),
        sa.Column("notes", sa.Text),
        sa.Column("lead_id", Uuid, sa.ForeignKey(f"{S}.leads.id", ondelete="SET NULL")),
        sa.Column("call_id", Uuid),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        schema=S)
    op.create_index("bookings_business_starts", "bookings",
                    ["business_id", sa.text("starts_at DESC"), sa.text("id DESC")], schema=S)
    op.create_index("bookings_business_confirmed", "bookings", ["business_id", "starts_at"], schema=S,
                    postgresql_where=sa.text("status = 'confirmed'"))


def downgrade() -> None:
    op.drop_table("bookings", schema=S)
    op.drop_table("booking_availability", schema=S)
