"""An index on messages by conversation and message id: a turn's lease reads its message by id."""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create ``ix_messages_conversation_message``."""
    op.create_index(
        "ix_messages_conversation_message", "messages", ["conversation_id", "message_id"]
    )


def downgrade() -> None:
    """Drop ``ix_messages_conversation_message``."""
    op.drop_index("ix_messages_conversation_message", table_name="messages")
