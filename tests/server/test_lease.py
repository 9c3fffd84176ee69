"""Holding a turn lease (``server.lease``), as the service's turns and the proxy's requests do:
waiting for it, giving up, renewing it, noticing it was lost, giving it back. A real SQLite
store, real time (leases of a fraction of a second)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from abridged.server.lease import LeaseRenewal, TurnBusyError, hold_turn, take_turn
from abridged.store import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    s = Store(str(tmp_path / "lease.db"))
    await s.open()
    try:
        yield s
    finally:
        await s.close()


async def _conversation(store: Store) -> str:
    return (await store.create_conversation(owner="t")).id


async def test_a_held_lease_refuses_a_taker_that_will_not_wait(store: Store) -> None:
    cid = await _conversation(store)
    assert await take_turn(store, cid, "a", owner="t", wait=0) is not None
    with pytest.raises(TurnBusyError, match=r"is running \(try later\)") as caught:
        await take_turn(store, cid, "b", owner="t", wait=0, busy_hint=" (try later)")
    assert caught.value.context["conversation_id"] == cid
    assert (await store.turn_lease(cid)).holder == "a"


async def test_a_taker_waits_for_the_holder_and_is_told_once(store: Store) -> None:
    cid = await _conversation(store)
    await take_turn(store, cid, "a", owner="t")
    waits: list[float] = []
    taking = asyncio.ensure_future(
        take_turn(store, cid, "b", owner="t", wait=5, on_wait=lambda: waits.append(1))
    )
    await asyncio.sleep(0.15)  # several polls
    assert not taking.done()
    await store.release_turn(cid, "a")
    lease = await asyncio.wait_for(taking, 5)
    assert lease.holder == "b"
    assert waits == [1]


async def test_a_taker_gives_up_after_its_wait(store: Store) -> None:
    cid = await _conversation(store)
    await take_turn(store, cid, "a", owner="t")
    started = time.monotonic()
    with pytest.raises(TurnBusyError, match=r"kept the conversation for 0\.2 s"):
        await take_turn(store, cid, "b", owner="t", wait=0.2)
    assert time.monotonic() - started >= 0.2


async def test_a_renewal_keeps_a_short_lease_past_its_time(store: Store) -> None:
    cid = await _conversation(store)
    ttl = 0.6  # renewed every 0.2 s: a stall of the loop under 0.4 s is tolerated
    await take_turn(store, cid, "a", owner="t", ttl=ttl)
    renewal = LeaseRenewal(store, cid, "a", ttl=ttl)
    try:
        await asyncio.sleep(ttl * 3)  # three lifetimes: expired unless renewed
        assert await store.acquire_turn(cid, "b", ttl=ttl) is None
        assert not renewal.lost.is_set()
    finally:
        renewal.stop()
    await asyncio.sleep(ttl * 2)  # stopped: it expires
    assert await store.acquire_turn(cid, "b", ttl=ttl) is not None


async def test_a_renewal_that_finds_the_lease_taken_over_says_so(store: Store) -> None:
    cid = await _conversation(store)
    ttl = 0.3
    await take_turn(store, cid, "a", owner="t", ttl=ttl)
    lost: list[str] = []
    renewal = LeaseRenewal(store, cid, "a", ttl=ttl, on_lost=lambda: lost.append(cid))
    try:
        await store.release_turn(cid, "a")  # as if it had expired and another took it
        assert await store.acquire_turn(cid, "b", ttl=30) is not None
        await asyncio.wait_for(renewal.lost.wait(), 5)
        assert lost == [cid]
    finally:
        renewal.stop()
    assert (await store.turn_lease(cid)).holder == "b"


async def test_hold_turn_gives_the_lease_back_even_when_the_block_fails(store: Store) -> None:
    cid = await _conversation(store)
    with pytest.raises(RuntimeError, match="boom"):
        async with hold_turn(store, cid, "a", owner="t") as held:
            assert held.lease.holder == "a" and not held.waited
            raise RuntimeError("boom")
    lease = await store.acquire_turn(cid, "b", ttl=30)
    assert lease is not None and lease.took_over_from is None
