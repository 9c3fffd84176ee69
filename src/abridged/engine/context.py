"""The compaction state of a conversation and the stable-first context it lays out for a call.

The history is every message of the conversation, in order, never changed; the **state** says
what a call sees of it. ``build_context(history, state)`` lays the context out stable-first, so
that the provider's prompt cache keeps as long a prefix as possible::

    system      the leading system messages of the history (the tool definitions go with them,
                outside the message list)
    leading     carried messages that no summarized message precedes (the pinned first task):
                they survive every compaction, so they come before the summary, which changes
                at each one, and stay in the cached prefix (``CompactionState.leading``)
    summary     one user message (``meta["kind"] == "summary"``) folding everything before the
                cut, when there was a compaction
    carried     the other messages before the cut sent verbatim anyway: pinned steps (the
                user's pins) and, after the emergency path, the latest user message, in order
    pruned      the start of the tail, up to the prune boundary, where old tool outputs are
                placeholders (the boundary only moves forward)
    tail        ``history[cut:]`` verbatim, growing at each step

Between two compactions or prunes, a context is the previous one plus new messages: the prefix is
byte-identical (invariant 5). Everything here is pure and deterministic.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from abridged.core.budget import Budget
from abridged.core.model import Message
from abridged.core.protocols import FileOps
from abridged.core.summary import summary_message
from abridged.core.turns import TokenCount, head_length, is_user_message
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.summarize.prompts import TURN_PREFIX_LABEL
from abridged.engine.summarize.references import is_observation
from abridged.engine.triggers import Backoff
from abridged.errors import MessageValidationError

#: The largest share of the input budget a first task may hold to be pinned by default.
PIN_TASK_SHARE = 0.25

#: ``ContextView.sources`` entry of the summary message (it is in no history position).
SUMMARY_SOURCE = -1

_NO_PRUNED: Mapping[int, Message] = MappingProxyType({})


def compose_summary(main: str | None, turn_prefix: str | None) -> str:
    """The summary text from the main summary and the split turn's summary.

    >>> print(compose_summary("Main.", "Prefix."))
    Main.
    <BLANKLINE>
    ---
    <BLANKLINE>
    The turn in progress: its earlier steps, summarized (later steps follow).
    <BLANKLINE>
    Prefix.
    """
    if turn_prefix is None:
        return main or ""
    block = f"{TURN_PREFIX_LABEL}\n\n{turn_prefix.strip()}"
    if not main:
        return block
    return f"{main.rstrip()}\n\n---\n\n{block}"


def _check_index(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MessageValidationError(f"{name} must be an integer >= 0, got {value!r}", field=name)


@dataclass(frozen=True, slots=True)
class CompactionState:
    """What a conversation's calls see of its history; an immutable value, passed around.

    - ``summary``: the text of the current summary (``None`` before the first compaction).
    - ``file_ops``: files read and modified, cumulative across compactions.
    - ``cut``: the history index of the first message of the verbatim tail; ``through_id`` the id
      of the message right before it (the last one the summary covers), to check that the state
      belongs to the history it is applied to.
    - ``carried``: history indexes before ``cut`` sent verbatim (pinned steps; the latest user
      message after the emergency path), ascending; the first ``leading`` of them are laid out
      before the summary (no summarized message precedes them, see ``leading_carried``).
    - ``prune_boundary``: the history index up to which tool outputs were pruned (forward only);
      ``pruned`` maps each pruned history index to the message sent in its place.
    - ``epoch``: bumped by every change of what is sent before the tail (prune, compaction): a
      usage report made in an earlier epoch describes a context that no longer exists.
    - ``usage_boundary``: the history length when the epoch last changed; usage reported on
      messages before it never triggers a compaction. A runtime that commits a compaction while
      a call made with the old context is still in flight sets it past that call's reply.
    - ``calls``: model calls made so far (the unit of the backoff); ``backoff``: the progress
      guard's counters; ``compactions``: summaries made so far.
    """

    summary: str | None = None
    file_ops: FileOps = field(default_factory=FileOps)
    cut: int = 0
    through_id: str | None = None
    carried: tuple[int, ...] = ()
    leading: int = 0
    prune_boundary: int = 0
    pruned: Mapping[int, Message] = field(default_factory=lambda: _NO_PRUNED)
    epoch: int = 0
    usage_boundary: int = 0
    calls: int = 0
    backoff: Backoff = field(default_factory=Backoff)
    compactions: int = 0

    def __post_init__(self) -> None:
        for name in (
            "cut",
            "leading",
            "prune_boundary",
            "epoch",
            "usage_boundary",
            "calls",
            "compactions",
        ):
            _check_index(name, getattr(self, name))
        carried = tuple(self.carried)
        if list(carried) != sorted(set(carried)) or any(i >= self.cut or i < 0 for i in carried):
            raise MessageValidationError(
                f"carried indexes must be distinct, ascending and before the cut {self.cut}",
                field="carried",
            )
        object.__setattr__(self, "carried", carried)
        if self.leading > len(carried):
            raise MessageValidationError(
                f"leading ({self.leading}) cannot exceed the {len(carried)} carried messages",
                field="leading",
            )
        if not isinstance(self.pruned, MappingProxyType):
            object.__setattr__(self, "pruned", MappingProxyType(dict(self.pruned)))

    @property
    def compacted(self) -> bool:
        """Whether the context differs from the history by more than pruned outputs."""
        return self.summary is not None or bool(self.carried) or self.cut > 0

    def next_call(self, calls: int = 1) -> CompactionState:
        """The state after ``calls`` more model calls (the backoff counts calls)."""
        return replace(self, calls=self.calls + calls)

    def check(self, messages: Sequence[Message]) -> None:
        """Raise ``MessageValidationError`` when this state cannot belong to ``messages``.

        O(1): the cut must lie within the history and the message before it must have the id
        recorded when the state was made.
        """
        n = len(messages)
        if self.cut > n:
            raise MessageValidationError(
                f"the compaction state cuts at message {self.cut}, beyond the {n} messages",
                index=self.cut,
                field="cut",
            )
        if (
            self.cut
            and self.through_id is not None
            and messages[self.cut - 1].id != self.through_id
        ):
            raise MessageValidationError(
                f"message {self.cut - 1} is not the one the summary covers through "
                f"(id {messages[self.cut - 1].id!r}, expected {self.through_id!r}): the history "
                "was edited; roll the state back with truncated()",
                index=self.cut - 1,
                field="id",
            )

    def at_provider_compaction(
        self, index: int, through_id: str | None, length: int
    ) -> CompactionState:
        """This state once the provider compacted the conversation itself: history ``index``
        holds its compaction item (which stands for everything before it), so the context
        starts there; abridged's own summary and what it carried are not sent again. Usage
        reported before ``length`` (the history's length now) described the context before.

        >>> CompactionState(summary="s", cut=2).at_provider_compaction(5, "m4", 7).cut
        5
        """
        return replace(
            self,
            summary=None,
            cut=index,
            through_id=through_id,
            carried=(),
            leading=0,
            prune_boundary=max(self.prune_boundary, index),
            pruned={i: m for i, m in self.pruned.items() if i >= index},
            epoch=self.epoch + 1,
            usage_boundary=max(self.usage_boundary, length),
        )

    def truncated(self, index: int) -> CompactionState | None:
        """This state for a history whose messages from ``index`` on changed, or ``None`` when
        it depends on them (the summary or the carried messages cover them).

        Prunes at or after ``index`` are forgotten (the boundary moves back to ``index``: the
        provider's cache is lost at the edit anyway) and the epoch changes.
        """
        if self.cut > index:
            return None
        pruned = {i: m for i, m in self.pruned.items() if i < index}
        return replace(
            self,
            pruned=pruned,
            prune_boundary=min(self.prune_boundary, index),
            usage_boundary=min(self.usage_boundary, index),
            epoch=self.epoch + 1,
        )


@dataclass(frozen=True, slots=True)
class ContextView:
    """A context laid out from a history and a state, with where each message comes from.

    ``sources[p]`` is the history index of context position ``p`` (``SUMMARY_SOURCE`` for the
    summary message). Positions ``[0, head)`` are the leading system messages, then the
    ``leading`` carried messages, ``tail_start`` is the position of history index ``cut``.
    """

    messages: tuple[Message, ...]
    sources: tuple[int, ...]
    head: int
    tail_start: int
    cut: int
    carried: tuple[int, ...]
    history_length: int
    leading: int = 0

    def position(self, index: int) -> int | None:
        """The context position of history message ``index``, or ``None`` when it is not sent
        (it is folded into the summary).

        O(log carried).
        """
        if not 0 <= index < self.history_length:
            return None
        if index >= self.cut:
            return self.tail_start + (index - self.cut)
        if index < self.head:
            return index
        k = bisect.bisect_left(self.carried, index)
        if k < len(self.carried) and self.carried[k] == index:
            if k < self.leading:
                return self.head + k
            return self.tail_start - len(self.carried) + k
        return None


def build_view(messages: Sequence[Message], state: CompactionState) -> ContextView:
    """The context of ``messages`` under ``state``, with its positions (see the module doc).

    O(context). Raises ``MessageValidationError`` when the state does not belong to the
    history (``CompactionState.check``).
    """
    state.check(messages)
    n = len(messages)
    pruned = state.pruned
    if not state.compacted:
        if pruned:
            sent = tuple(pruned.get(i, m) for i, m in enumerate(messages))
        else:
            sent = tuple(messages)
        return ContextView(sent, tuple(range(n)), head_length(messages), 0, 0, (), n)
    head = min(head_length(messages), state.cut)
    out: list[Message] = list(messages[:head])
    sources: list[int] = list(range(head))
    carried = tuple(i for i in state.carried if i >= head)
    leading = min(state.leading, len(carried))
    order = [*carried[:leading], SUMMARY_SOURCE, *carried[leading:]]
    for index in order:
        if index == SUMMARY_SOURCE:
            if state.summary is not None:
                out.append(summary_message(state.summary))
                sources.append(SUMMARY_SOURCE)
        else:
            out.append(messages[index])
            sources.append(index)
    tail_start = len(out)
    for index in range(state.cut, n):
        out.append(pruned.get(index, messages[index]))
    sources.extend(range(state.cut, n))
    return ContextView(tuple(out), tuple(sources), head, tail_start, state.cut, carried, n, leading)


def build_context(messages: Sequence[Message], state: CompactionState) -> list[Message]:
    """The messages to send for ``messages`` under ``state``: system, leading carried (the pinned
    task), summary, other carried, pruned region, tail. The tool definitions go with the system
    prompt, outside this list.

    >>> history = [Message.system("be brief"), Message.user("hi"), Message.assistant("hello")]
    >>> [m.text for m in build_context(history, CompactionState())]
    ['be brief', 'hi', 'hello']
    """
    return list(build_view(messages, state).messages)


def leading_carried(carried: Sequence[int], head: int) -> int:
    """How many of ``carried`` (ascending history indexes) no summarized message precedes: the
    run of indexes from ``head`` (the first index after the system messages) on.

    >>> leading_carried((1, 2, 7), 1), leading_carried((3, 4), 1)
    (2, 0)
    """
    count = 0
    for index in carried:
        if index != head + count:
            break
        count += 1
    return count


def first_task(messages: Sequence[Message]) -> int | None:
    """The index of the conversation's first user message (its task), or ``None``. A
    text-protocol observation (``references.is_observation``: what a tool printed, sent as a
    user message) is not the user's task and is never pinned as one.

    Scans from the start until it finds one: O(its position).
    """
    previous: Message | None = None
    for index in range(head_length(messages), len(messages)):
        message = messages[index]
        if is_user_message(message) and not is_observation(message, previous):
            return index
        previous = message
    return None


def pinned_indexes(
    messages: Sequence[Message],
    *,
    settings: CompactionSettings,
    budget: Budget,
    count_tokens: TokenCount,
    pinned: Collection[int] = (),
) -> frozenset[int]:
    """History indexes pinned by the caller (``pinned``) or by policy (the first task, when
    ``pin_first_task`` and it holds at most ``pin_first_task_max_tokens`` and a quarter of the
    input budget, ``PIN_TASK_SHARE``). Messages with ``meta["pinned"]`` are pinned too (the cut
    sees them itself).
    """
    n = len(messages)
    out = {i for i in pinned if isinstance(i, int) and 0 <= i < n}
    if settings.pin_first_task:
        task = first_task(messages)
        limit = min(settings.pin_first_task_max_tokens, int(budget.input_budget * PIN_TASK_SHARE))
        if task is not None and count_tokens(messages[task]) <= limit:
            out.add(task)
    return frozenset(out)
