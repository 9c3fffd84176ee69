"""Turn leases on conversations (one turn at a time across workers) and the service's API keys."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``conversations.lease_holder`` / ``lease_expires_ms`` and create ``api_keys``."""
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("lease_holder", sa.String(128), nullable=True))
        batch.add_column(sa.Column("lease_expires_ms", sa.BigInteger(), nullable=True))
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("tenant", sa.String(255), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("label", sa.String(255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_api_keys"),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant"])


def downgrade() -> None:
    """Drop ``api_keys`` and the lease columns."""
    op.drop_index("ix_api_keys_tenant", table_name="api_keys")
    op.drop_table("api_keys")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("lease_expires_ms")
        batch.drop_column("lease_holder")
