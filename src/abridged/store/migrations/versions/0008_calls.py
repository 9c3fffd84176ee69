"""The model calls of each conversation (the call inspector): ``calls``.

Before this revision the service kept what each model call sent in the worker's memory: a restart
lost it and another worker never saw it. A call is stored as references to rows the store holds
already (a message, its pruned form, a summary), with its tokens by message and the provider's
usage; a copy is kept only of what no other row holds (the system prompt, a clipped tool result).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create ``calls``."""
    op.create_table(
        "calls",
        sa.Column("pk", _KEY, autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("number", sa.BigInteger(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("estimate", sa.BigInteger(), nullable=False),
        sa.Column("tools", sa.BigInteger(), nullable=False),
        sa.Column("usage", sa.Text(), nullable=True),
        sa.Column("retry", sa.Boolean(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("sent", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_calls"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_calls_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("conversation_id", "number", name="uq_calls_conversation_id"),
    )


def downgrade() -> None:
    """Drop ``calls`` (what the inspector showed of earlier calls is lost; nothing else)."""
    op.drop_table("calls")
