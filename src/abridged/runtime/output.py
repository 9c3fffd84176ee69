"""The context in the caller's wire format, with the caller's own items wherever unchanged.

A compacted context is laid out by ``abridged.engine.context`` (system, summary, carried, pruned
region, tail); here it becomes wire items: the caller's objects for whole, unchanged items,
converted messages for the summary, pruned results and items a cut splits (an Anthropic user
message holding tool results and text). ``OutputCache`` builds it once per state, O(context),
then extends it with each call's new items, O(new).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from abridged.core.summary import summary_message
from abridged.core.turns import head_length
from abridged.engine.context import CompactionState
from abridged.runtime.caller_formats import write_messages
from abridged.runtime.tracking import TrackedList


def render_range(tracked: TrackedList, state: CompactionState, start: int, end: int) -> list[Any]:
    """History ``[start, end)`` as wire items (pruned results replaced)."""
    fmt = tracked.format or "openai"
    pruned = state.pruned
    ends, items, history = tracked.ends, tracked.items, tracked.history
    out: list[Any] = []
    j = bisect.bisect_right(ends, start)
    position = start
    while position < end and j < len(items):
        first = ends[j - 1] if j > 0 else tracked.offset
        last = ends[j]
        low, high = max(first, start), min(last, end)
        whole = low == first and high == last and not any(i in pruned for i in range(first, last))
        if whole:
            out.append(items[j])
        else:
            chunk = [pruned.get(i, history[i]) for i in range(low, high)]
            out.extend(write_messages(fmt, chunk))
        # the later items of a Responses group (empty ranges): sent with their group's message
        while j + 1 < len(items) and ends[j + 1] == last and last > first:
            j += 1
            if whole:
                out.append(items[j])
        position = high
        j += 1
    return out


def render_context(tracked: TrackedList, state: CompactionState) -> list[Any]:
    """The whole context of ``state`` as wire items (the system prompt apart, for Anthropic)."""
    fmt = tracked.format or "openai"
    history = tracked.history
    n = len(history)
    if not state.compacted:
        return render_range(tracked, state, tracked.offset, n)
    out: list[Any] = []
    head = min(head_length(history), state.cut)
    if fmt != "anthropic":
        out.extend(render_range(tracked, state, 0, head))
    carried = [i for i in state.carried if i >= head]
    leading = min(state.leading, len(carried))
    _render_runs(out, tracked, state, carried[:leading])
    if state.summary is not None:
        out.extend(write_messages(fmt, [summary_message(state.summary)]))
    _render_runs(out, tracked, state, carried[leading:])
    out.extend(render_range(tracked, state, state.cut, n))
    return out


def _render_runs(
    out: list[Any], tracked: TrackedList, state: CompactionState, indexes: Sequence[int]
) -> None:
    """Render ``indexes`` (ascending) into ``out``, each run of consecutive ones at once."""
    run: list[int] = []
    for index in [*indexes, -1]:
        if run and index != run[-1] + 1:
            out.extend(render_range(tracked, state, run[0], run[-1] + 1))
            run = []
        if index >= 0:
            run.append(index)


class OutputCache:
    """The wire context of the current state, built once and extended by new items."""

    def __init__(self) -> None:
        self._out: list[Any] | None = None
        self._items = 0

    def invalidate(self) -> None:
        """The state (or the items before the tail) changed: build again on next use."""
        self._out = None

    def get(self, tracked: TrackedList, state: CompactionState) -> list[Any]:
        """A fresh list holding the context (the caller may keep or change it)."""
        if self._out is None:
            self._out = render_context(tracked, state)
        elif self._items < len(tracked.items):
            self._out.extend(tracked.items[self._items :])
        self._items = len(tracked.items)
        return list(self._out)
