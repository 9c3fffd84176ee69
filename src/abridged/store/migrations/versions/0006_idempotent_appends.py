"""Idempotent appends: ``messages.idempotency_key`` and a unique index on it per conversation.

A database may already hold the same chosen message id twice in a conversation (two workers
appended a client's retry at once on PostgreSQL before this revision). Nothing stored is deleted
or renamed: the earliest row of each (conversation, message id) gets the key, the later copies
keep a NULL key and stay out of the unique index (they are still read as before); every append
from now on finds the earliest one.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``messages.idempotency_key``, fill it for the first version-0 row of each message id
    and create ``uq_messages_conversation_key``."""
    op.add_column("messages", sa.Column("idempotency_key", sa.String(255), nullable=True))
    # the derived table keeps MySQL-style self-reference rules out of it and works on both
    op.execute(
        "UPDATE messages SET idempotency_key = message_id WHERE pk IN ("
        " SELECT first_pk FROM ("
        "  SELECT MIN(pk) AS first_pk FROM messages WHERE version = 0"
        "  GROUP BY conversation_id, message_id"
        " ) AS firsts"
        ")"
    )
    op.create_index(
        "uq_messages_conversation_key",
        "messages",
        ["conversation_id", "idempotency_key"],
        unique=True,
    )


def downgrade() -> None:
    """Drop ``uq_messages_conversation_key`` and ``messages.idempotency_key``."""
    op.drop_index("uq_messages_conversation_key", table_name="messages")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("idempotency_key")
