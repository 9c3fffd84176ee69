"""The last request of each conversation as its surface saw it: ``last_requests``.

Before this revision the proxy kept each conversation's last request line (what abridged did,
the tokens sent) in the worker's memory: its index page showed nothing of it after a restart,
and estimating every listed conversation's context instead cost a read of each one. One row per
conversation, replaced at each request: the line's figures as JSON, and when it ended.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``last_requests``."""
    op.create_table(
        "last_requests",
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("conversation_id", name="pk_last_requests"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_last_requests_conversation_id_conversations",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    """Drop ``last_requests`` (the index shows no last request until the next one; nothing
    else is lost)."""
    op.drop_table("last_requests")
