"""The inbox of a conversation: what arrived, in order, and the debounce that batches messages.

Every ``send`` becomes an ``Inbound`` item. User messages are stored at once with status
``queued`` (durable while they wait) unless a command waits before them (they are stored when
they reach the head, so that delivering the queued messages never jumps over a command). The
worker takes the items in order: a command alone, or a **batch**: every user message at the head
of the inbox, once none has arrived for the debounce window. The batch's messages are delivered
together (``Store.deliver``) and answered in one turn.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from abridged.core.model import Message
from abridged.store import StoredMessage

__all__ = ["Inbound", "Inbox"]

END: Any = object()
"""Put on an item's event queue after its last event."""


@dataclass(eq=False, slots=True)
class Inbound:
    """One thing sent to a conversation: a user ``message`` or a ``command`` line (a user item
    with no ``message`` asks for a turn over what the store holds queued).

    ``future`` gets the ``TurnResult``; ``events`` (when streaming) gets every event, then
    ``END``. ``stored`` is the task appending the message with status ``queued``.
    """

    kind: Literal["user", "command"]
    future: asyncio.Future[Any]
    message: Message | None = None
    command: str = ""
    events: asyncio.Queue[Any] | None = None
    arrived: float = field(default_factory=time.monotonic)
    stored: asyncio.Task[StoredMessage] | None = None

    def put(self, event: Any) -> None:
        """Give the streaming reader ``event`` (nothing when not streaming)."""
        if self.events is not None:
            self.events.put_nowait(event)

    def close(self) -> None:
        """Tell the streaming reader that nothing more comes."""
        if self.events is not None:
            self.events.put_nowait(END)


class Inbox:
    """Items waiting for the worker, oldest first."""

    def __init__(self) -> None:
        self._items: deque[Inbound] = deque()
        self.changed = asyncio.Event()

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Inbound]:
        return iter(self._items)

    def push(self, item: Inbound) -> None:
        """Add an item at the end."""
        self._items.append(item)
        self.changed.set()

    def head(self) -> Inbound | None:
        """The oldest item, if any."""
        return self._items[0] if self._items else None

    def has_command(self) -> bool:
        """Whether a command waits (user messages behind it are stored when they reach the
        head)."""
        return any(i.kind == "command" for i in self._items)

    def pop(self) -> Inbound:
        """Take the oldest item."""
        return self._items.popleft()

    def user_run(self) -> list[Inbound]:
        """The user messages at the head, up to the first command (not taken)."""
        out: list[Inbound] = []
        for item in self._items:
            if item.kind != "user":
                break
            out.append(item)
        return out

    def take_batch(self) -> list[Inbound]:
        """Take the user messages at the head, up to the first command."""
        batch = self.user_run()
        for _ in batch:
            self._items.popleft()
        return batch

    async def settle(self, window: float, *, clock: Any = time.monotonic) -> None:
        """Wait until no user message has joined the head's run for ``window`` seconds."""
        if window <= 0:
            return
        while True:
            run = self.user_run()
            if not run:
                return
            last = max(i.arrived for i in run)
            wait = last + window - clock()
            if wait <= 0:
                return
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), wait)
            except TimeoutError:
                continue

    def drain(self) -> list[Inbound]:
        """Take every item (closing the conversation)."""
        items = list(self._items)
        self._items.clear()
        return items
