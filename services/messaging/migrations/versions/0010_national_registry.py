"""messaging: the national do-not-call registry as the operator imports it (services.messaging.registry): its
numbers (a bigint of the ten digits each), each area code's last refresh, and the files imported

Revision ID: 0010
Revises: 0009
"""
import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

S = "messaging"
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table("national_dnc", sa.Column("number", sa.BigInteger, primary_key=True), schema=S)
    op.create_table(
        "national_dnc_areas",
        sa.Column("area_code", sa.SmallInteger, primary_key=True),
        sa.Column("refreshed_at", Ts, nullable=False),
        sa.Column("file", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("numbers", sa.BigInteger, nullable=False),
        schema=S)
    op.create_table(
        "national_dnc_files",
        sa.Column("name", sa.Text, primary_key=True),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("numbers", sa.BigInteger, nullable=False),
        sa.Column("problems", sa.BigInteger, nullable=False),
        sa.Column("imported_at", Ts, nullable=False),
        schema=S)


def downgrade() -> None:
    op.drop_table("national_dnc_files", schema=S)
    op.drop_table("national_dnc_areas", schema=S)
    op.drop_table("national_dnc", schema=S)
