"""webhooks: an event's deliveries found by its id, replays too (the retention a business set: issue 56)

The retention a business set (services.webhooks.data_retention) keeps an event with a delivery pending and deletes
an old event's deliveries with it: both look the deliveries up by event id, replays included (deliveries_once
leaves replays out).

Revision ID: 0004
Revises: 0003
"""
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
SCHEMA = "webhooks"


def upgrade() -> None:
    op.create_index("deliveries_event", "deliveries", ["event_id"], schema=SCHEMA, if_not_exists=True)


def downgrade() -> None:
    op.drop_index("deliveries_event", table_name="deliveries", schema=SCHEMA)
