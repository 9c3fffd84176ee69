"""Values the store takes and returns: stored messages, sessions, summaries, compactions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from abridged.core.model import Message, Usage
from abridged.core.summary import summary_message
from abridged.errors import CorruptRowError

Reason: TypeAlias = Literal["start", "new", "clear", "compaction", "resume"]
DeliveryStatus: TypeAlias = Literal["delivered", "queued"]
REASONS: tuple[str, ...] = ("start", "new", "clear", "compaction", "resume")
STATUSES: tuple[str, ...] = ("delivered", "queued")

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_NO_PRUNED: Mapping[int, Message] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StoredSummary:
    """A summary: its text and metadata (sections, truncated flag, ...).

    ``carried_seqs``: the messages before the cut sent verbatim with it (pinned steps, the
    latest user message after the emergency path); ``file_ops``: the files read and modified up
    to it (``{"read": [...], "modified": [...]}``). ``id`` and ``covers_to_seq`` (messages before
    this sequence number are covered) are set by the store on the summaries it returns.
    ``meta["leading"]``: how many carried messages come before the summary (``leading``).
    """

    text: str
    meta: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    id: str | None = None
    covers_to_seq: int | None = None
    carried_seqs: tuple[int, ...] = ()
    file_ops: Mapping[str, Sequence[str]] = field(default_factory=lambda: _EMPTY)

    def to_message(self) -> Message:
        """The summary as the message that opens a context, the engine's own (header and
        text: the same bytes as ``abridged.core.summary.summary_message``)."""
        meta = dict(self.meta)
        if self.id is not None:
            meta["summary_id"] = self.id
        return summary_message(self.text, meta)

    @property
    def leading(self) -> int:
        """How many of the carried messages are laid out before the summary (the pinned task):
        ``meta["leading"]``, 0 when absent or unreadable (summaries stored before it was
        recorded were laid out summary first)."""
        value = self.meta.get("leading", 0)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        return 0


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """What a compaction decided and made; the engine builds it, the store commits it.

    ``cut_seq`` is the first sequence number kept verbatim (the child session carries from it);
    ``summary`` covers everything before it. ``resummarized_from`` is set when the summary was
    rebuilt from that sequence number on (after an edit); it clears the re-summarisation mark.
    """

    cut_seq: int
    summary: StoredSummary
    trigger: str = "auto"
    tokens_before: int = 0
    tokens_after: int = 0
    file_ops: Mapping[str, Sequence[str]] = field(default_factory=lambda: _EMPTY)
    duration_ms: float = 0.0
    summarizer: str | None = None
    resummarized_from: int | None = None


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to append with what the store records beside it."""

    message: Message
    model: str | None = None
    ttft_ms: float | None = None
    total_ms: float | None = None
    status: DeliveryStatus = "delivered"


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message as stored: its place (``seq``, ``None`` while queued), version and session."""

    pk: int
    conversation_id: str
    session_id: str
    seq: int | None
    version: int
    message: Message
    status: DeliveryStatus
    model: str | None
    ttft_ms: float | None
    total_ms: float | None
    created_at: datetime

    @property
    def usage(self) -> Usage | None:
        """The provider's usage for the call that produced this message."""
        return self.message.usage


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """Message count and summed provider usage of the messages written in a session."""

    messages: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session: why it started, where its context starts, its summaries and totals.

    ``totals`` are the stored ones once the session is finalised, live ones in listings.
    """

    id: str
    conversation_id: str
    number: int
    parent_id: str | None
    reason: Reason
    carry_from: int
    start_seq: int
    start_summary: StoredSummary | None
    final_summary: StoredSummary | None
    finalized_at: datetime | None
    totals: SessionTotals | None
    created_at: datetime
    is_current: bool = False


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """A conversation's row: owner, model, settings and the single writer's state.

    ``id`` is the storage key every store operation takes; ``name`` is the id its owner calls
    it by (the same unless it was made with ``create_conversation(name=...)``, as the HTTP
    service does for its tenants' conversations)."""

    id: str
    owner: str | None
    model: str | None
    settings: Mapping[str, Any]
    version: int
    next_seq: int
    current_session_id: str | None
    prune_boundary: int
    resummarize_from: int | None
    created_at: datetime
    updated_at: datetime
    name: str


@dataclass(frozen=True, slots=True)
class Context:
    """The current context as the design defines it, read in one snapshot.

    ``summary`` is what the session starts from, ``messages`` the delivered messages of its
    lineage from its carry-from sequence number on, in order; ``queued`` the messages waiting
    for delivery; ``pruned`` the pruned form of tail messages (sequence number -> the message
    as sent, see ``Store.set_prune_boundary``); ``carried`` the messages before the cut sent
    verbatim anyway (``StoredSummary.carried_seqs``). ``version`` is what a compaction planned
    on this context must compare against.
    """

    conversation: ConversationInfo
    session: SessionInfo
    summary: StoredSummary | None
    messages: tuple[StoredMessage, ...]
    queued: tuple[StoredMessage, ...] = ()
    pruned: Mapping[int, Message] = field(default_factory=lambda: _NO_PRUNED)
    carried: tuple[StoredMessage, ...] = ()
    #: rows that could not be decoded: each is sent as a placeholder (``meta["kind"]`` is
    #: ``"damaged"``) keeping the tool pairing valid, and reported here, never dropped silently
    damaged: tuple[CorruptRowError, ...] = ()

    @property
    def version(self) -> int:
        """``conversations.version`` when this context was read."""
        return self.conversation.version

    def to_messages(self) -> list[Message]:
        """The messages to send, as the engine lays them out (``build_context``, without the
        system prompt): the leading carried messages (the pinned task), the summary message,
        the other carried messages before the cut, then the tail, each in its pruned form where
        it has one. Commands are sent too: filter ``meta["kind"]`` if you store them."""
        carried = [m.message for m in self.carried]
        leading = 0
        summary: list[Message] = []
        if self.summary is not None:
            summary = [self.summary.to_message()]
            leading = min(self.summary.leading, len(carried))
        tail = [
            self.pruned.get(m.seq, m.message) if m.seq is not None else m.message
            for m in self.messages
        ]
        return carried[:leading] + summary + carried[leading:] + tail


@dataclass(frozen=True, slots=True)
class StoredCompaction:
    """A committed compaction: its record, the sessions it linked and the version it made."""

    id: str
    conversation_id: str
    session_id: str
    child_session_id: str
    record: CompactionRecord
    version: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What ``Store.commit_compaction`` did: ``committed``, ``skipped``
    (another writer covered it, or moved the conversation to another session) or ``nothing``
    (the compactor had nothing to do). ``version``: the conversation's version after a commit;
    ``attempts``: how many records were tried (2 when the first compare-and-swap was lost and
    a second record, or the same one again, was tried)."""

    status: Literal["committed", "skipped", "nothing"]
    attempts: int
    session: SessionInfo | None = None
    record: CompactionRecord | None = None
    version: int | None = None


@dataclass(frozen=True, slots=True)
class ResumeResult:
    """What ``Store.resume`` did: ``resumed`` the session, started a ``new`` one from its
    summary because its context did not fit, or nothing because it was ``current`` already."""

    session: SessionInfo
    mode: Literal["resumed", "new", "current"]
    tokens: int | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A session whose final summary matched a search, best first."""

    conversation_id: str
    session_id: str
    score: float
    summary: StoredSummary
    method: Literal["embedding", "text"]


@dataclass(frozen=True, slots=True)
class FinalizeRequest:
    """What a summary maker is asked to summarise: a session's context."""

    conversation_id: str
    session_id: str
    previous: StoredSummary | None
    messages: tuple[Message, ...]


# ``None``: the session holds nothing to summarise (only slash commands, say); it is finalised
# with its totals and no summary.
SummaryMaker: TypeAlias = Callable[[FinalizeRequest], Awaitable[StoredSummary | None]]
Compactor: TypeAlias = Callable[[Context], Awaitable[CompactionRecord | None]]
TokenEstimator: TypeAlias = Callable[[Sequence[Message]], int]
