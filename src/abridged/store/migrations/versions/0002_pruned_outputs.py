"""Pruned outputs: the pruned form of each message, so that every worker sends the same bytes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create ``pruned_outputs``."""
    op.create_table(
        "pruned_outputs",
        sa.Column("pk", _KEY, autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("call_ids", sa.Text(), nullable=False),
        sa.Column("parts", sa.Text(), nullable=False),
        sa.Column("meta", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_pruned_outputs"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_pruned_outputs_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("conversation_id", "seq", name="uq_pruned_outputs_conversation_id"),
    )


def downgrade() -> None:
    """Drop ``pruned_outputs``."""
    op.drop_table("pruned_outputs")
