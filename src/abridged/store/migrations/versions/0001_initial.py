"""First schema: conversations, summaries, sessions, messages, compactions."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_BIG = sa.BigInteger()
_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_STAMP = sa.DateTime(timezone=True)


def _usage_columns() -> list[sa.Column[int]]:
    return [
        sa.Column("input_tokens", _BIG, nullable=True),
        sa.Column("output_tokens", _BIG, nullable=True),
        sa.Column("cache_read_tokens", _BIG, nullable=True),
        sa.Column("cache_write_tokens", _BIG, nullable=True),
        sa.Column("reasoning_tokens", _BIG, nullable=True),
    ]


def upgrade() -> None:
    """Create every table of the first schema."""
    op.create_table(
        "conversations",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("next_seq", _BIG, nullable=False),
        sa.Column("current_session_id", sa.String(64), nullable=True),
        sa.Column("prune_boundary", _BIG, nullable=False),
        sa.Column("resummarize_from", _BIG, nullable=True),
        sa.Column("created_at", _STAMP, nullable=False),
        sa.Column("updated_at", _STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_conversations"),
    )
    op.create_index("ix_conversations_owner", "conversations", ["owner"])
    op.create_table(
        "summaries",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("meta", sa.Text(), nullable=False),
        sa.Column("covers_to_seq", _BIG, nullable=False),
        sa.Column("embedding", sa.Text(), nullable=True),
        sa.Column("embedder", sa.String(255), nullable=True),
        sa.Column("created_at", _STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_summaries"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_summaries_conversation_id_conversations",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_summaries_conversation_id", "summaries", ["conversation_id"])
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.String(64), nullable=True),
        sa.Column("reason", sa.String(16), nullable=False),
        sa.Column("start_summary_id", sa.String(64), nullable=True),
        sa.Column("carry_from", _BIG, nullable=False),
        sa.Column("start_seq", _BIG, nullable=False),
        sa.Column("segments", sa.Text(), nullable=False),
        sa.Column("final_summary_id", sa.String(64), nullable=True),
        sa.Column("finalized_at", _STAMP, nullable=True),
        sa.Column("message_count", sa.Integer(), nullable=True),
        *_usage_columns(),
        sa.Column("created_at", _STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_sessions"),
        sa.UniqueConstraint("conversation_id", "number", name="uq_sessions_conversation_id"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_sessions_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["parent_id"],
            ["sessions.id"],
            name="fk_sessions_parent_id_sessions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["start_summary_id"],
            ["summaries.id"],
            name="fk_sessions_start_summary_id_summaries",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["final_summary_id"],
            ["summaries.id"],
            name="fk_sessions_final_summary_id_summaries",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_sessions_conversation_id", "sessions", ["conversation_id"])
    op.create_index("ix_sessions_parent_id", "sessions", ["parent_id"])
    op.create_table(
        "messages",
        sa.Column("pk", _KEY, autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("seq", _BIG, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("parts", sa.Text(), nullable=False),
        sa.Column("meta", sa.Text(), nullable=True),
        *_usage_columns(),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("ttft_ms", sa.Float(), nullable=True),
        sa.Column("total_ms", sa.Float(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", _STAMP, nullable=False),
        sa.PrimaryKeyConstraint("pk", name="pk_messages"),
        sa.UniqueConstraint(
            "conversation_id", "seq", "version", name="uq_messages_conversation_id"
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_messages_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name="fk_messages_session_id_sessions",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_messages_session_seq", "messages", ["session_id", "seq"])
    op.create_table(
        "compactions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("session_id", sa.String(64), nullable=False),
        sa.Column("child_session_id", sa.String(64), nullable=False),
        sa.Column("summary_id", sa.String(64), nullable=True),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("tokens_before", _BIG, nullable=False),
        sa.Column("tokens_after", _BIG, nullable=False),
        sa.Column("cut_seq", _BIG, nullable=False),
        sa.Column("file_ops", sa.Text(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("summarizer", sa.String(255), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", _STAMP, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_compactions"),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name="fk_compactions_conversation_id_conversations",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name="fk_compactions_session_id_sessions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["child_session_id"],
            ["sessions.id"],
            name="fk_compactions_child_session_id_sessions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["summary_id"],
            ["summaries.id"],
            name="fk_compactions_summary_id_summaries",
            ondelete="SET NULL",
        ),
    )
    op.create_index("ix_compactions_conversation_id", "compactions", ["conversation_id"])


def downgrade() -> None:
    """Drop every table of the first schema."""
    for table in ("compactions", "messages", "sessions", "summaries", "conversations"):
        op.drop_table(table)
