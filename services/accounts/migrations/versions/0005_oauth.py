"""accounts: OAuth sign-in for the assistant connector (clients, grants, codes, refresh tokens)

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, UUID

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

S = "accounts"
Uuid = UUID(as_uuid=False)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "oauth_clients",
        sa.Column("client_id", sa.Text, primary_key=True),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("client_name", sa.Text),
        sa.Column("client_uri", sa.Text),
        sa.Column("redirect_uris", ARRAY(sa.Text), nullable=False),
        sa.Column("grant_types", ARRAY(sa.Text), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("fetched_at", Ts),
        schema=S,
    )
    op.create_table(
        "oauth_grants",
        sa.Column("id", Uuid, primary_key=True),
        sa.Column("account_id", Uuid, sa.ForeignKey(f"{S}.users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("client_id", sa.Text, sa.ForeignKey(f"{S}.oauth_clients.client_id"), nullable=False),
        sa.Column("scopes", ARRAY(sa.Text), nullable=False),
        sa.Column("business_ids", ARRAY(Uuid), nullable=False),
        sa.Column("resource", sa.Text, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("last_used_at", Ts),
        sa.Column("revoked_at", Ts),
        schema=S,
    )
    op.create_index("oauth_grants_account", "oauth_grants", ["account_id"], schema=S,
                    postgresql_where=sa.text("revoked_at IS NULL"))
    op.create_table(
        "oauth_codes",
        sa.Column("code_hash", sa.Text, primary_key=True),
        sa.Column("grant_id", Uuid, sa.ForeignKey(f"{S}.oauth_grants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("code_challenge", sa.Text, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.Column("used_at", Ts),
        schema=S,
    )
    op.create_index("oauth_codes_grant", "oauth_codes", ["grant_id"], schema=S)
    op.create_table(
        "oauth_refresh_tokens",
        sa.Column("token_hash", sa.Text, primary_key=True),
        sa.Column("grant_id", Uuid, sa.ForeignKey(f"{S}.oauth_grants.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("expires_at", Ts, nullable=False),
        sa.Column("used_at", Ts),
        schema=S,
    )
    op.create_index("oauth_refresh_tokens_grant", "oauth_refresh_tokens", ["grant_id"], schema=S)


def downgrade() -> None:
    for table in ("oauth_refresh_tokens", "oauth_codes", "oauth_grants", "oauth_clients"):
        op.drop_table(table, schema=S)
