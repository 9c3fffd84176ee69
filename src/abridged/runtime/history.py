"""Between the store and the engine: a stored context as history and compaction state, and a
compaction result as the record the store commits.

The store keeps a session as a summary plus the messages it carries from a sequence number on
(``Store.load_context``). The engine works on a history and a ``CompactionState``. A loaded
conversation's history is::

    system messages      the conversation's system prompt (not stored as messages)
    carried messages     messages before the cut sent verbatim anyway (the pinned first task,
                         the latest user message after the emergency path): their sequence
                         numbers are the summary's ``carried_seqs``; the store reads them with
                         the context (``Context.carried``)
    tail                 the session's messages, in order

and its state says: the summary, the cut at the tail, the carried indexes, the prune boundary
and the pruned form of tail messages (``Context.pruned``: the very bytes sent before). A
committed compaction stores the summary once, with ``carried_seqs`` and the file operations in
its own columns, and the child session carries from the first kept message's sequence number.

Commands and their outputs (``meta["kind"]`` ``command`` / ``command_output``) are stored but
are never part of the model's context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from abridged.core.model import Message
from abridged.core.protocols import FileOps
from abridged.engine.compaction import CompactionResult
from abridged.engine.context import CompactionState
from abridged.errors import CorruptRowError
from abridged.store import CompactionRecord, Context, Store, StoredMessage, StoredSummary

__all__ = [
    "COMMAND_KINDS",
    "Loaded",
    "compaction_record",
    "damaged_notice",
    "is_command",
    "load_history",
    "restore_state",
    "seq_at",
]

#: ``meta["kind"]`` of stored messages that are never sent to the model.
COMMAND_KINDS = frozenset({"command", "command_output"})


def is_command(message: Message) -> bool:
    """Whether a stored message is a slash command or its output (never sent to the model)."""
    return message.meta.get("kind") in COMMAND_KINDS


@dataclass(slots=True)
class Loaded:
    """A conversation's current context as the runtime holds it."""

    history: list[Message]
    seqs: list[int | None]
    state: CompactionState
    context: Context
    queued: tuple[StoredMessage, ...]


async def load_history(
    store: Store,
    conversation_id: str,
    system: Sequence[Message],
    *,
    owner: str | None = None,
    prepare: Callable[[Message], Message] = lambda m: m,
    epoch: int = 0,
    calls: int = 0,
) -> Loaded:
    """The current context of a conversation as history and state (see the module docstring).

    ``prepare`` maps each stored message to the form sent to the model (clipped tool results);
    ``epoch`` and ``calls`` carry over from a state the caller held before (session switches).
    """
    context = await store.load_context(conversation_id, owner=owner)
    head = list(system)
    history: list[Message] = list(head)
    seqs: list[int | None] = [None] * len(head)
    for stored in context.carried:
        history.append(prepare(stored.message))
        seqs.append(stored.seq)
    for stored in context.messages:
        if is_command(stored.message):
            continue
        history.append(prepare(stored.message))
        seqs.append(stored.seq)
    state = restore_state(context, history, seqs, epoch=epoch, calls=calls)
    return Loaded(history, seqs, state, context, context.queued)


def restore_state(
    context: Context,
    history: Sequence[Message],
    seqs: Sequence[int | None],
    *,
    epoch: int = 0,
    calls: int = 0,
) -> CompactionState:
    """The engine's state of a stored ``context`` over ``history``, whose message ``i`` is the
    stored message ``seqs[i]`` (``None``: not stored, such as the system prompt).

    The cut is the first stored message at or after the session's carry-from; the messages
    before it named by the summary's ``carried_seqs`` are carried; the prune boundary and the
    pruned forms come from the store, so the context is the one sent before, byte for byte.
    """
    summary = context.summary
    n = len(history)
    head = next((i for i, s in enumerate(seqs) if s is not None), n)
    cut = 0
    if summary is not None:
        carry_from = context.session.carry_from
        cut = next((i for i in range(head, n) if (seqs[i] or 0) >= carry_from), n)
    pruned: dict[int, Message] = {}
    for i in range(cut, n):
        seq = seqs[i]
        form = context.pruned.get(seq) if seq is not None else None
        if form is not None:
            pruned[i] = form
    # the stored prune boundary (a sequence number) as a history index, never before the cut
    boundary_seq = context.conversation.prune_boundary
    boundary = next(
        (i for i in range(cut, n) if (seqs[i] or 0) >= boundary_seq),
        n if boundary_seq > 0 else cut,
    )
    if summary is None:
        return CompactionState(
            prune_boundary=boundary if pruned or boundary_seq > 0 else 0,
            pruned=pruned,
            epoch=epoch,
            usage_boundary=n,
            calls=calls,
        )
    wanted = set(summary.carried_seqs)
    carried = tuple(i for i in range(head, cut) if seqs[i] in wanted)
    return CompactionState(
        summary=summary.text,
        file_ops=FileOps(
            read=frozenset(summary.file_ops.get("read", ())),
            modified=frozenset(summary.file_ops.get("modified", ())),
        ),
        cut=cut,
        through_id=history[cut - 1].id if cut > 0 else None,
        carried=carried,
        leading=min(summary.leading, len(carried)),
        prune_boundary=max(cut, boundary),
        pruned=pruned,
        epoch=epoch,
        usage_boundary=n,
        calls=calls,
        compactions=int(summary.meta.get("compactions", 1) or 1),
    )


def seq_at(seqs: Sequence[int | None], index: int) -> int:
    """The sequence number of history ``index``, or the one after the last message when the
    index is past the end (a cut that keeps nothing of the tail)."""
    if index < len(seqs) and seqs[index] is not None:
        return int(seqs[index])  # type: ignore[arg-type]
    known = [s for s in seqs if s is not None]
    return (max(known) + 1) if known else 1


def compaction_record(
    result: CompactionResult, seqs: Sequence[int | None], *, duration_ms: float
) -> CompactionRecord:
    """The record the store commits for a compaction that made a summary."""
    state = result.state
    assert state.summary is not None
    carried = [s for i in state.carried if (s := seqs[i]) is not None]
    ops = {
        "read": sorted(state.file_ops.read),
        "modified": sorted(state.file_ops.modified),
    }
    meta: dict[str, Any] = {
        "summarizer": result.summarizer,
        "truncated": result.truncated,
        "trigger": result.plan.trigger,
        "compactions": state.compactions,
    }
    if state.leading:
        meta["leading"] = state.leading
    if result.plan.emergency:
        meta["emergency"] = result.plan.emergency
    if result.fallback_reason:
        meta["fallback_reason"] = result.fallback_reason
    return CompactionRecord(
        cut_seq=seq_at(seqs, state.cut),
        summary=StoredSummary(state.summary, meta, carried_seqs=tuple(carried), file_ops=ops),
        trigger=result.plan.trigger,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        file_ops=ops,
        duration_ms=duration_ms,
        summarizer=result.summarizer,
    )


def damaged_notice(damaged: Sequence[CorruptRowError]) -> str:
    """The notice of stored messages that could not be read (``Context.damaged``): where they
    are, by sequence number; never the row's content nor the store's key of the conversation."""
    seqs = [e.context.get("seq") for e in damaged]
    where = ", ".join(str(s) for s in seqs[:10] if s is not None) or "unknown"
    more = f" and {len(seqs) - 10} more" if len(seqs) > 10 else ""
    return (
        f"{len(damaged)} stored message(s) could not be read (seq {where}{more}): each is sent "
        "to the model as a placeholder, and the conversation goes on"
    )
