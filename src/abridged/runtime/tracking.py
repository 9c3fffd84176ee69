"""The caller's message list as a ContextManager follows it: new items, edits, system prompt.

Each call passes the whole list again. ``TrackedList.sync`` recognises the unchanged prefix and
reads only the new items, so a call costs O(new items):

- **Same list object as last time** (grown in place): spot checks at O(log n) positions (the
  last ones, then positions back at doubling distances, and the first two), by identity, then
  equality. A replaced item elsewhere goes unseen: use ``invalidate`` or ``verify="full"``.
- **A new list**: one ``list ==`` over the known prefix (identity first, then equality, in C).
- **The last context plus new items** (``ctx.messages + [reply]``): recognised against the
  context returned last time; the new items continue the history.
- **Otherwise** the first differing item is found, everything from it is forgotten and re-read,
  and ``Change.edited`` tells the manager to re-plan from there. A change confined to the leading
  system messages (same count) is ``Change.head``: the compaction state stays valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from abridged.core.model import Message, Opaque
from abridged.core.turns import head_length
from abridged.errors import FormatError
from abridged.runtime.caller_formats import (
    Format,
    detect_format,
    read_item,
    read_items,
    read_system,
    responses_assistant_side,
)
from abridged.runtime.token_sums import TokenSums

Verify: TypeAlias = Literal["auto", "spot", "full"]
VERIFY_MODES: tuple[Verify, ...] = ("auto", "spot", "full")


@dataclass(frozen=True, slots=True)
class Change:
    """What ``sync`` found besides the appended items.

    - ``appended_at``: the history length before the new items.
    - ``edited``: the first history index whose message changed or was dropped (``None``: the
      known prefix is intact).
    - ``head``: the leading system messages were replaced in place (same count).
    - ``reread``: the whole list was read again in another format (same content).
    """

    appended_at: int
    edited: int | None = None
    head: bool = False
    reread: bool = False


def spot_positions(low: int, high: int) -> Iterator[int]:
    """``high - 1``, ``high - 2``, ``high - 3``, ``high - 5``, ``high - 9``, ... down to ``low``,
    then ``low`` and ``low + 1``: O(log n) positions, densest where lists usually change.

    >>> list(spot_positions(0, 20))
    [19, 18, 17, 15, 11, 3, 0, 1]
    """
    step = 1
    position = high - 1
    while position >= low:
        yield position
        position = high - 1 - step
        step *= 2
    yield from range(low, min(high, low + 2))


def _holds_compaction(message: Message) -> bool:
    """Whether ``message`` holds the provider's own compaction (``Opaque.is_compaction``)."""
    return any(isinstance(p, Opaque) and p.is_compaction for p in message.parts)


class TrackedList:
    """The items of the caller's list, the messages read from them, and their token sums.

    ``items[j]`` is the caller's object; ``history[ends[j - 1]:ends[j]]`` the messages read
    from it (Anthropic items may give several); ``history[:offset]`` the system prompt passed
    separately (Anthropic). ``sums`` follows ``history``. Responses items read together as
    one message (a response's reasoning, calls and text) give it to the group's first item; the
    others have an empty range right after it. ``provider_compaction``: the history index of the
    last message holding the provider's own compaction (``None``: none).
    """

    def __init__(
        self, fmt: Format | None, verify: Verify, new_sums: Callable[[], TokenSums]
    ) -> None:
        self.fixed_format = fmt
        self.verify = verify
        self._new_sums = new_sums
        self.format: Format | None = fmt
        self.certain = fmt is not None
        self.reset()

    def reset(self) -> None:
        """Forget everything read (the format stays)."""
        self.items: list[Any] = []
        self.ends: list[int] = []
        self.history: list[Message] = []
        self.offset = 0
        self.system: Any = None
        self.names: dict[str, str] = {}
        self.provider_compaction: int | None = None
        self.sums = self._new_sums()
        self.last_in: Sequence[Any] | None = None
        self.last_out: list[Any] | None = None

    # -- reading -------------------------------------------------------------------------------

    def append(self, items: Sequence[Any]) -> None:
        """Read ``items`` (appended to the caller's list) into the history."""
        if not items:
            return
        fmt = self.format or "openai"
        start = len(self.history)
        base = len(self.items)
        k = 0
        while k < len(items):
            size = 1
            if fmt == "responses" and responses_assistant_side(items[k]):
                while k + size < len(items) and responses_assistant_side(items[k + size]):
                    size += 1
            group = items[k : k + size]
            self.history.extend(read_items(fmt, group, base + k, self.names))
            self.items.extend(group)
            self.ends.extend([len(self.history)] * size)
            k += size
        self.sums.extend(self.history[start:])
        for index in range(start, len(self.history)):
            if _holds_compaction(self.history[index]):
                self.provider_compaction = index

    def append_messages(self, messages: Sequence[Message]) -> None:
        """Take ``messages`` as they are, each its own item (a ``Conversation``'s history: its
        messages are already read, named and stored)."""
        start = len(self.history)
        self.items.extend(messages)
        self.history.extend(messages)
        self.ends.extend(range(start + 1, len(self.history) + 1))
        self.sums.extend(messages)
        for index in range(start, len(self.history)):
            if _holds_compaction(self.history[index]):
                self.provider_compaction = index

    def group_start(self, item_index: int) -> int:
        """The first item of the group ``item_index`` was read in (itself, unless it is one of
        a Responses group's later items, whose ranges are empty)."""
        while (
            0 < item_index < len(self.ends) and self.ends[item_index] == self.ends[item_index - 1]
        ):
            item_index -= 1
        return item_index

    def truncate(self, item_index: int) -> int:
        """Forget the items from ``item_index`` on (from its group's first item); the history
        length that remains."""
        item_index = self.group_start(item_index)
        length = self.ends[item_index - 1] if item_index > 0 else self.offset
        del self.items[item_index:]
        del self.ends[item_index:]
        del self.history[length:]
        self.sums.truncate(length)
        if self.provider_compaction is not None and self.provider_compaction >= length:
            self.provider_compaction = next(
                (i for i in range(length - 1, -1, -1) if _holds_compaction(self.history[i])),
                None,
            )
        self.last_out = None
        return length

    # -- recognising the caller's list -----------------------------------------------------------

    def _matches(
        self, items: Sequence[Any], ref: list[Any], low: int, high: int, *, full: bool
    ) -> bool:
        """Whether ``items[low:high]`` is ``ref[low:high]`` (see the module docstring)."""
        if full:
            part = items if (low, high) == (0, len(items)) else items[low:high]
            if not isinstance(part, list):
                part = list(part)
            return part == (ref if (low, high) == (0, len(ref)) else ref[low:high])
        adopt = ref is self.items
        for p in spot_positions(low, high):
            a, b = items[p], ref[p]
            if a is b:
                continue
            if a != b:
                return False
            if adopt:
                ref[p] = a  # equal content, the caller's object: identity next time
        return True

    def _first_difference(self, items: Sequence[Any]) -> int:
        known = self.items
        limit = min(len(items), len(known))
        for i in range(limit):
            a, b = items[i], known[i]
            if a is not b and a != b:
                return i
        return limit

    def _resolve_format(self, messages: Sequence[Any], system: Any) -> bool:
        """Settle the format; ``True`` when the list was re-read in a newly certain format."""
        if self.format is not None and self.certain:
            return False
        # the items already read were plain (ambiguous) text: only the new ones can settle it,
        # so a chat of plain messages costs O(new items) a call, not O(all)
        new = messages if self.format is None else messages[len(self.items) :]
        fmt, certain = detect_format(new, system=system)
        if self.format is None or fmt == self.format:
            self.format, self.certain = fmt, certain
            return False
        # The first calls were ambiguous (plain text): read everything again in the format now
        # certain. Plain text reads the same in both, so the compaction state stays valid.
        items = list(self.items)
        self.format, self.certain = fmt, certain
        self.reset()
        self.append(items)
        return True

    def sync(self, messages: Sequence[Any], system: Any) -> Change:
        """Bring the history in line with ``messages`` (and the system prompt)."""
        if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
            raise FormatError(
                f"messages is a {type(messages).__name__}",
                format=self.format or "auto",
                expected="a list of messages",
            )
        reread = self._resolve_format(messages, system)
        fmt = self.format or "openai"
        if fmt != "anthropic" and system is not None:
            raise FormatError(
                "a separate system prompt is only taken with the anthropic format",
                format=fmt,
                expected="system messages inside the list",
            )
        edited: int | None = None
        head = False
        if fmt == "anthropic" and system is not self.system and system != self.system:
            new_head = read_system(fmt, system)
            self.system = system
            if len(new_head) == self.offset:
                self.history[: self.offset] = new_head
                self._rebuild_sums()
                head = True
            else:
                items = list(self.items)
                self.reset()
                self.system = system
                self.history.extend(new_head)
                self.offset = len(new_head)
                self.sums.extend(new_head)
                self.append(items)
                edited = 0
        known = self.items
        k, m = len(known), len(messages)
        full = self.verify == "full" or (self.verify == "auto" and messages is not self.last_in)
        self.last_in = messages
        start = len(self.history)
        if m >= k and self._matches(messages, known, 0, k, full=full):
            self.append(messages[k:])
            return Change(start, edited, head, reread)
        out = self.last_out
        if out and m >= len(out) and self._matches(messages, out, 0, len(out), full=full):
            self.append(messages[len(out) :])
            return Change(start, edited, head, reread)
        d = self._first_difference(messages)
        count = head_length(self.history) if fmt != "anthropic" else 0
        if d < count <= m and m >= k and self._matches(messages, known, count, k, full=full):
            new_head = [msg for j in range(count) for msg in read_item(fmt, messages[j], j, {})]
            if len(new_head) == count == head_length(new_head):
                known[:count] = messages[:count]
                self.history[:count] = new_head
                self._rebuild_sums()
                self.append(messages[k:])
                return Change(start, edited, True, reread)
        d = self.group_start(d)
        length = self.truncate(d)
        self.append(messages[d:])
        edited = length if edited is None else min(edited, length)
        return Change(length, edited, head, reread)

    def _rebuild_sums(self) -> None:
        self.sums = self._new_sums()
        self.sums.extend(self.history)
