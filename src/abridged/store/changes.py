"""Changes of a conversation heard across processes: PostgreSQL ``NOTIFY`` / ``LISTEN``, and a
poll of the conversations' rows on SQLite (which has no notification channel).

A process that changed a conversation's context (a turn ended, a compaction committed, a prune)
announces it (``ChangeOps.announce_change``: one ``pg_notify`` on PostgreSQL, with a short
text of the announcer's own, such as the context's meter; nothing on SQLite); every process
that follows some conversations (``ChangeOps.follow_changes``) hears of it and is given the
conversation's id and that text. On SQLite the follower reads the watched conversations' rows
every ``poll`` seconds instead and reports each whose state (version, next sequence number,
current session) moved since the last read, or that it reads for the first time, with no
text; it hears of its own process's changes too: the caller tells them apart (by comparing
with the state its copy has).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection
from typing import Any

from sqlalchemy import select, text

from abridged.store.base import StoreBase
from abridged.store.connect import transaction
from abridged.store.schema import conversations

__all__ = ["CHANNEL", "ChangeFeed", "ChangeOps"]

log = logging.getLogger("abridged.store.changes")

#: The PostgreSQL notification channel (payload: origin, storage id, the announcer's text).
CHANNEL = "abridged_conversation_changed"
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")
#: The longest text sent with an announcement (PostgreSQL takes 8,000 bytes a payload): a
#: longer one is left out, and the followers are told of the change alone.
MAX_NOTE = 7_000
#: Seconds between two reads of the watched conversations on SQLite.
POLL_SECONDS = 1.0
#: Seconds a closing feed waits for its poll to end between two reads before cancelling it.
STOP_WAIT_SECONDS = 10.0
#: Seconds before a lost PostgreSQL listener connects again.
RECONNECT_SECONDS = 2.0

Mark = tuple[int, int, str | None]


class ChangeFeed:
    """A running follower of changes (``ChangeOps.follow_changes``); ``close`` stops it.
    ``ready`` is set once it hears changes: its listener registered (PostgreSQL), its first
    poll read (SQLite). A change made before may go unheard on PostgreSQL."""

    def __init__(
        self, task: asyncio.Task[None], ready: asyncio.Event, stop: asyncio.Event | None = None
    ) -> None:
        self._task = task
        self.ready = ready
        self._stop = stop

    async def close(self) -> None:
        """Stop following. A poll asked to stop ends between two reads (cancelled in the
        middle of one, the SQLite driver's thread would answer a loop that may be gone); a
        poll that does not end within ``STOP_WAIT_SECONDS``, and a listener, are cancelled."""
        if self._stop is not None:
            self._stop.set()
            await asyncio.wait({self._task}, timeout=STOP_WAIT_SECONDS)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task


class ChangeOps(StoreBase):
    """``announce_change`` and ``follow_changes``."""

    async def announce_change(
        self, conversation_id: str, *, origin: str = "", note: str = ""
    ) -> None:
        """Tell the other processes that ``conversation_id`` changed (PostgreSQL; on SQLite
        they find it by their poll). ``origin``: the announcer, whose own follower ignores the
        announcement (``follow_changes(ignore=...)``); ``note``: a text for the followers (left
        out above ``MAX_NOTE`` bytes)."""
        if len(note.encode("utf-8", "surrogatepass")) > MAX_NOTE:
            note = ""
        if self.dialect != "postgresql":
            return
        params = {"channel": CHANNEL, "payload": f"{origin} {conversation_id} {note}"}
        await self._run_alone(  # delivered when the statement's own commit is
            lambda conn: conn.execute(_NOTIFY, params), mode="write", operation="announce_change"
        )

    def follow_changes(
        self,
        watched: Callable[[], Collection[str]],
        on_change: Callable[[str, str | None], None],
        *,
        ignore: str | None = None,
        poll: float = POLL_SECONDS,
    ) -> ChangeFeed:
        """Call ``on_change(conversation_id, note)`` for each change of a conversation in
        ``watched()`` (called at each notification or poll) made by another process, until the
        feed is closed (on PostgreSQL, announcements by ``ignore`` are left out and ``note``
        is the announcer's text, ``None`` when it sent none; on SQLite every change is
        reported, this process's own too, with ``None``, and so is each conversation when the
        poll first reads it). Needs a running event loop."""
        ready = asyncio.Event()
        if self.dialect == "postgresql":
            listening = self._listen(watched, on_change, ignore, poll, ready)
            return ChangeFeed(asyncio.ensure_future(listening), ready)
        stop = asyncio.Event()
        polling = self._poll(watched, on_change, poll, ready, stop)
        return ChangeFeed(asyncio.ensure_future(polling), ready, stop)

    async def _listen(
        self,
        watched: Callable[[], Collection[str]],
        on_change: Callable[[str, str | None], None],
        ignore: str | None,
        poll: float,
        ready: asyncio.Event,
    ) -> None:
        def heard(_conn: object, _pid: int, _channel: str, payload: str) -> None:
            origin, _, rest = payload.partition(" ")
            cid, _, note = rest.partition(" ")
            if (ignore is None or origin != ignore) and cid in watched():
                on_change(cid, note or None)

        await self.open()
        while True:
            try:
                async with self._engine.connect() as conn:
                    raw: Any = (await conn.get_raw_connection()).driver_connection
                    await raw.add_listener(CHANNEL, heard)
                    ready.set()
                    try:
                        while not raw.is_closed():
                            await asyncio.sleep(poll)
                    finally:
                        with contextlib.suppress(Exception):
                            await raw.remove_listener(CHANNEL, heard)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the server went away: listen again when it is back
                log.warning("change listener lost its connection: %s", type(exc).__name__)
            await asyncio.sleep(RECONNECT_SECONDS)

    async def _poll(
        self,
        watched: Callable[[], Collection[str]],
        on_change: Callable[[str, str | None], None],
        poll: float,
        ready: asyncio.Event,
        stop: asyncio.Event,
    ) -> None:
        seen: dict[str, Mark] = {}
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), poll)
            if stop.is_set():
                return
            ids = sorted(watched())
            if not ids:
                seen.clear()
                ready.set()
                continue
            try:
                marks = await self._marks(ids)
            except Exception as exc:  # a busy or missing file: try again at the next poll
                log.warning("change poll failed: %s", type(exc).__name__)
                continue
            # first sight counts as a change too: a change made between the watcher's
            # subscribing and this feed's first read would be taken as the baseline and never
            # reported (the watcher's worker reads its copy again only when the store moved on)
            for cid, mark in marks.items():
                if seen.get(cid) != mark:
                    on_change(cid, None)
            seen = marks
            ready.set()

    async def _marks(self, ids: list[str]) -> dict[str, Mark]:
        stmt = select(
            conversations.c.id,
            conversations.c.version,
            conversations.c.next_seq,
            conversations.c.current_session_id,
        ).where(conversations.c.id.in_(ids))
        async with transaction(self._engine, "read", operation="poll_changes") as conn:
            rows = (await conn.execute(stmt)).all()
        return {str(r[0]): (int(r[1]), int(r[2]), r[3]) for r in rows}
