"""agents: numbers bought from the SMS provider (their reference there, when they went into the pool) and the
stock kept of them per country and area code (services.agents.stock)

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op

from core.columns import Ts, Uuid

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None
S = "agents"


def upgrade() -> None:
    op.add_column("phone_numbers", sa.Column("provider_ref", sa.Text), schema=S)
    op.add_column("phone_numbers", sa.Column("pooled_at", Ts), schema=S)
    op.create_table(
        "number_stock",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("country", sa.Text, nullable=False),
        sa.Column("area_code", sa.Text, nullable=False),
        sa.Column("state", sa.Text, nullable=False),
        sa.Column("requested_at", Ts, nullable=False),
        sa.Column("demand_at", Ts, nullable=False),
        sa.Column("checked_at", Ts),
        sa.Column("message", sa.Text),
        sa.Column("lease_token", Uuid),
        sa.Column("lease_until", Ts),
        sa.UniqueConstraint("country", "area_code", name="number_stock_place"),
        schema=S)


def downgrade() -> None:
    op.drop_table("number_stock", schema=S)
    op.drop_column("phone_numbers", "pooled_at", schema=S)
    op.drop_column("phone_numbers", "provider_ref", schema=S)
