"""The turn lease: one holder at a time, renewals, expiry and takeover, on both databases."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from abridged.core.model import Message, ToolCall, ToolResult
from abridged.errors import LeaseLostError, NotFoundError, OwnershipError, SettingError
from abridged.store import CallEntry, NewMessage, Store
from abridged.store import leases as lease_module
from tests.store.helpers import transactions


class Clock:
    """The lease's wall clock, moved by the test."""

    def __init__(self) -> None:
        self.ms = 1_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(lease_module, "now_ms", c)
    return c


async def test_one_holder_renewals_and_release(store: Store, clock: Clock) -> None:
    cid = (await store.create_conversation(owner="t")).id
    first = await store.acquire_turn(cid, "w1", ttl=10, owner="t")
    assert first is not None and first.took_over_from is None
    assert first.expires_ms == clock.ms + 10_000
    assert await store.acquire_turn(cid, "w2", ttl=10) is None
    assert (await store.turn_lease(cid)).holder == "w1"
    clock.ms += 5_000
    renewed = await store.renew_turn(cid, "w1", ttl=10)
    assert renewed is not None and renewed.expires_ms == clock.ms + 10_000
    again = await store.acquire_turn(cid, "w1", ttl=10)  # the holder may take it again
    assert again is not None and again.took_over_from is None
    assert await store.release_turn(cid, "w2") is False
    assert await store.release_turn(cid, "w1") is True
    assert (await store.turn_lease(cid)).holder is None
    assert await store.acquire_turn(cid, "w2", ttl=10) is not None


async def test_an_expired_lease_is_taken_over_and_its_holder_told(
    store: Store, clock: Clock
) -> None:
    cid = (await store.create_conversation()).id
    assert await store.acquire_turn(cid, "dead", ttl=3) is not None
    clock.ms += 2_999
    assert await store.acquire_turn(cid, "next", ttl=3) is None
    clock.ms += 2
    assert (await store.turn_lease(cid)).holder is None  # expired reads as free
    taken = await store.acquire_turn(cid, "next", ttl=3)
    assert taken is not None and taken.took_over_from == "dead"
    assert await store.renew_turn(cid, "dead", ttl=3) is None
    assert await store.release_turn(cid, "dead") is False
    assert (await store.turn_lease(cid)).holder == "next"


async def test_a_fenced_write_lands_only_while_its_holder_holds_the_lease(
    store: Store, clock: Clock
) -> None:
    """The fence: a write made under a lease (``holder=``) checks, in its own transaction,
    that the lease is still the writer's; once another worker took it over, the late write of
    the one it was taken from (a zombie: alive but stalled past its lease) is refused, typed,
    and nothing of it is stored."""
    cid = (await store.create_conversation(owner="t")).id
    assert await store.acquire_turn(cid, "zombie", ttl=3, owner="t") is not None
    call = Message("assistant", (ToolCall("c1", "ls"),), id="a1")
    await store.append(cid, Message.user("go", id="u1"), owner="t", holder="zombie")
    await store.append(cid, call, owner="t", holder="zombie")
    clock.ms += 3_001  # expired, not yet taken over: nobody else wrote, the holder still may
    await store.append(cid, Message.user("note", id="u2"), owner="t", holder="zombie")
    taken = await store.acquire_turn(cid, "next", ttl=3, owner="t")
    assert taken is not None and taken.took_over_from == "zombie"
    before = await store.stored_messages(cid, owner="t")
    late = Message("tool", (ToolResult("c1", "ls", "late"),), id="t1")
    with pytest.raises(LeaseLostError) as refused:
        await store.append(cid, late, owner="t", holder="zombie")
    assert refused.value.context["conversation_id"] == cid
    with pytest.raises(LeaseLostError):
        await store.append_many(cid, [NewMessage(late)], owner="t", holder="zombie")
    await store.append(cid, Message.user("queued", id="q1"), owner="t", status="queued")
    with pytest.raises(LeaseLostError):
        await store.deliver(cid, owner="t", holder="zombie")
    after = await store.stored_messages(cid, owner="t")
    assert [m.message.id for m in after] == [m.message.id for m in before] + ["q1"]
    assert after[-1].seq is None  # not delivered by the refused deliver
    # the holder writes; the ownership check still comes first
    await store.append(cid, late, owner="t", holder="next")
    assert [m.message.id for m in await store.deliver(cid, owner="t", holder="next")] == ["q1"]
    with pytest.raises(OwnershipError):
        await store.append(cid, late, owner="other", holder="next")
    with pytest.raises(NotFoundError):
        await store.append("nope", late, holder="next")
    # a released lease fences as well: the turn that held it is over
    assert await store.release_turn(cid, "next")
    with pytest.raises(LeaseLostError):
        await store.append(cid, Message.user("after", id="u3"), owner="t", holder="next")


async def test_owner_and_bad_arguments(store: Store, clock: Clock) -> None:
    cid = (await store.create_conversation(owner="acme")).id
    with pytest.raises(OwnershipError):
        await store.acquire_turn(cid, "w", owner="globex")
    with pytest.raises(NotFoundError):
        await store.acquire_turn("nope", "w")
    with pytest.raises(SettingError):
        await store.acquire_turn(cid, "", ttl=1)
    with pytest.raises(SettingError):
        await store.acquire_turn(cid, "w", ttl=0)
    assert (await store.turn_lease(cid)).holder is None


async def test_concurrent_acquirers_exactly_one_wins(store: Store) -> None:
    cid = (await store.create_conversation()).id
    won = await asyncio.gather(*(store.acquire_turn(cid, f"w{i}", ttl=30) for i in range(20)))
    winners = [w for w in won if w is not None]
    assert len(winners) == 1
    assert (await store.turn_lease(cid)).holder == winners[0].holder


OPS = st.lists(
    st.tuples(
        st.sampled_from(["acquire", "renew", "release", "tick"]),
        st.sampled_from(["a", "b", "c"]),
        st.integers(min_value=0, max_value=4_000),
    ),
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_never_two_live_holders(
    store_url_for_properties: str, ops: list[tuple[str, str, int]]
) -> None:
    """Against a model of the lease (a fake clock): whatever the order of acquisitions,
    renewals, releases and the passing of time, at most one holder is live, and the store
    agrees with the model at every step."""

    async def run() -> None:
        clock = Clock()
        original = lease_module.now_ms
        lease_module.now_ms = clock  # type: ignore[assignment]
        store = Store(store_url_for_properties)
        try:
            cid = (await store.create_conversation()).id
            holder: str | None = None
            expires = 0
            for op, who, ms in ops:
                live = holder if holder is not None and expires >= clock.ms else None
                if op == "tick":
                    clock.ms += ms
                elif op == "acquire":
                    got = await store.acquire_turn(cid, who, ttl=2)
                    assert (got is not None) == (live in (None, who))
                    if got is not None:
                        assert got.took_over_from == (holder if holder not in (None, who) else None)
                        holder, expires = who, clock.ms + 2_000
                elif op == "renew":
                    got = await store.renew_turn(cid, who, ttl=2)
                    assert (got is not None) == (holder == who)
                    if got is not None:
                        expires = clock.ms + 2_000
                else:
                    released = await store.release_turn(cid, who)
                    assert released == (holder == who)
                    if released:
                        holder = None
                now_live = holder if holder is not None and expires >= clock.ms else None
                assert (await store.turn_lease(cid)).holder == now_live
        finally:
            lease_module.now_ms = original
            await store.close()

    asyncio.run(run())


@pytest.fixture
def store_url_for_properties(db_url: str) -> str:
    return db_url


async def test_queue_turn_stores_the_message_and_takes_a_free_lease_in_one_transaction(
    store: Store, clock: Clock
) -> None:
    """What a send of the service does first (issue 30: one transaction where it made two)."""
    cid = (await store.create_conversation(owner="t")).id
    with transactions(store) as begun:
        stored, lease = await store.queue_turn(
            cid, Message.user("hi", id="m-1"), "w1", ttl=10, owner="t"
        )
    assert len(begun) == 1
    assert stored.status == "queued" and stored.seq is None and stored.message.id == "m-1"
    assert lease is not None and lease.holder == "w1" and lease.expires_ms == clock.ms + 10_000
    assert lease.message == stored
    assert lease.conversation is not None and lease.conversation.id == cid
    # the lease is live: the next send is stored all the same, without it
    second, none = await store.queue_turn(cid, Message.user("more", id="m-2"), "w2", owner="t")
    assert none is None and second.status == "queued"
    assert (await store.turn_lease(cid)).holder == "w1"
    # a retried send gives back the stored row, never a second copy
    again, _ = await store.queue_turn(cid, Message.user("hi", id="m-1"), "w2", owner="t")
    assert again.pk == stored.pk
    delivered = await store.deliver(cid, holder="w1")
    assert [s.message.id for s in delivered] == ["m-1", "m-2"]
    with pytest.raises(OwnershipError):
        await store.queue_turn(cid, Message.user("x", id="m-3"), "w1", owner="other")
    with pytest.raises(SettingError):
        await store.queue_turn(cid, Message.user("x", id="m-4"), "", owner="t")


def _call(estimate: int) -> CallEntry:
    return CallEntry(epoch=0, estimate=estimate, tools=0, usage=None, retry=False, ok=True, sent=())


async def test_finish_turn_numbers_its_calls_after_the_last_and_gives_the_lease_back(
    store: Store,
) -> None:
    """On PostgreSQL one statement outside any transaction (issue 30: five round trips were)."""
    cid = (await store.create_conversation(owner="t")).id
    await store.record_calls(cid, [_call(1), _call(2)], owner="t")
    assert await store.acquire_turn(cid, "w1", ttl=10, owner="t") is not None
    with transactions(store) as begun:
        info = await store.finish_turn(cid, "w1", calls=[_call(3), _call(4), _call(5)], owner="t")
    assert len(begun) == (0 if store.dialect == "postgresql" else 1)
    assert info is not None and info.id == cid
    assert (await store.turn_lease(cid)).holder is None
    kept = await store.list_calls(cid, owner="t")
    assert [(c.number, c.estimate) for c in kept] == [(n, n + 1) for n in range(5)]


async def test_finish_turn_of_another_owner_or_a_lost_lease_says_so(
    store: Store, clock: Clock
) -> None:
    cid = (await store.create_conversation(owner="t")).id
    assert await store.acquire_turn(cid, "w1", ttl=10, owner="t") is not None
    with pytest.raises(OwnershipError):
        await store.finish_turn(cid, "w1", calls=[_call(1)], owner="other")
    assert (await store.turn_lease(cid)).holder == "w1"  # nothing given back, nothing kept
    assert await store.list_calls(cid) == []
    with pytest.raises(NotFoundError):
        await store.finish_turn("no-such", "w1", calls=[_call(1)], owner="t")
    clock.ms += 10_001
    assert await store.acquire_turn(cid, "w2", ttl=10, owner="t") is not None
    # the lease was taken over: no conversation returned, the calls kept all the same
    assert await store.finish_turn(cid, "w1", calls=[_call(7)], owner="t") is None
    assert (await store.turn_lease(cid)).holder == "w2"
    assert [c.estimate for c in await store.list_calls(cid)] == [7]


async def test_finish_turn_numbers_after_a_call_its_statement_could_not_see(
    store: Store, db_url: str
) -> None:
    """A call kept by a transaction that commits while the single statement waits for its
    number: the unique index fails the statement, and the transaction numbers after it."""
    if store.dialect != "postgresql":
        pytest.skip("the single statement is PostgreSQL's")

    cid = (await store.create_conversation()).id
    await store.record_calls(cid, [_call(0)])
    assert await store.acquire_turn(cid, "w1", ttl=10) is not None
    engine = create_async_engine(db_url)
    try:
        async with engine.connect() as other, engine.connect() as watcher:
            await other.begin()
            await other.execute(
                text(
                    "INSERT INTO calls (conversation_id, number, epoch, estimate, tools, retry,"
                    " ok, sent, created_at) VALUES (:c, 1, 0, 1, 0, false, true, '[]', now())"
                ),
                {"c": cid},
            )
            finishing = asyncio.create_task(store.finish_turn(cid, "w1", calls=[_call(2)]))
            # wait (no time bound) until the statement waits on the uncommitted number; each look
            # in its own transaction: pg_stat_activity is read once per transaction, so a second
            # look in the first one's transaction would see the first's moment forever
            waiting = text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE '%INSERT INTO calls%'"
            )
            while not finishing.done():
                async with watcher.begin():
                    if (await watcher.execute(waiting)).scalar():
                        break
                await asyncio.sleep(0.01)
            await other.commit()
            info = await finishing
    finally:
        await engine.dispose()
    assert info is not None and (await store.turn_lease(cid)).holder is None
    assert [(c.number, c.estimate) for c in await store.list_calls(cid)] == [(0, 0), (1, 1), (2, 2)]
