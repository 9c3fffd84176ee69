"""A stored conversation forked where a caller's history stopped continuing it, keeping what
the two share: the messages, and the newest summary that covers only shared messages.

A stored conversation is append-only, so a caller that edits or truncates its history (a
regenerated reply, an edited message) gets a new stored conversation (the proxy does this).
Made from nothing, that fork would hold the whole history unsummarized: its first call would
be far over the budget, and the emergency path would summarize everything again. Made by
``fork_stored``, it starts where its parent was: the shared messages, the parent's summary
(committed in the fork as a compaction with trigger ``fork``), its cut and carried messages,
and the pruned forms of the shared tail, so its first context is the parent's context up to
the fork point (the provider's prompt cache still holds it) and its next compaction updates
that summary like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from abridged.core.model import Message
from abridged.core.turns import head_length

if TYPE_CHECKING:
    from abridged.store import Store
    from abridged.store.records import StoredCompaction

__all__ = ["Fork", "fork_stored"]

#: The trigger of the compaction a fork inherits from its parent.
FORK_TRIGGER = "fork"


@dataclass(frozen=True, slots=True)
class Fork:
    """What ``fork_stored`` made: the fork's id, its parent, how many stored messages (after
    the system prompt) the two share, and the inherited summary's cut (``None``: none)."""

    conversation_id: str
    parent_id: str
    shared: int
    inherited_cut: int | None


def shared_length(stored: Sequence[Message], body: Sequence[Message]) -> int:
    """How many leading messages ``stored`` and ``body`` have in common (by id: a history's ids
    chain each message's content with the one before it, so equal ids mean equal prefixes)."""
    n = min(len(stored), len(body))
    for i in range(n):
        if stored[i].id != body[i].id:
            return i
    return n


def _inheritable(done: Sequence[StoredCompaction], shared: int) -> StoredCompaction | None:
    """The newest compaction whose summary covers only shared messages and carries only
    shared ones (its cut at most one past the shared prefix)."""
    for c in reversed(done):
        summary = c.record.summary
        if summary.meta.get("deleted") or not summary.text.strip():
            continue
        if c.record.cut_seq <= shared + 1 and all(s <= shared for s in summary.carried_seqs):
            return c
    return None


async def fork_stored(
    store: Store,
    parent_id: str,
    fork_id: str,
    history: Sequence[Message],
    *,
    owner: str | None = None,
    model: str | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Fork:
    """Make ``fork_id`` from ``parent_id`` for ``history`` (the caller's whole history as
    abridged messages, system prompt first if any; see the module docstring). The fork holds
    the shared messages; the rest of ``history`` is stored by the fork's next ``sync``. Its
    ``settings`` are ``settings`` plus ``forked: {"from": parent_id, "shared": n}``."""
    from abridged.store.records import CompactionRecord, StoredSummary  # noqa: PLC0415

    body = history[head_length(history) :]
    parent_rows = await store.stored_messages(parent_id, owner=owner, skip_corrupt=True)
    stored = [r.message for r in parent_rows if r.seq is not None]
    shared = shared_length(stored, body)
    await store.create_conversation(
        fork_id,
        owner=owner,
        model=model,
        settings={**(settings or {}), "forked": {"from": parent_id, "shared": shared}},
    )
    if shared:
        await store.append_many(fork_id, list(body[:shared]), owner=owner)
    chosen = _inheritable(await store.compactions(parent_id, owner=owner), shared)
    if chosen is None:
        return Fork(fork_id, parent_id, shared, None)
    record = chosen.record
    summary = record.summary
    inherited = CompactionRecord(
        cut_seq=record.cut_seq,
        summary=StoredSummary(
            summary.text,
            {**summary.meta, "inherited_from": parent_id},
            carried_seqs=summary.carried_seqs,
            file_ops=summary.file_ops,
        ),
        trigger=FORK_TRIGGER,
        tokens_before=record.tokens_before,
        tokens_after=record.tokens_after,
        file_ops=record.file_ops,
        summarizer=record.summarizer,
    )
    read = await store.load_context(fork_id, owner=owner)
    await store.commit_compaction(
        fork_id, inherited, version=read.version, session_id=read.session.id, owner=owner
    )
    context = await store.load_context(parent_id, owner=owner)
    if context.session.carry_from == record.cut_seq:
        # the parent's pruned tail, where shared: the fork's first context is the parent's
        pruned = {s: m for s, m in context.pruned.items() if s <= shared}
        boundary = min(context.conversation.prune_boundary, shared + 1)
        if pruned or boundary > record.cut_seq:
            await store.set_prune_boundary(fork_id, boundary, pruned=pruned, owner=owner)
    return Fork(fork_id, parent_id, shared, record.cut_seq)
