"""The database schema: conversations, sessions, summaries, messages, compactions, pruned
outputs, API keys, model calls and each conversation's last request."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names, so migrations can refer to them on both databases.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# A 64-bit key on PostgreSQL, SQLite's rowid alias there (it needs exactly INTEGER PRIMARY KEY).
BigKey = BigInteger().with_variant(Integer(), "sqlite")
Stamp = DateTime(timezone=True)


class Base(DeclarativeBase):
    """Declarative base of the store's tables (JSON payloads are TEXT, decoded per row)."""

    metadata = MetaData(naming_convention=NAMING)


class ConversationRow(Base):
    """One conversation; ``version`` is the single writer's compare-and-swap counter."""

    __tablename__ = "conversations"
    __table_args__ = (
        # an owner's names are its own: two tenants may each have a conversation named "c1"
        # (under two keys); NULL owners never collide, on both databases
        Index("uq_conversations_owner_name", "owner", "name", unique=True),
    )

    #: the storage key every other table refers to (never shown to a tenant: see ``name``)
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    owner: Mapped[str | None] = mapped_column(String(255), index=True)
    # The id the owner calls the conversation by; the key itself for a conversation made
    # without a name and for every row from before migration 0007. Written on every insert;
    # NULL-able in the database only because SQLite cannot add a NOT NULL column to a table
    # other tables refer to without rebuilding it.
    name: Mapped[str | None] = mapped_column(String(64))
    model: Mapped[str | None] = mapped_column(String(255))
    settings: Mapped[str] = mapped_column(Text, default="{}")
    version: Mapped[int] = mapped_column(Integer, default=0)
    next_seq: Mapped[int] = mapped_column(BigInteger, default=1)
    # No foreign key: sessions refer to conversations, and a cycle would complicate deletes.
    current_session_id: Mapped[str | None] = mapped_column(String(64))
    prune_boundary: Mapped[int] = mapped_column(BigInteger, default=0)
    resummarize_from: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(Stamp)
    updated_at: Mapped[datetime] = mapped_column(Stamp)
    # The turn lease (one turn at a time across workers): who holds it and until when, in
    # milliseconds since the epoch (an integer compares the same on both databases).
    lease_holder: Mapped[str | None] = mapped_column(String(128))
    lease_expires_ms: Mapped[int | None] = mapped_column(BigInteger)


class SummaryRow(Base):
    """A summary, stored once and referred to by sessions and compactions."""

    __tablename__ = "summaries"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    text: Mapped[str] = mapped_column(Text)
    meta: Mapped[str] = mapped_column(Text, default="{}")
    # JSON: the sequence numbers of the messages before the cut sent verbatim with this summary
    # (pinned steps; the latest user message after the emergency path), and the files read and
    # modified up to it ({"read": [...], "modified": [...]}).
    carried_seqs: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    file_ops: Mapped[str] = mapped_column(Text, default="{}", server_default="{}")
    covers_to_seq: Mapped[int] = mapped_column(BigInteger)
    embedding: Mapped[str | None] = mapped_column(Text)
    embedder: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(Stamp)


class SessionRow(Base):
    """A view of a conversation: where its context starts and which messages it carries."""

    __tablename__ = "sessions"
    __table_args__ = (UniqueConstraint("conversation_id", "number"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    parent_id: Mapped[str | None] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    reason: Mapped[str] = mapped_column(String(16))
    start_summary_id: Mapped[str | None] = mapped_column(
        ForeignKey("summaries.id", ondelete="SET NULL")
    )
    carry_from: Mapped[int] = mapped_column(BigInteger)
    start_seq: Mapped[int] = mapped_column(BigInteger)
    # JSON list of [session_id, lo, hi): the ancestors' messages this session carries.
    segments: Mapped[str] = mapped_column(Text, default="[]")
    final_summary_id: Mapped[str | None] = mapped_column(
        ForeignKey("summaries.id", ondelete="SET NULL")
    )
    finalized_at: Mapped[datetime | None] = mapped_column(Stamp)
    message_count: Mapped[int | None] = mapped_column(Integer)
    input_tokens: Mapped[int | None] = mapped_column(BigInteger)
    output_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_read_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_write_tokens: Mapped[int | None] = mapped_column(BigInteger)
    reasoning_tokens: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class MessageRow(Base):
    """A stored message; immutable once written (an edit adds a row with a higher version).

    ``seq`` is conversation-wide; it is NULL while the message is queued and assigned once, on
    delivery. ``parts`` and ``meta`` hold the JSON of ``message_to_dict``.
    """

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("conversation_id", "seq", "version"),
        Index("ix_messages_session_seq", "session_id", "seq"),
        # a turn reads its message by id (the lease's ``message_id``, ``find_message``)
        Index("ix_messages_conversation_message", "conversation_id", "message_id"),
        # appends are idempotent by construction: one row per chosen message id (see
        # ``idempotency_key``); NULLs never collide, on both databases
        Index("uq_messages_conversation_key", "conversation_id", "idempotency_key", unique=True),
    )

    pk: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    seq: Mapped[int | None] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer, default=0)
    message_id: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    parts: Mapped[str] = mapped_column(Text)
    meta: Mapped[str | None] = mapped_column(Text)
    input_tokens: Mapped[int | None] = mapped_column(BigInteger)
    output_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_read_tokens: Mapped[int | None] = mapped_column(BigInteger)
    cache_write_tokens: Mapped[int | None] = mapped_column(BigInteger)
    reasoning_tokens: Mapped[int | None] = mapped_column(BigInteger)
    model: Mapped[str | None] = mapped_column(String(255))
    ttft_ms: Mapped[float | None] = mapped_column(Float)
    total_ms: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16), default="delivered")
    created_at: Mapped[datetime] = mapped_column(Stamp)
    # The message id of an appended message whose id was chosen (by a client, the runtime):
    # a second append of that id returns this row instead of storing it again. NULL for an id
    # derived from the content (equal text is not the same message: two "yes" stay two), for
    # edits (a new version of the same id) and for duplicates stored before migration 0006.
    idempotency_key: Mapped[str | None] = mapped_column(String(255))


class CompactionRow(Base):
    """What one committed compaction did."""

    __tablename__ = "compactions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True
    )
    session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    child_session_id: Mapped[str] = mapped_column(ForeignKey("sessions.id", ondelete="CASCADE"))
    summary_id: Mapped[str | None] = mapped_column(ForeignKey("summaries.id", ondelete="SET NULL"))
    trigger: Mapped[str] = mapped_column(String(32))
    tokens_before: Mapped[int] = mapped_column(BigInteger)
    tokens_after: Mapped[int] = mapped_column(BigInteger)
    cut_seq: Mapped[int] = mapped_column(BigInteger)
    file_ops: Mapped[str] = mapped_column(Text, default="{}")
    duration_ms: Mapped[float] = mapped_column(Float)
    summarizer: Mapped[str | None] = mapped_column(String(255))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class PrunedOutputRow(Base):
    """A pruned message as it is sent: the stored message (at ``seq``) with its bulky tool
    outputs replaced by placeholders, so that a restart or another worker sends the very same
    bytes. ``call_ids``: JSON list of the pruned results' call ids."""

    __tablename__ = "pruned_outputs"
    __table_args__ = (UniqueConstraint("conversation_id", "seq"),)

    pk: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    call_ids: Mapped[str] = mapped_column(Text)
    parts: Mapped[str] = mapped_column(Text)
    meta: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class CallRow(Base):
    """One model call of a conversation, for the call inspector: the provider's usage (JSON,
    NULL when it reported none), abridged's estimate, the tool definitions' tokens, and
    ``sent``: JSON, one reference a message sent, in order (``abridged.store.calls``)."""

    __tablename__ = "calls"
    __table_args__ = (UniqueConstraint("conversation_id", "number"),)

    pk: Mapped[int] = mapped_column(BigKey, primary_key=True, autoincrement=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(BigInteger)
    epoch: Mapped[int] = mapped_column(Integer)
    estimate: Mapped[int] = mapped_column(BigInteger)
    tools: Mapped[int] = mapped_column(BigInteger)
    usage: Mapped[str | None] = mapped_column(Text)
    retry: Mapped[bool] = mapped_column(Boolean)
    ok: Mapped[bool] = mapped_column(Boolean)
    sent: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(Stamp)


class LastRequestRow(Base):
    """The last request of a conversation as the surface that served it saw it (the proxy's
    request line): ``line``, JSON of its figures, replaced at each request; ``at``, its end."""

    __tablename__ = "last_requests"

    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    line: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(Stamp)


class ApiKeyRow(Base):
    """An API key of the HTTP service: only its SHA-256 is stored (the key is shown once)."""

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant: Mapped[str] = mapped_column(String(255), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(Stamp)
    revoked_at: Mapped[datetime | None] = mapped_column(Stamp)


conversations: Table = Base.metadata.tables["conversations"]
summaries: Table = Base.metadata.tables["summaries"]
sessions: Table = Base.metadata.tables["sessions"]
messages: Table = Base.metadata.tables["messages"]
compactions: Table = Base.metadata.tables["compactions"]
pruned_outputs: Table = Base.metadata.tables["pruned_outputs"]
api_keys: Table = Base.metadata.tables["api_keys"]
calls: Table = Base.metadata.tables["calls"]
last_requests: Table = Base.metadata.tables["last_requests"]
