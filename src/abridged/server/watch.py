"""Who watches a conversation's context, and the meter each watcher is sent when it changes.

``GET /v1/conversations/{id}/events`` subscribes; a conversation this worker keeps open
publishes its meter (``abridged.server.sse.meter_payload``) when a turn ends (the runner
says so) and whenever a compaction, a prune or an overflow recovery changed its context (its
``on_event``), also in the background after the turn's own stream has ended: the page's ring
follows it without polling. The meter is made after the compaction has been committed
(``Conversation.wait_compaction``), so it is the context the next call would send. Nothing
is computed for a conversation nobody watches here.

Across workers: once a change settled, it is announced with its meter (``announce``: the
pool's, through the store: PostgreSQL ``NOTIFY``), and the watchers here of a conversation
another worker changed (``heard``) are sent that worker's meter: the figure of the copy that
made the change. On SQLite (no notifications: the store polls the rows) a change comes with no
meter, and the watchers are sent the meter of this worker's copy read again from the store
(``refresh``): the same context, sized by this worker's estimate (the other's last provider
report is in its memory only).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from abridged.events.runtime import Notice
from abridged.runtime.overview import context_overview
from abridged.server.sse import meter_payload

__all__ = ["CONTEXT_EVENTS", "ContextWatch"]

#: The engine events after which the context is another.
CONTEXT_EVENTS = frozenset({"compaction_ended", "pruned", "overflow_recovered"})
#: Meters kept for a watcher that reads slowly (older ones are dropped: only the newest counts).
QUEUE_SIZE = 8
#: Conversations whose changes are counted (the oldest forgotten first).
MAX_COUNTED = 10_000


class ContextWatch:
    """Watchers by conversation id, each an ``asyncio.Queue`` of meter payloads.

    ``announce(id, meter)``: tell other workers of a change made here, once it settled;
    ``refresh(id)``:
    this worker's copy read again from the store after another worker's change (``None``: it
    has nothing new); ``follow()``: called at each subscription, to start hearing other
    workers' changes. Without them (the default) the watch is this worker's alone."""

    def __init__(
        self,
        *,
        announce: Callable[[str, dict[str, Any]], None] | None = None,
        refresh: Callable[[str], Awaitable[Any]] | None = None,
        follow: Callable[[], None] | None = None,
    ) -> None:
        self._announce = announce
        self._refresh = refresh
        self._follow = follow
        self._watchers: dict[str, set[asyncio.Queue[dict[str, Any]]]] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()  # changed again while their meter was being made
        self._getters: dict[str, Callable[[], Any]] = {}  # the open copy of a changed one
        self._to_announce: set[str] = set()  # changed here: announced once settled
        self._stale: set[str] = set()  # changed elsewhere: read again before the meter
        # changes seen per conversation, watched or not: a watcher that reconnects says the
        # last one it had, and hears at once of any it missed in between
        self._changes: dict[str, int] = {}

    def changes(self, conversation_id: str) -> int:
        """How many changes of the conversation this worker has seen (the meters' ``seq``)."""
        return self._changes.get(conversation_id, 0)

    def watching(self, conversation_id: str) -> bool:
        """Whether anybody watches ``conversation_id``."""
        return bool(self._watchers.get(conversation_id))

    def watched(self) -> frozenset[str]:
        """The conversations somebody watches here."""
        return frozenset(self._watchers)

    @contextlib.contextmanager
    def subscribe(self, conversation_id: str) -> Iterator[asyncio.Queue[dict[str, Any]]]:
        """A queue of the conversation's meters for the ``with`` block."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_SIZE)
        self._watchers.setdefault(conversation_id, set()).add(queue)
        if self._follow is not None:
            self._follow()
        try:
            yield queue
        finally:
            watchers = self._watchers.get(conversation_id)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    del self._watchers[conversation_id]

    def publish(self, conversation_id: str, payload: dict[str, Any]) -> None:
        """Send ``payload`` to every watcher (a full queue loses its oldest meter)."""
        for queue in self._watchers.get(conversation_id, ()):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(payload)

    def listener(
        self, conversation_id: str, convo: Callable[[], Any], then: Callable[[Any], object]
    ) -> Callable[[Any], None]:
        """An ``on_event`` for a conversation: ``then(event)`` first (the metrics), then, when
        the event changed the context and somebody watches, the meter once the compaction
        under way (if any) is committed. ``convo`` returns the open conversation (or ``None``).
        """

        def on_event(event: Any) -> None:
            then(event)
            if not self.watching(conversation_id) and self._announce is None:
                return
            inner = event.event if isinstance(event, Notice) else None
            if inner is not None and inner.kind in CONTEXT_EVENTS:
                self.changed(conversation_id, convo)

        return on_event

    def changed(self, conversation_id: str, convo: Callable[[], Any]) -> None:
        """The conversation's context changed here (a turn ended, a compaction or prune ran):
        its watchers get the meter once the compaction under way, if any, is committed, and
        the other workers hear of it (``announce``)."""
        self._getters[conversation_id] = convo
        if self._announce is not None:
            self._to_announce.add(conversation_id)
        self._settle(conversation_id)

    def heard(self, conversation_id: str, meter: dict[str, Any] | None = None) -> None:
        """Another worker changed the conversation: its watchers here get ``meter``, that
        worker's, or else the meter of this worker's copy read again from the store."""
        if not self.watching(conversation_id):
            return
        if meter is not None:
            self._count(conversation_id)
            self.publish(conversation_id, {**meter, "seq": self.changes(conversation_id)})
            return
        if self._refresh is None:
            return
        self._stale.add(conversation_id)
        self._settle(conversation_id)

    def _count(self, conversation_id: str) -> None:
        changes = self._changes
        changes[conversation_id] = changes.get(conversation_id, 0) + 1
        if len(changes) > MAX_COUNTED:
            del changes[next(iter(changes))]

    def _settle(self, conversation_id: str) -> None:
        self._count(conversation_id)
        if not self.watching(conversation_id) and conversation_id not in self._to_announce:
            self._getters.pop(conversation_id, None)
            return
        if conversation_id in self._pending:
            self._again.add(conversation_id)  # the meter under way may be older than this
            return
        task = asyncio.ensure_future(self._publish_when_settled(conversation_id))
        self._pending[conversation_id] = task
        task.add_done_callback(lambda _: self._pending.pop(conversation_id, None))

    async def _current(self, conversation_id: str) -> Any:
        """The copy to make the meter of: read again when another worker changed it."""
        if conversation_id in self._stale and self._refresh is not None:
            self._stale.discard(conversation_id)
            return await self._refresh(conversation_id)
        getter = self._getters.get(conversation_id)
        return getter() if getter is not None else None

    async def _publish_when_settled(self, conversation_id: str) -> None:
        try:
            while True:
                self._again.discard(conversation_id)
                await asyncio.sleep(0)  # the event's own step (a commit) goes first
                current = await self._current(conversation_id)
                if current is not None:
                    await current.wait_compaction()
                if conversation_id in self._again:
                    continue
                meter = self.meter(conversation_id, current) if current is not None else None
                if meter is not None and self.watching(conversation_id):
                    self.publish(conversation_id, meter)
                if conversation_id in self._to_announce and self._announce is not None:
                    self._to_announce.discard(conversation_id)
                    if meter is not None:
                        self._announce(
                            conversation_id, {k: v for k, v in meter.items() if k != "seq"}
                        )
                return
        finally:
            self._getters.pop(conversation_id, None)
            self._to_announce.discard(conversation_id)

    def meter(self, conversation_id: str, convo: Any) -> dict[str, Any]:
        """The meter of an open conversation now, with the change it follows (``seq``)."""
        return {**meter_payload(context_overview(convo)), "seq": self.changes(conversation_id)}
