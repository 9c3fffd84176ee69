"""Property tests on real databases: nothing lost (invariant 3), single writer (invariant 4)."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from abridged.core.model import Message
from abridged.errors import ConflictError
from abridged.store import CompactionRecord, Store, StoredMessage, StoredSummary

from .helpers import fake_summary, keep_last

# Each example works in a conversation of its own, so sharing the test's database is safe.
DB_SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(1, 4)),
        st.tuples(st.just("batch"), st.integers(1, 8)),
        st.tuples(st.just("queue"), st.integers(1, 2)),
        st.tuples(st.just("deliver"), st.just(0)),
        st.tuples(st.just("compact"), st.integers(0, 6)),
        st.tuples(st.just("compact"), st.integers(0, 3)),
        st.tuples(st.just("new"), st.just(0)),
        st.tuples(st.just("clear"), st.just(0)),
        st.tuples(st.just("resume"), st.integers(0, 5)),
        st.tuples(st.just("edit"), st.integers(0, 30)),
        st.tuples(st.just("prune"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=18,
)


async def _nothing_lost(url: str, ops: list[tuple[str, int]]) -> None:
    store = Store(url)
    try:
        convo = await store.create_conversation()
        cid = convo.id
        written: list[str] = []  # every text appended, in append order
        queued: list[str] = []
        edits: dict[int, str] = {}
        snapshot: dict[tuple[int, int], StoredMessage] = {}
        for n, (op, k) in enumerate(ops):
            if op == "append":
                for i in range(k):
                    written.append(f"{n}.{i}")
                    await store.append(cid, Message.user(written[-1]))
            elif op == "batch":
                texts = [f"{n}.{i}" for i in range(k)]
                written += texts
                await store.append_many(cid, [Message.user(t) for t in texts])
            elif op == "queue":
                for i in range(k):
                    queued.append(f"{n}.q{i}")
                    await store.append(cid, Message.user(queued[-1]), status="queued")
            elif op == "deliver":
                await store.deliver(cid)
                written += queued
                queued = []
            elif op == "compact":
                await store.commit_compaction(cid, keep_last(k))
            elif op in ("new", "clear"):
                await store.new_session(cid, reason=op, summarize=fake_summary)  # type: ignore[arg-type]
            elif op == "resume":
                listed = await store.list_sessions(cid)
                await store.resume(cid, listed[k % len(listed)].id)
            elif op == "edit" and written:
                seq = k % len(written) + 1
                edits[seq] = f"edit {n}"
                await store.edit_message(cid, seq, Message.user(edits[seq]))
            elif op == "prune":
                await store.set_prune_boundary(cid, k)
            await store.drain()
            # Invariant 3: every message stored once, in order; no row ever changed.
            stored = await store.stored_messages(cid, all_versions=True)
            originals = [m for m in stored if m.version == 0 and m.seq is not None]
            assert [m.message.text for m in originals] == written
            assert [m.seq for m in originals] == list(range(1, len(written) + 1))
            assert [m.message.text for m in stored if m.seq is None] == queued
            for m in stored:
                if m.seq is not None:
                    before = snapshot.setdefault((m.seq, m.version), m)
                    assert before == m
            # The context is the lineage from carry-from on, in order, newest versions.
            context = await store.load_context(cid)
            seqs = [m.seq for m in context.messages]
            assert all(s is not None and s >= context.session.carry_from for s in seqs)
            assert seqs == sorted({s for s in seqs if s is not None})
            lineage = {m.seq: m for m in await store.history(cid)}
            for m in context.messages:
                assert m == lineage[m.seq]
                assert m.message.text == edits.get(m.seq or 0, m.message.text)
            expected = [s for s in lineage if s is not None and s >= context.session.carry_from]
            assert seqs == expected
    finally:
        await store.close()


@DB_SETTINGS
@given(ops=OPS)
# A cut inside an ancestor's carried range; a resumed session that compacts; edits and queues.
@example(ops=[("batch", 8), ("compact", 6), ("compact", 3), ("append", 2), ("compact", 1)])
@example(
    ops=[("batch", 6), ("new", 0), ("append", 3), ("resume", 0), ("append", 2), ("compact", 2)]
)
@example(ops=[("batch", 5), ("queue", 2), ("compact", 2), ("edit", 1), ("deliver", 0)])
def test_nothing_lost(db_url: str, ops: list[tuple[str, int]]) -> None:
    asyncio.run(_nothing_lost(db_url, ops))


async def _single_writer(url: str, cuts: list[int], order: list[int], appends: int) -> None:
    store = Store(url)
    try:
        convo = await store.create_conversation()
        await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 21)])
        contexts = [await store.load_context(convo.id) for _ in cuts]  # all read version v
        await store.append_many(convo.id, [Message.user("late") for _ in range(appends)])
        won: list[int] = []
        for i in order:
            try:
                await store.commit_compaction(
                    convo.id,
                    CompactionRecord(cuts[i], StoredSummary(f"writer {i}")),
                    version=contexts[i].version,
                    session_id=contexts[i].session.id,
                    on_conflict="raise",
                )
                won.append(i)
            except ConflictError:
                pass
        # Invariant 4: of concurrent compactions planned on one version, exactly one commits.
        assert won == [order[0]]
        assert len(await store.compactions(convo.id)) == 1
        context = await store.load_context(convo.id)
        assert context.summary is not None and context.summary.text == f"writer {order[0]}"
        assert [m.seq for m in context.messages] == list(range(cuts[order[0]], 21 + appends))
    finally:
        await store.close()


@DB_SETTINGS
@given(
    data=st.data(),
    cuts=st.lists(st.integers(1, 21), min_size=2, max_size=5),
    appends=st.integers(0, 3),
)
def test_single_writer(db_url: str, data: st.DataObject, cuts: list[int], appends: int) -> None:
    order = data.draw(st.permutations(range(len(cuts))))
    asyncio.run(_single_writer(db_url, cuts, list(order), appends))
