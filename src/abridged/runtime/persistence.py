"""A ContextManager's conversation kept in a store, so a restart or another process sends the
same bytes.

``ContextManager(store=..., conversation_id=...)`` hands its messages, compactions and prunes to
a ``StoredConversation``:

- **messages**: what the caller's history holds beyond what is stored is appended (the system
  prompt is not stored as messages: the caller passes it at every call). History message ``i``
  after the system prompt is stored message ``i + 1``: the history is append-only once stored.
  With ``behind`` they are held back and written by ``flush`` (or first thing at the next
  store operation), for a caller that sends the context before storing it.
- **compactions** go through the store's one commit path (``Store.commit_compaction``: compare and
  swap on the version read; the loser re-reads, skips if covered, retries once); **prunes** store
  the prune boundary with the pruned form of each message. Both are ``commit_result``, reached
  only by ``StoredConversation.commit``, which only ``ContextManager.commit`` calls: the one
  commit path of every runtime (a caller's list, a ``Conversation``'s compaction task and the
  replay, ``abridged.runtime.replay``). A lost compare-and-swap leaves the store as the other
  writer made it; ``reread`` gives the state to adopt.
- **state**: on the first call, and whenever another writer changed the conversation (its version
  moved), the engine state is rebuilt from the store (``restore_state``): summary, cut, carried
  messages, prune boundary, pruned forms. The context sent is then the one sent before, byte for
  byte.

The store is imported only when one is given (``abridged.store`` loads SQLAlchemy).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from abridged.core.model import Message
from abridged.core.turns import head_length
from abridged.engine.compaction import CompactionResult
from abridged.engine.context import CompactionState
from abridged.errors import MessageValidationError, StoreError

if TYPE_CHECKING:
    from abridged.store import Context, ConversationInfo, SessionInfo, Store

__all__ = ["Committed", "StoredConversation", "commit_result", "stored_seqs"]


class StoredConversation:
    """One conversation of a store, as a ContextManager keeps it (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        conversation_id: str | None = None,
        *,
        owner: str | None = None,
        model: str | None = None,
    ) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.owner = owner
        self.model = model
        self._attached = False
        self._version = 0
        self._session_id = ""
        self._stored = 0  # messages stored (after the system prompt)
        self._last_id: str | None = None  # the id of the last one, to notice an edit
        self._recheck: int | None = None  # an edited stored message, checked until undone
        self._pending: Callable[[], Awaitable[object]] | None = None  # an append held back

    async def sync(
        self,
        history: Sequence[Message],
        state: CompactionState,
        *,
        edited: int | None = None,
        known: ConversationInfo | None = None,
        behind: bool = False,
    ) -> CompactionState | None:
        """Store what ``history`` holds beyond the stored messages; the state to adopt when the
        store's differs from ``state`` (the first call of a stored conversation, or another
        writer compacted or pruned it), else ``None``. ``edited``: the first history index the
        caller changed since the last call, if any. ``known``: the conversation as the caller
        has just read it (under its turn lease), instead of reading it again. ``behind``: when
        nothing is adopted, the new messages are written later, by ``flush`` (or by the next
        store operation of this conversation, which flushes first).

        ``MessageValidationError`` when ``history`` does not continue the stored messages (an
        edited or shortened history: a stored conversation keeps every message).
        """
        if await self._settle():
            known = None  # read before the held-back messages were written: read it again
        store, cid = self.store, self.conversation_id
        head = head_length(history)
        body = history[head:]
        if edited is not None and self._attached and edited - head < self._stored:
            self._recheck = edited - head
        if self._recheck is not None and cid is not None:
            k = self._recheck
            if k < len(body):
                kept = await store.get_message(cid, k + 1, owner=self.owner)
                if body[k].id != kept.message.id:
                    self._attached = False  # the manager rolled back: read the state again
                    raise MessageValidationError(
                        f"message {head + k} was changed, but the stored conversation keeps "
                        "every message (append only, or start a new conversation)",
                        index=head + k,
                        conversation_id=cid,
                    )
            self._recheck = None
        if cid is None:
            info = await store.create_conversation(owner=self.owner, model=self.model)
            self.conversation_id = cid = info.id
            self._attached, self._version = True, info.version
            self._session_id = info.current_session_id or ""
        elif known is not None and known.id == cid:
            info = known
        else:  # a conversation named by the caller is made on first use
            info = await store.ensure_conversation(cid, owner=self.owner, model=self.model)
        stored = info.next_seq - 1
        if stored > len(body):
            self._attached = False
            raise MessageValidationError(
                f"the history holds {len(body)} messages after the system prompt, the stored "
                f"conversation {stored}: a stored conversation keeps every message (pass the "
                "whole history, or start a new conversation)",
                index=head + len(body),
                conversation_id=cid,
            )
        if self._attached and stored == self._stored and stored:
            self._check(body, stored - 1, self._last_id, head)
        adopt: CompactionState | None = None
        if not self._attached or info.version != self._version:
            context = await store.load_context(cid, owner=self.owner)
            for kept in context.messages:
                if kept.seq is not None and kept.seq <= len(body):
                    self._check(body, kept.seq - 1, kept.message.id, head)
            adopt = self._restore(context, history, state)
            if not (adopt.compacted or adopt.pruned or state.compacted or state.pruned):
                adopt = None  # nothing compacted or pruned on either side: nothing to adopt
        if len(body) > stored:
            new, conversation_id = list(body[stored:]), cid
            if behind and adopt is None:
                self._pending = lambda: store.append_many(conversation_id, new, owner=self.owner)
            else:
                await store.append_many(cid, new, owner=self.owner)
        self._stored = len(body)
        self._last_id = body[-1].id if body else None
        return adopt

    async def commit(
        self,
        result: CompactionResult,
        seqs: Sequence[int | None],
        *,
        duration_ms: float,
        on_prune_error: Callable[[StoreError], None] | None = None,
    ) -> Committed | None:
        """Store ``result`` over a history whose message ``i`` is stored message ``seqs[i]``
        (``commit_result``), against the version read; the version and session after it are
        this conversation's from then on, unless another writer came first (``lost``: read
        the store again, ``reread``). ``None`` when nothing is attached (the next ``sync``
        reads the store first): the result is the manager's alone."""
        await self._settle()
        cid = self.conversation_id
        if cid is None or not self._attached:
            return None
        committed = await commit_result(
            self.store,
            cid,
            result,
            seqs,
            version=self._version,
            session_id=self._session_id,
            owner=self.owner,
            duration_ms=duration_ms,
            on_prune_error=on_prune_error,
        )
        if not committed.lost:
            self._version = committed.version
            if committed.session is not None:
                self._session_id = committed.session.id
        return committed

    async def reread(self, history: Sequence[Message], state: CompactionState) -> CompactionState:
        """The state the store holds for ``history`` (another writer changed the conversation
        since ``state`` was read), adopted as this conversation's version and session."""
        assert self.conversation_id is not None
        context = await self.store.load_context(self.conversation_id, owner=self.owner)
        return self._restore(context, history, state)

    def attach(self, version: int, session_id: str) -> None:
        """Take the conversation at ``version``, in session ``session_id``, as its owner has
        just read it (a ``Conversation``, which stores its messages itself)."""
        self._attached = True
        self._version, self._session_id = version, session_id

    async def flush(self) -> None:
        """Write the messages held back by ``sync(behind=True)``; the store's error if that
        fails (the next ``sync`` then reads the store again and writes what is missing)."""
        write, self._pending = self._pending, None
        if write is not None:
            try:
                await write()
            except BaseException:
                self._attached = False
                raise

    async def _settle(self) -> bool:
        """Write what ``sync(behind=True)`` held back, if the caller did not ``flush``; whether
        there was anything. A failed write was reported to whoever flushed; if nobody did, the
        store is read again by the next ``sync``, which is all the recovery it needs."""
        held = self._pending is not None
        with contextlib.suppress(Exception):
            await self.flush()
        return held

    def _restore(
        self, context: Context, history: Sequence[Message], state: CompactionState
    ) -> CompactionState:
        from abridged.runtime.history import restore_state  # noqa: PLC0415

        self._attached = True
        self._version, self._session_id = context.version, context.session.id
        return restore_state(
            context, history, stored_seqs(history), epoch=state.epoch + 1, calls=state.calls
        )

    def detach(self) -> None:
        """Forget what was read: the next ``sync`` reads the state from the store again (the
        manager's own state was reset, or rolled back by an edit the store refused)."""
        self._attached = False

    def _check(self, body: Sequence[Message], k: int, stored_id: str | None, head: int) -> None:
        if k < len(body) and stored_id is not None and body[k].id != stored_id:
            self._attached = False  # the manager rolled its state back: read it again next time
            raise MessageValidationError(
                f"message {head + k} differs from the stored conversation's message {k + 1}: "
                "a stored conversation keeps every message (append only, or start a new "
                "conversation)",
                index=head + k,
                field="id",
                conversation_id=self.conversation_id,
            )


@dataclass(frozen=True, slots=True)
class Committed:
    """What ``commit_result`` did: the conversation's version after it, the session a summary
    started (``None`` when it made none), and ``lost``: another writer changed the conversation
    first, nothing was stored and the caller must read the store again."""

    version: int
    session: SessionInfo | None = None
    lost: bool = False


async def commit_result(
    store: Store,
    conversation_id: str,
    result: CompactionResult,
    seqs: Sequence[int | None],
    *,
    version: int,
    session_id: str,
    owner: str | None = None,
    duration_ms: float,
    on_prune_error: Callable[[StoreError], None] | None = None,
) -> Committed:
    """The one commit path of a compaction's result, for every runtime: its summary through the
    store's single writer (``Store.commit_compaction``, compare-and-swap on ``version``, read in
    session ``session_id``), then its prune: the stored prune boundary moves forward, with the
    pruned form of each newly pruned message, so that a restart sends the same bytes. ``seqs``:
    the stored sequence number of each history index of the result (``None``: not stored).

    The version is adopted after the prune only when no other writer changed the conversation
    in between: otherwise the next commit loses its compare-and-swap and re-reads the store, as
    the single writer requires. ``on_prune_error``: given, a prune the store refused is reported
    to it instead of raised (the summary, if any, is committed by then).
    """
    from abridged.runtime.history import compaction_record, seq_at  # noqa: PLC0415

    session: SessionInfo | None = None
    if result.status == "compacted" and result.state.summary is not None:
        record = compaction_record(result, seqs, duration_ms=duration_ms)
        outcome = await store.commit_compaction(
            conversation_id, record, version=version, session_id=session_id, owner=owner
        )
        if outcome.status != "committed" or outcome.attempts > 1:
            return Committed(version, lost=True)
        assert outcome.version is not None and outcome.session is not None
        version, session = outcome.version, outcome.session
    before, after = result.plan.state, result.state
    fresh = {
        s: m
        for i, m in after.pruned.items()
        if i not in before.pruned and (s := seqs[i]) is not None
    }
    if result.changed and (after.prune_boundary > before.prune_boundary or fresh):
        seq = seq_at(seqs, after.prune_boundary)
        try:
            info = await store.set_prune_boundary(conversation_id, seq, pruned=fresh, owner=owner)
        except StoreError as exc:
            if on_prune_error is None:
                raise
            on_prune_error(exc)
            return Committed(version, session)
        if info.version == version + 1:
            version = info.version
    return Committed(version, session)


def stored_seqs(history: Sequence[Message]) -> list[int | None]:
    """The stored sequence number of each message of a history stored as ``sync`` stores it
    (``None`` for the system prompt: message ``i`` after it is stored message ``i + 1``)."""
    head = head_length(history)
    return [None] * head + list(range(1, len(history) - head + 1))
