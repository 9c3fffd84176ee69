"""Conversation names scoped to their owner: ``conversations.name`` and a unique index on
(owner, name).

Before this revision a conversation's id was global: a tenant of the HTTP service creating a
conversation under another tenant's id was refused, which told it the id existed. From now on
the id a tenant uses is the conversation's ``name``, unique per owner, and the storage key
(``conversations.id``, which every other table refers to) may differ from it. Nothing stored is
renamed or moved: every existing conversation gets its own key as its name, so each owner
reaches its conversations under the same ids as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``conversations.name`` (filled with each row's id) and
    ``uq_conversations_owner_name``."""
    # NULL-able: SQLite adds a NOT NULL column only by rebuilding the table, and rebuilding a
    # table that others refer to with ON DELETE CASCADE risks their rows; the store writes a
    # name on every insert
    op.add_column("conversations", sa.Column("name", sa.String(64), nullable=True))
    op.execute("UPDATE conversations SET name = id")
    op.create_index("uq_conversations_owner_name", "conversations", ["owner", "name"], unique=True)


def downgrade() -> None:
    """Drop ``uq_conversations_owner_name`` and ``conversations.name``. A conversation whose
    name differs from its key (made after this revision) is then reachable only by its key."""
    op.drop_index("uq_conversations_owner_name", table_name="conversations")
    # SQLite's own DROP COLUMN (3.35+), not alembic's batch copy: dropping the old table with
    # foreign keys on would delete every session and message through ON DELETE CASCADE
    op.execute("ALTER TABLE conversations DROP COLUMN name")
