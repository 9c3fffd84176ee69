"""Turns, steps and cut points: where a history may be cut, and where to cut it to keep N tokens.

Vocabulary (see the design's "Turns and steps"):

- The **head** is the run of leading ``system`` messages (and leading summary messages,
  ``meta["kind"] == "summary"``). It is outside the cuttable region: no cut ever removes it, and
  every kept context starts with it.
- A **user message** is a message of role ``user`` that holds no ``ToolResult`` part. Tool
  results (role ``tool``, or a ``user`` message carrying ``ToolResult`` parts as some wire formats
  do) are never user messages: they continue the step that asked for them.
- A **step** is one model call: an assistant message and the tool results it asked for. An
  assistant message holding only ``Reasoning`` parts belongs to the step of the assistant message
  right after it (some converters split a thinking block from its tool calls). A message that
  arrives while one of the step's calls still waits for a result (for example a ``system`` note
  between two parallel results) stays inside the step, and so does a non-leading ``system``
  message right after it.
- A **turn** starts at a user message and holds the steps after it, up to the next user message.
  Messages of the cuttable region before the first user message (a history that starts mid-turn)
  form a turn without a user message (``Turn.user is None``).

A **cut** at index ``i`` keeps ``messages[i:]`` verbatim (plus the head and the pinned steps);
``cut_points`` lists every ``i`` where that keeps tool calls and results paired. The rest of the
module is pure arithmetic over those cut points. Nothing here raises on a malformed history: the
functions cut only where it is safe, and say so when no cut is.

**Pinned** messages are those whose index is passed in ``pinned`` or whose ``meta["pinned"]`` is
true. A cut never summarizes them away: a ``CutPoint`` lists the pinned messages before the cut
(``CutPoint.pinned``), extended to their whole step so that pairing holds, and ``apply`` sends them
verbatim between the head and the kept tail. Their tokens are not part of ``keep_recent_tokens``
(the caller counts them against the budget).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from abridged.core.model import Message, Reasoning, Text, ToolCall, ToolResult
from abridged.errors import SettingError

TokenCount: TypeAlias = Callable[[Message], int]
"""Counts the tokens of one message (the estimator of ``abridged.core.tokens``, or any stand-in)."""

DEFAULT_MIN_SPLIT_TURN_MESSAGES = 5
"""A split turn's earlier part gets its own summary when it holds at least this many messages."""

TURN_REACH = 0.5
"""A turn start is within reach of the step cut when it keeps at least this share of keep_recent."""

UnitKind: TypeAlias = Literal["user", "step"]


# -- classification of single messages -----------------------------------------------------------


def is_tool_result_message(message: Message) -> bool:
    """Whether ``message`` carries tool results (role ``tool``, or a user message holding them)."""
    if message.role == "tool":
        return True
    return message.role == "user" and any(isinstance(p, ToolResult) for p in message.parts)


def is_user_message(message: Message) -> bool:
    """Whether ``message`` is a user message (role ``user``, no tool results): a turn start."""
    return message.role == "user" and not any(isinstance(p, ToolResult) for p in message.parts)


def is_reasoning_only(message: Message) -> bool:
    """Whether ``message`` is an assistant message holding nothing but ``Reasoning`` parts."""
    return (
        message.role == "assistant"
        and bool(message.parts)
        and all(isinstance(p, Reasoning) for p in message.parts)
    )


def is_pinned(message: Message) -> bool:
    """Whether ``message`` is pinned through its metadata (``meta["pinned"]`` is true)."""
    return bool(message.meta.get("pinned", False))


def unanswered_tool_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """The tool calls of the last assistant message that calls tools and of what follows it
    that have no result after them (a turn stopped between a call and its result).

    >>> unanswered_tool_calls([Message.user("hi")])
    []
    """
    start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].tool_calls), None)
    if start is None:
        return []
    answered = {r.call_id for m in messages[start:] for r in m.tool_results}
    return [c for m in messages[start:] for c in m.tool_calls if c.id not in answered]


def close_interrupted_calls(messages: Sequence[Message], text: str) -> list[Message]:
    """``messages`` with an error result (``text``) after every tool call that has none before
    the next message that is not a tool result: a run stopped between a call and its result
    (an interrupted agent, a recursion limit) leaves the history unpaired, and providers refuse
    it. The same list (not a copy) when nothing is missing.

    >>> call = Message("assistant", (ToolCall("c1", "ls"),))
    >>> [m.role for m in close_interrupted_calls([call, Message.user("go on")], "stopped")]
    ['assistant', 'tool', 'user']
    """
    out: list[Message] | None = None
    pending: list[ToolCall] = []

    def close(at: int) -> None:
        nonlocal out
        if out is None:
            out = list(messages[:at])
        out.extend(
            Message("tool", (ToolResult(c.id, c.name, (Text(text),), is_error=True),))
            for c in pending
        )
        pending.clear()

    for index, message in enumerate(messages):
        if message.role == "tool":
            answered = {r.call_id for r in message.tool_results}
            pending = [c for c in pending if c.id not in answered]
        elif pending:
            close(index)
        if message.tool_calls:
            pending = list(message.tool_calls)
        if out is not None:
            out.append(message)
    if pending:
        close(len(messages))
    if out is not None:
        return out
    return messages if isinstance(messages, list) else list(messages)


def head_length(messages: Sequence[Message]) -> int:
    """How many leading messages form the head (system and summary messages), never cut away."""
    n = 0
    for message in messages:
        if message.role == "system" or message.is_summary:
            n += 1
        else:
            break
    return n


# -- structure -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One model call: ``messages[start:end]``, an assistant message and its tool results.

    ``assistant`` is the index of the assistant message that made the calls (the last one of a
    reasoning-only chain), or ``None`` for stray messages at the start of a history that begins
    mid-step (their assistant message was cut away earlier).
    """

    start: int
    end: int
    assistant: int | None

    @property
    def size(self) -> int:
        """Number of messages in the step."""
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Turn:
    """``messages[start:end]``: a user message (index ``user``) and the steps that answer it.

    ``user`` is ``None`` for the turn of a history that begins mid-turn (before any user message).
    """

    start: int
    end: int
    user: int | None
    steps: tuple[Step, ...]

    @property
    def size(self) -> int:
        """Number of messages in the turn."""
        return self.end - self.start


#: A unit: ``(start, end, kind)``. A plain tuple of ints and a string, not a dataclass: a long
#: history has one per message or step, and CPython stops tracking such tuples at their first
#: collection, so they never count towards a full collection (which stops every thread, the
#: caller's event loop too, for a time that grows with the caller's heap).
_Unit: TypeAlias = tuple[int, int, UnitKind]


def _blocked(messages: Sequence[Message], head: int) -> list[bool]:
    """``blocked[i]``: cutting right before message ``i`` would break pairing or a reasoning chain.

    A call at ``a`` answered at ``r`` blocks every ``i`` in ``(a, r]``. A result is matched with the
    earliest unanswered call of the same id before it; calls never answered block nothing (cutting
    after them drops them), results never called block nothing either (the history was already
    broken there, and no cut can mend it).
    """
    n = len(messages)
    delta = [0] * (n + 2)
    open_calls: dict[str, list[int]] = {}
    for index in range(head, n):
        message = messages[index]
        for part in message.parts:
            if isinstance(part, ToolResult):
                waiting = open_calls.get(part.call_id)
                if waiting:
                    at = waiting.pop(0)
                    delta[at + 1] += 1
                    delta[index + 1] -= 1
                    if not waiting:  # answered: an empty list per call would outlive the loop
                        del open_calls[part.call_id]
        if message.role == "assistant":
            for call in message.tool_calls:
                open_calls.setdefault(call.id, []).append(index)
    blocked = [False] * n
    depth = 0
    for index in range(n):
        depth += delta[index]
        blocked[index] = depth > 0
    for index in range(head + 1, n):
        message = messages[index]
        if message.role == "assistant" and is_reasoning_only(messages[index - 1]):
            blocked[index] = True
    return blocked


def _units(messages: Sequence[Message], head: int | None = None) -> list[_Unit]:
    """The cuttable region split into user messages and steps, in order."""
    n = len(messages)
    if head is None:
        head = head_length(messages)
    if head >= n:
        return []
    blocked = _blocked(messages, head)
    starts = [head]
    for index in range(head + 1, n):
        message = messages[index]
        if blocked[index]:
            continue
        if is_user_message(message) or message.role == "assistant":
            starts.append(index)
    units: list[_Unit] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else n
        kind: UnitKind = "user" if is_user_message(messages[start]) else "step"
        units.append((start, end, kind))
    return units


def _step_of(messages: Sequence[Message], unit: _Unit) -> Step:
    start, end, _kind = unit
    assistant: int | None = None
    for index in range(start, end):
        if messages[index].role == "assistant":
            assistant = index
            if not is_reasoning_only(messages[index]):
                break
    return Step(start, end, assistant)


def split_steps(messages: Sequence[Message]) -> list[Step]:
    """The steps of the cuttable region, oldest first (user messages and the head are in none).

    >>> from abridged.core.model import ToolCall
    >>> msgs = [Message.system("s"), Message.user("go"),
    ...         Message.assistant(tool_calls=[ToolCall("c1", "ls")]), Message.tool("c1", "a.py"),
    ...         Message.assistant("done")]
    >>> [(s.start, s.end) for s in split_steps(msgs)]
    [(2, 4), (4, 5)]
    """
    return [_step_of(messages, u) for u in _units(messages) if u[2] == "step"]


def step_spans(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """``(start, end)`` of each step of ``split_steps``, oldest first: plain tuples (see
    ``_Unit``) for callers that need only the bounds of the steps of a long history.

    >>> from abridged.core.model import ToolCall
    >>> msgs = [Message.system("s"), Message.user("go"),
    ...         Message.assistant(tool_calls=[ToolCall("c1", "ls")]), Message.tool("c1", "a.py"),
    ...         Message.assistant("done")]
    >>> step_spans(msgs)
    [(2, 4), (4, 5)]
    """
    return [(start, end) for start, end, kind in _units(messages) if kind == "step"]


def split_turns(messages: Sequence[Message]) -> list[Turn]:
    """The turns of the cuttable region, oldest first (the head belongs to none).

    >>> from abridged.core.model import ToolCall
    >>> msgs = [Message.system("s"), Message.user("a"), Message.assistant("b"),
    ...         Message.user("c"), Message.assistant(tool_calls=[ToolCall("c1", "ls")]),
    ...         Message.tool("c1", "x"), Message.assistant("d")]
    >>> [(t.start, t.end, t.user, len(t.steps)) for t in split_turns(msgs)]
    [(1, 3, 1, 1), (3, 7, 3, 2)]
    """
    return _turns(messages, _units(messages))


def _turns(messages: Sequence[Message], units: Sequence[_Unit]) -> list[Turn]:
    turns: list[Turn] = []
    current: list[_Unit] = []

    def close() -> None:
        if not current:
            return
        start, _end, kind = current[0]
        user = start if kind == "user" else None
        steps = tuple(_step_of(messages, u) for u in current if u[2] == "step")
        turns.append(Turn(start, current[-1][1], user, steps))

    for unit in units:
        if unit[2] == "user":
            close()
            current = []
        current.append(unit)
    close()
    return turns


def cut_points(messages: Sequence[Message]) -> list[int]:
    """Every index ``i`` where the history may be cut (``messages[i:]`` kept), ascending.

    A cut point lies inside the cuttable region (after the head, before the last message) right
    before a user message or before the first assistant message of a step; never between a tool
    call and its result (parallel calls included), never between a reasoning-only assistant
    message and the assistant message it preceded, never before a tool result.

    >>> from abridged.core.model import ToolCall
    >>> msgs = [Message.system("s"), Message.user("a"),
    ...         Message.assistant(tool_calls=[ToolCall("c1", "ls"), ToolCall("c2", "pwd")]),
    ...         Message.tool("c1", "x"), Message.tool("c2", "/"), Message.assistant("done")]
    >>> cut_points(msgs)
    [2, 5]
    """
    return [start for start, _end, _kind in _units(messages)[1:]]


# -- cuts ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Where to cut a history, and what the cut means.

    - ``index``: the first message of the kept tail (``messages[index:]`` is kept verbatim).
      ``0`` when there is no cut (``none``): nothing is dropped.
    - ``head``: leading system/summary messages, always kept (``messages[:head]``).
    - ``history``: the messages to fold into the main summary.
    - ``splits_turn``: the cut falls inside a turn (before a step, not before a user message).
      ``turn_start`` is then the index of that turn's user message (or the first message of the
      region when the history begins mid-turn), and ``turn_prefix`` the turn's messages before the
      cut, user message included. ``summarize_turn_prefix`` says whether the prefix gets its own
      summary (at least ``min_split_turn_messages`` messages); when it does, ``history`` stops at
      ``turn_start``, otherwise it runs up to ``index``.
    - ``pinned``: indexes before the cut sent verbatim anyway (whole steps), in order.
    - ``kept_tokens`` / ``dropped_tokens``: tokens of the tail and of the cut region (pinned
      messages included in the dropped count, since the tail does not hold them).
    - ``reason``: how the cut was chosen (``"turn"``, ``"step"``, ``"force"``, ``"emergency"``...)
      or why there is none.
    """

    index: int
    head: int
    history: range
    splits_turn: bool = False
    turn_start: int | None = None
    turn_prefix: range | None = None
    summarize_turn_prefix: bool = False
    pinned: tuple[int, ...] = ()
    kept_tokens: int = 0
    dropped_tokens: int = 0
    forced: bool = False
    reason: str = ""

    @property
    def none(self) -> bool:
        """Whether no cut was found (nothing is dropped)."""
        return self.index == 0

    def kept_indexes(self, total: int) -> list[int]:
        """Indexes of the messages a context keeps after the cut, in order (``total`` messages)."""
        if self.none:
            return list(range(total))
        return [*range(self.head), *self.pinned, *range(self.index, total)]

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The messages kept after the cut: head, pinned steps, then the tail, in order."""
        return [messages[i] for i in self.kept_indexes(len(messages))]


@dataclass(frozen=True, slots=True)
class MinimalCut:
    """The last-resort emergency cut: the head, the pinned steps and the latest user message.

    ``kept`` lists the kept indexes in order; ``latest_user`` is ``None`` when the cuttable region
    holds no user message (then only the head and the pinned steps remain).
    """

    kept: tuple[int, ...]
    head: int
    latest_user: int | None
    pinned: tuple[int, ...]
    total: int

    @property
    def none(self) -> bool:
        """Whether nothing is dropped."""
        return len(self.kept) == self.total

    @property
    def dropped(self) -> tuple[int, ...]:
        """Indexes of the dropped messages, in order."""
        keep = set(self.kept)
        return tuple(i for i in range(self.total) if i not in keep)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The kept messages, in order."""
        return [messages[i] for i in self.kept]


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingError(name, value, f"an integer >= {minimum}")
    return value


class _Plan:
    """Structure and token sums of one history, shared by the cut functions."""

    def __init__(
        self,
        messages: Sequence[Message],
        count_tokens: TokenCount | None,
        pinned: Collection[int],
    ) -> None:
        self.messages = messages
        self.n = len(messages)
        self.head = head_length(messages)
        self.units = _units(messages, self.head)
        self.starts = [start for start, _end, _kind in self.units]
        self.cuts = self.starts[1:]
        self.suffix = [0] * (self.n + 1)
        if count_tokens is not None:
            for index in range(self.n - 1, self.head - 1, -1):
                self.suffix[index] = self.suffix[index + 1] + count_tokens(messages[index])
        self.pinned_messages = {
            i for i in range(self.head, self.n) if i in pinned or is_pinned(messages[i])
        }

    def unit_at(self, index: int) -> int:
        """Position in ``units`` of the unit holding message ``index`` (``index >= head``)."""
        return bisect.bisect_right(self.starts, index) - 1

    def pinned_before(self, cut: int) -> tuple[int, ...]:
        positions = sorted({self.unit_at(i) for i in self.pinned_messages if i < cut})
        out: list[int] = []
        for position in positions:
            start, end, _kind = self.units[position]
            out.extend(i for i in range(start, end) if i < cut)
        return tuple(out)

    def none(self, reason: str, *, forced: bool = False) -> CutPoint:
        return CutPoint(
            index=0,
            head=self.head,
            history=range(self.head, self.head),
            kept_tokens=self.suffix[self.head],
            forced=forced,
            reason=reason,
        )

    def cut(
        self, index: int, reason: str, *, min_split_turn_messages: int, forced: bool
    ) -> CutPoint:
        splits = self.units[self.unit_at(index)][2] != "user"
        turn_start: int | None = None
        prefix: range | None = None
        own_summary = False
        history_end = index
        if splits:
            turn_start = self.head
            for k in range(self.unit_at(index) - 1, -1, -1):
                if self.units[k][2] == "user":
                    turn_start = self.units[k][0]
                    break
            prefix = range(turn_start, index)
            own_summary = len(prefix) >= min_split_turn_messages
            if own_summary:
                history_end = turn_start
        pinned = self.pinned_before(index)
        return CutPoint(
            index=index,
            head=self.head,
            history=range(self.head, history_end),
            splits_turn=splits,
            turn_start=turn_start,
            turn_prefix=prefix,
            summarize_turn_prefix=own_summary,
            pinned=pinned,
            kept_tokens=self.suffix[index],
            dropped_tokens=self.suffix[self.head] - self.suffix[index],
            forced=forced,
            reason=reason,
        )


def find_cut_point(
    messages: Sequence[Message],
    keep_recent_tokens: int,
    count_tokens: TokenCount,
    *,
    min_split_turn_messages: int = DEFAULT_MIN_SPLIT_TURN_MESSAGES,
    force: bool = False,
    pinned: Collection[int] = (),
) -> CutPoint:
    """Where to cut ``messages`` so that about ``keep_recent_tokens`` stay verbatim.

    The rule, deterministic and pure:

    1. Tokens are counted over the cuttable region only (the head and pinned steps are kept
       anyway). When the whole region holds at most ``keep_recent_tokens``, there is nothing to
       cut and the result is ``none``, unless ``force``.
    2. **Step cut**: walking back from the newest message, the cut lands on the oldest cut point
       whose tail still holds at most ``keep_recent_tokens``, so the kept tail never exceeds the
       keep (the budget can rely on it). When even the last step or user message alone is larger,
       the cut keeps just that (the last cut point): a cut always keeps something.
    3. **Turn preference**: when the step cut falls inside a turn, the nearest later turn start
       is taken instead if it is *within reach*: it keeps at least ``TURN_REACH`` (half) of
       ``keep_recent_tokens``. Earlier turn starts are never taken (they would keep more than the
       keep). An agent session of one task and many steps has no later turn start, so its cut
       splits the turn: that is expected, and reported.
    4. **Split turn**: ``splits_turn``, ``turn_start`` and ``turn_prefix`` describe the turn's
       earlier part; it gets its own summary when it holds at least ``min_split_turn_messages``.
    5. **Force** (manual compaction, emergency): when the region is under the keep, cut anyway at
       the latest turn start that leaves something to drop; when the region is a single turn, at
       its latest step (keeping at least the last step, or the last user message).

    A history with no cut point (empty, or a single user message or step after the head) gives
    ``none``; this function never raises on a malformed history. ``SettingError`` is raised only
    for ``keep_recent_tokens < 0`` or ``min_split_turn_messages < 1``.
    """
    _check_int("keep_recent_tokens", keep_recent_tokens, 0)
    _check_int("min_split_turn_messages", min_split_turn_messages, 1)
    plan = _Plan(messages, count_tokens, pinned)
    if not plan.cuts:
        return plan.none("no valid cut point", forced=force)
    suffix = plan.suffix
    if suffix[plan.head] <= keep_recent_tokens:
        if not force:
            return plan.none("under keep_recent_tokens")
        turn_cuts = [c for c in plan.cuts if is_user_message(messages[c])]
        cut = turn_cuts[-1] if turn_cuts else plan.cuts[-1]
        return plan.cut(
            cut,
            "force: turn" if turn_cuts else "force: step",
            min_split_turn_messages=min_split_turn_messages,
            forced=True,
        )
    # Cut points ascend and their suffix sums descend: find the first one within the keep.
    cut = plan.cuts[-1]
    position = len(plan.cuts) - 1
    for k, candidate in enumerate(plan.cuts):
        if suffix[candidate] <= keep_recent_tokens:
            cut, position = candidate, k
            break
    reason = "turn" if is_user_message(messages[cut]) else "step"
    if reason == "step":
        for candidate in plan.cuts[position + 1 :]:
            if is_user_message(messages[candidate]):
                if suffix[candidate] >= TURN_REACH * keep_recent_tokens:
                    cut, reason = candidate, "turn"
                break
    return plan.cut(cut, reason, min_split_turn_messages=min_split_turn_messages, forced=force)


def emergency_drop_oldest_steps(
    messages: Sequence[Message],
    count_tokens: TokenCount | None = None,
    *,
    pinned: Collection[int] = (),
    min_split_turn_messages: int = DEFAULT_MIN_SPLIT_TURN_MESSAGES,
) -> CutPoint:
    """Emergency cut: drop the oldest half of the steps (rounded down, at least one).

    With ``S >= 2`` steps in the cuttable region, the cut falls before step ``S // 2``; when that
    step is the first of its turn, before the turn's user message instead (the same steps are
    dropped, the user message stays with its answer). Fewer than two steps give ``none``.
    ``count_tokens`` only fills ``kept_tokens``/``dropped_tokens`` (zero without it).
    """
    _check_int("min_split_turn_messages", min_split_turn_messages, 1)
    plan = _Plan(messages, count_tokens, pinned)
    steps = [k for k, u in enumerate(plan.units) if u[2] == "step"]
    if len(steps) < 2:
        return plan.none("fewer than two steps", forced=True)
    position = steps[len(steps) // 2]
    if position > 0 and plan.units[position - 1][2] == "user":
        position -= 1
    return plan.cut(
        plan.units[position][0],
        f"emergency: dropped the oldest {len(steps) // 2} of {len(steps)} steps",
        min_split_turn_messages=min_split_turn_messages,
        forced=True,
    )


def emergency_minimal(messages: Sequence[Message], *, pinned: Collection[int] = ()) -> MinimalCut:
    """Last resort: keep only the head, the pinned steps and the latest user message.

    Pinned messages are kept with their whole step (or alone, for a user message), so pairing
    holds. When the cuttable region has no user message, only the head and pinned steps remain;
    the caller adds the summary.
    """
    plan = _Plan(messages, None, pinned)
    latest: int | None = None
    for index in range(plan.n - 1, plan.head - 1, -1):
        if is_user_message(messages[index]):
            latest = index
            break
    pinned_steps = plan.pinned_before(plan.n)
    kept = set(range(plan.head)) | set(pinned_steps)
    if latest is not None:
        kept.add(latest)
    return MinimalCut(
        kept=tuple(sorted(kept)),
        head=plan.head,
        latest_user=latest,
        pinned=pinned_steps,
        total=plan.n,
    )
