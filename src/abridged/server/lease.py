"""Holding a conversation's turn lease for a while: take it (waiting while another holder has
it), renew it in the background, give it back; the proxy's requests hold it so (the service's
turns have the same steps in ``server.runner``), see ``abridged.store.leases``."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from abridged.errors import StoreError
from abridged.store import Store
from abridged.store.leases import TurnLease

__all__ = ["HeldTurn", "LocalTurns", "TurnBusyError", "hold_turn", "new_holder"]


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


async def _renew(store: Store, held: HeldTurn, ttl: float, on_lost: Callable[[], None]) -> None:
    """Renew now, then every ``ttl / 3`` seconds, until cancelled or the lease is lost."""
    while True:
        try:
            renewed = await store.renew_turn(held.lease.conversation_id, held.lease.holder, ttl=ttl)
        except Exception:  # a store hiccup: try again at the next period
            renewed = held.lease
        if renewed is None:
            held.lost.set()
            on_lost()
            return
        await asyncio.sleep(ttl / 3)


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
    """Hold the turn lease of a conversation for the ``async with`` block.

    Waits (polling, 10 ms doubling to 200 ms) while another holder's lease is live, at most
    ``wait`` seconds (``0``: not at all), then ``TurnBusyError``; ``on_wait`` is called once
    when it has to wait. Renews every ``ttl / 3`` seconds; ``on_lost`` is called when a
    renewal finds the lease taken over (the block should stop). Gives the lease back at exit.
    """
    deadline = time.monotonic() + (wait or 0.0)
    delay = 0.01
    waited = False
    while True:
        lease = await store.acquire_turn(conversation_id, holder, ttl=ttl, owner=owner)
        if lease is not None:
            break
        if not wait or time.monotonic() >= deadline:
            raise TurnBusyError(
                "a turn of this conversation is running"
                + (f" (waited {wait:g} s)" if wait else ""),
                conversation_id=conversation_id,
            )
        if not waited:
            waited = True
            on_wait()
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.2)
    held = HeldTurn(lease, waited)
    # The renewal starts only when the first one is due: most turns of the proxy are over by
    # then, and a task made and stepped at every request costs more than a timer.
    renewing: asyncio.Task[None] | None = None

    def start() -> None:
        nonlocal renewing
        renewing = asyncio.ensure_future(_renew(store, held, ttl, on_lost))

    timer = asyncio.get_running_loop().call_later(ttl / 3, start)
    try:
        yield held
    finally:
        timer.cancel()
        if renewing is not None:
            renewing.cancel()
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
