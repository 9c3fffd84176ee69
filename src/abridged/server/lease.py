"""Holding a conversation's turn lease: take it (waiting while another holder has it), renew
it in the background, give it back; the service's turns and the proxy's requests both hold it
so, see ``abridged.store.leases``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from abridged.errors import StoreError
from abridged.store import Store
from abridged.store.leases import TurnLease

log = logging.getLogger(__name__)

__all__ = [
    "HeldTurn",
    "LeaseRenewal",
    "LocalTurns",
    "TurnBusyError",
    "hold_turn",
    "new_holder",
    "take_turn",
]


class TurnBusyError(StoreError):
    """Another turn of the conversation kept its lease (too long, or the caller would not
    wait)."""


def new_holder(worker: str) -> str:
    """A lease holder name unique to one turn of ``worker``."""
    return f"{worker}:{uuid.uuid4().hex[:12]}"


@dataclass(slots=True)
class HeldTurn:
    """A lease held: ``lease`` as taken; ``lost`` is set when a renewal found it taken over."""

    lease: TurnLease
    waited: bool
    lost: asyncio.Event = field(default_factory=asyncio.Event)


class LeaseRenewal:
    """Renews a held lease every ``ttl / 3`` seconds until ``stop``; when a renewal finds it
    taken over, ``lost`` is set and ``on_lost`` called (the holder should stop). A store error
    in a renewal is tried again at the next period.

    The first renewal starts only when it is due: most turns of the proxy are over by then,
    and a task made and stepped at every request costs more than a timer. Made on a running
    event loop (it sets the timer there). ``stop`` does not wait for a renewal under way: one
    that lands after the lease was given back changes nothing (a renewal only extends a lease
    its holder still holds)."""

    def __init__(
        self,
        store: Store,
        conversation_id: str,
        holder: str,
        *,
        ttl: float,
        on_lost: Callable[[], None] = lambda: None,
    ) -> None:
        self.lost = asyncio.Event()
        self._store = store
        self._conversation_id = conversation_id
        self._holder = holder
        self._ttl = ttl
        self._on_lost = on_lost
        self._task: asyncio.Task[None] | None = None
        self._timer = asyncio.get_running_loop().call_later(ttl / 3, self._start)

    def _start(self) -> None:
        self._task = asyncio.ensure_future(self._renew())

    async def renew(self) -> bool:
        """One renewal: whether the lease is still held. When it was taken over, ``lost`` is
        set and ``on_lost`` called (once); a store error counts as held (the next period tries
        again)."""
        if self.lost.is_set():
            return False
        try:
            held = (
                await self._store.renew_turn(self._conversation_id, self._holder, ttl=self._ttl)
                is not None
            )
        except Exception:  # a store hiccup: try again at the next period
            return True
        if not held:
            self.lost.set()
            try:
                self._on_lost()
            except Exception:  # the lease is lost either way; say why the reaction failed
                log.exception("reacting to the lost lease of %s failed", self._conversation_id)
        return held

    async def _renew(self) -> None:
        while await self.renew():
            await asyncio.sleep(self._ttl / 3)

    def stop(self) -> None:
        """No renewal after this."""
        self._timer.cancel()
        if self._task is not None:
            self._task.cancel()


async def take_turn(
    store: Store,
    conversation_id: str,
    holder: str,
    *,
    owner: str | None = None,
    ttl: float = 30.0,
    wait: float | None = 600.0,
    message_id: str | None = None,
    on_wait: Callable[[], None] = lambda: None,
    busy_hint: str = "",
) -> TurnLease:
    """Take the turn lease of a conversation (``Store.acquire_turn``, its ``owner`` and
    ``message_id`` passed on).

    Waits (polling, 10 ms doubling to 200 ms) while another holder's lease is live, at most
    ``wait`` seconds (``0`` or ``None``: not at all), then ``TurnBusyError`` (``busy_hint``
    added to its message); ``on_wait`` is called once when it has to wait.
    """
    deadline = time.monotonic() + (wait or 0.0)
    delay = 0.01
    waited = False
    while True:
        lease = await store.acquire_turn(
            conversation_id, holder, ttl=ttl, owner=owner, message_id=message_id
        )
        if lease is not None:
            return lease
        if not wait:
            raise TurnBusyError(
                "a turn of this conversation is running" + busy_hint,
                conversation_id=conversation_id,
            )
        if not waited:  # told before a time-out too: a waiter always hears it waited
            waited = True
            on_wait()
        if time.monotonic() >= deadline:
            raise TurnBusyError(
                f"another turn kept the conversation for {wait:g} s" + busy_hint,
                conversation_id=conversation_id,
            )
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.2)


@asynccontextmanager
async def hold_turn(
    store: Store,
    conversation_id: str,
    holder: str,
    *,
    owner: str | None = None,
    ttl: float = 30.0,
    wait: float | None = 600.0,
    on_wait: Callable[[], None] = lambda: None,
    on_lost: Callable[[], None] = lambda: None,
) -> AsyncIterator[HeldTurn]:
    """Hold the turn lease of a conversation for the ``async with`` block: ``take_turn``,
    then a ``LeaseRenewal`` (``on_lost`` when a renewal finds it taken over: the block should
    stop), then give it back at exit."""
    waited = False

    def waiting() -> None:
        nonlocal waited
        waited = True
        on_wait()

    lease = await take_turn(
        store, conversation_id, holder, owner=owner, ttl=ttl, wait=wait, on_wait=waiting
    )
    renewal = LeaseRenewal(store, conversation_id, holder, ttl=ttl, on_lost=on_lost)
    try:
        yield HeldTurn(lease, waited, renewal.lost)
    finally:
        renewal.stop()
        with contextlib.suppress(Exception):
            await store.release_turn(conversation_id, holder)


class LocalTurns:
    """The turns of one worker, in front of the store's lease: a turn of a conversation waits
    here while an earlier turn in the same worker still holds (or is giving back) the lease,
    and is woken the moment it is done, instead of finding the lease taken and polling the
    store. Turns in other workers still meet at the store's lease."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        """Hold ``key``'s turn in this worker for the ``async with`` block."""
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
