"""Sessions: compaction children, new, clear, resume, background finalisation, deletes."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from abridged.core.model import Message
from abridged.core.summary import summary_message
from abridged.errors import NotFoundError, StoreError
from abridged.store import CompactionRecord, Store, StoredSummary
from abridged.store.schema import compactions, messages, sessions, summaries

from .helpers import SlowSummary, fake_summary, texts, turn


async def _compact(store: Store, cid: str, cut: int, text: str = "S") -> None:
    read = await store.load_context(cid)
    await store.commit_compaction(
        cid,
        CompactionRecord(cut_seq=cut, summary=StoredSummary(text)),
        version=read.version,
        session_id=read.session.id,
    )


async def test_compaction_child_starts_from_summary_and_carries_the_tail(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [m for i in range(4) for m in turn(i)])  # seqs 1..12
    before = await store.load_context(convo.id)
    outcome = await store.commit_compaction(
        convo.id,
        CompactionRecord(
            cut_seq=10,
            summary=StoredSummary("the first nine", {"sections": 3}),
            trigger="manual",
            tokens_before=900,
            tokens_after=300,
            file_ops={"read": ["a.py"], "modified": ["b.py"]},
            duration_ms=12.0,
            summarizer="cheap-model",
        ),
        version=before.version,
        session_id=before.session.id,
    )
    child = outcome.session
    assert child is not None
    assert (child.reason, child.parent_id, child.carry_from) == (
        "compaction",
        before.session.id,
        10,
    )
    context = await store.load_context(convo.id)
    assert context.summary is not None and context.summary.text == "the first nine"
    assert context.summary.meta == {"sections": 3}
    assert [m.seq for m in context.messages] == [10, 11, 12]
    sent = context.to_messages()
    # the engine's own summary message: the same header and text the runtime sends
    assert sent[0].is_summary and sent[0].text == summary_message("the first nine").text
    assert context.version == before.version + 1
    # Messages are never rewritten: the parent's view is intact.
    assert len(await store.stored_messages(convo.id)) == 12
    await store.append(convo.id, Message.user("after"))
    context = await store.load_context(convo.id)
    assert [m.seq for m in context.messages] == [10, 11, 12, 13]
    (record,) = await store.compactions(convo.id)
    assert record.record.file_ops == {"read": ("a.py",), "modified": ("b.py",)}
    assert (record.record.trigger, record.record.summarizer, record.record.cut_seq) == (
        "manual",
        "cheap-model",
        10,
    )
    assert (record.session_id, record.child_session_id) == (before.session.id, child.id)
    parent = await store.get_session(convo.id, before.session.id)
    assert parent.final_summary is not None and parent.final_summary.text == "the first nine"
    assert parent.totals is not None and parent.totals.messages == 12
    assert parent.totals.cache_read == 4 * 50
    # The summary is stored once although two sessions and a compaction refer to it.
    async with store.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(summaries))).scalar() == 1


async def test_chained_compactions_carry_across_ancestors(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 11)])
    await _compact(store, convo.id, 5, "S1")  # child 2 carries 5..10
    await _compact(store, convo.id, 7, "S2")  # child 3 carries 7..10 from session 1
    await store.append_many(convo.id, [Message.user("m11"), Message.user("m12")])
    await _compact(store, convo.id, 9, "S3")  # carries 9..10 (session 1) and 11..12 (session 3)
    context = await store.load_context(convo.id)
    assert context.summary is not None and context.summary.text == "S3"
    assert texts([m.message for m in context.messages]) == ["m9", "m10", "m11", "m12"]
    history = await store.history(convo.id)
    assert [m.seq for m in history] == list(range(1, 13))
    # Keep nothing: the cut at the next sequence number.
    await _compact(store, convo.id, 13, "S4")
    context = await store.load_context(convo.id)
    assert context.messages == ()


async def test_cut_outside_the_lineage_is_refused(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 6)])
    read = await store.load_context(convo.id)
    version, session_id = read.version, read.session.id
    for cut in (0, 7):
        with pytest.raises(StoreError, match="cut"):
            await store.commit_compaction(
                convo.id,
                CompactionRecord(cut, StoredSummary("x")),
                version=version,
                session_id=session_id,
            )
    with pytest.raises(StoreError, match="summary"):
        await store.commit_compaction(
            convo.id,
            CompactionRecord(3, StoredSummary("  ")),
            version=version,
            session_id=session_id,
        )
    assert (await store.open_conversation(convo.id)).version == version
    await store.new_session(convo.id)
    await store.append(convo.id, Message.user("new"))
    read = await store.load_context(convo.id)
    with pytest.raises(StoreError, match="lineage"):
        await store.commit_compaction(
            convo.id,
            CompactionRecord(2, StoredSummary("x")),
            version=read.version,
            session_id=read.session.id,
        )


async def test_new_session_finalises_the_old_one_in_the_background(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0))
    first = (await store.load_context(convo.id)).session
    slow = SlowSummary()
    new = await asyncio.wait_for(
        store.new_session(convo.id, summarize=slow), timeout=5
    )  # returns while the summary maker is still waiting
    await asyncio.wait_for(slow.started.wait(), timeout=5)
    assert new.reason == "new" and new.parent_id == first.id
    context = await store.load_context(convo.id)
    assert context.session.id == new.id and context.summary is None and context.messages == ()
    await store.append(convo.id, Message.user("meanwhile"))
    slow.release.set()
    await store.drain()
    assert store.background_errors == []
    context = await store.load_context(convo.id)
    assert context.summary is not None and context.summary.text.startswith("summary of 3")
    assert texts(context.to_messages())[1:] == ["meanwhile"]
    old = await store.get_session(convo.id, first.id)
    assert old.final_summary is not None and old.finalized_at is not None
    assert old.totals is not None and old.totals.messages == 3


async def test_clear_starts_with_no_summary(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0))
    await store.new_session(convo.id, reason="clear", summarize=fake_summary)
    await store.drain()
    context = await store.load_context(convo.id)
    assert context.summary is None and context.messages == ()
    sessions_ = await store.list_sessions(convo.id)
    assert sessions_[0].final_summary is not None  # still finalised, for search
    with pytest.raises(StoreError):
        await store.new_session(convo.id, reason="compaction")  # type: ignore[arg-type]


async def test_resume_makes_an_earlier_session_current_when_it_fits(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0))
    first = (await store.load_context(convo.id)).session
    await store.new_session(convo.id)
    await store.append(convo.id, Message.user("second session"))
    result = await store.resume(convo.id, first.id, input_budget=100_000)
    assert result.mode == "resumed" and result.session.id == first.id
    assert result.tokens is not None and result.tokens > 0
    context = await store.load_context(convo.id)
    # Its context excludes later sessions.
    assert texts(context.to_messages()) == texts(turn(0))
    await store.append(convo.id, Message.user("back again"))
    context = await store.load_context(convo.id)
    assert texts(context.to_messages())[-1] == "back again"
    again = await store.resume(convo.id, first.id)
    assert again.mode == "current"


async def test_resume_starts_from_the_summary_when_too_big(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [m for i in range(10) for m in turn(i)])
    first = (await store.load_context(convo.id)).session
    await store.new_session(convo.id)
    result = await store.resume(
        convo.id, first.id, input_budget=40, summarize=fake_summary, estimate=len
    )
    assert result.mode == "new" and result.tokens == 30
    assert result.session.reason == "resume" and result.session.parent_id == first.id
    await store.drain()
    context = await store.load_context(convo.id)
    assert context.messages == ()
    assert context.summary is not None and context.summary.text.startswith("summary of 30")
    with pytest.raises(StoreError):
        await store.resume(convo.id, first.id, ratio=1.5)


async def test_resuming_a_session_of_another_conversation_changes_nothing(store: Store) -> None:
    a = await store.create_conversation()
    b = await store.create_conversation()
    before = await store.open_conversation(a.id)
    with pytest.raises(NotFoundError) as info:
        await store.resume(a.id, b.current_session_id or "")
    assert info.value.context["session_id"] == b.current_session_id
    assert info.value.context["conversation_id"] == a.id
    assert await store.open_conversation(a.id) == before
    with pytest.raises(NotFoundError):
        await store.delete_session(a.id, b.current_session_id or "")
    with pytest.raises(NotFoundError):
        await store.history(a.id, session_id=b.current_session_id)


async def test_list_sessions_with_summaries_and_stats(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [m for i in range(3) for m in turn(i)])
    await _compact(store, convo.id, 7, "first part")
    await store.append_many(convo.id, turn(3))
    listed = await store.list_sessions(convo.id)
    assert [s.number for s in listed] == [1, 2]
    assert [s.is_current for s in listed] == [False, True]
    assert listed[0].final_summary is not None
    assert listed[0].final_summary.text == "first part"
    assert listed[1].start_summary is not None
    assert listed[1].start_summary.text == "first part"
    assert listed[0].totals is not None and listed[0].totals.messages == 9
    assert listed[1].totals is not None and listed[1].totals.messages == 3
    assert listed[1].totals.input == 103 and listed[1].totals.cache_write == 5


async def test_finalize_pending_catches_up_and_skips_covered(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0))
    await store.new_session(convo.id)  # no summary maker: left unfinalised
    await store.append_many(convo.id, turn(1))
    await store.new_session(convo.id)
    done = await store.finalize_pending(convo.id, fake_summary)
    assert len(done) == 2 and all(s.final_summary is not None for s in done)
    calls = 0

    async def counting(request: object) -> StoredSummary:
        nonlocal calls
        calls += 1
        return StoredSummary("again")

    assert await store.finalize_pending(convo.id, counting) == []
    await store.finalize_session(convo.id, done[0].id, counting)
    assert calls == 0  # already covered

    async def empty(request: object) -> StoredSummary:
        return StoredSummary("")

    await store.resume(convo.id, done[0].id)
    await store.append(convo.id, Message.user("more"))
    with pytest.raises(StoreError, match="no summary"):
        await store.finalize_session(convo.id, done[0].id, empty)


async def test_a_maker_with_nothing_to_summarise_finalises_without_a_summary(
    store: Store,
) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, turn(0))
    left = await store.new_session(convo.id)  # no summary maker: left unfinalised
    calls = 0

    async def nothing(request: object) -> StoredSummary | None:
        nonlocal calls
        calls += 1
        return None

    (done,) = await store.finalize_pending(convo.id, nothing)
    assert done.finalized_at is not None and done.final_summary is None
    assert done.totals is not None and done.totals.messages == len(turn(0))
    assert left.id != done.id and calls == 1
    assert await store.finalize_pending(convo.id, nothing) == []  # finalised: not asked again
    assert calls == 1


async def test_delete_session_removes_what_hangs_off_it(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 7)])
    root = (await store.load_context(convo.id)).session.id
    await _compact(store, convo.id, 4, "S1")
    await store.append(convo.id, Message.user("m7"))
    child = (await store.load_context(convo.id)).session.id
    await store.new_session(convo.id, summarize=fake_summary)
    await store.drain()
    await store.append(convo.id, Message.user("in new"))
    newest = (await store.load_context(convo.id)).session.id
    await store.delete_session(convo.id, root)
    listed = await store.list_sessions(convo.id)
    assert [s.id for s in listed] == [newest]  # the compaction child went with the root
    assert listed[0].parent_id is None
    context = await store.load_context(convo.id)
    # The new session keeps the summary it started from.
    assert context.summary is not None and context.summary.text.startswith("summary of")
    assert texts([m.message for m in context.messages]) == ["in new"]
    assert [m.message.text for m in await store.stored_messages(convo.id)] == ["in new"]
    async with store.engine.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(compactions))).scalar() == 0
        assert (await conn.execute(select(func.count()).select_from(summaries))).scalar() == 1
        left = (await conn.execute(select(sessions.c.id))).scalars().all()
    assert child not in left


async def test_deleting_the_current_session_makes_its_parent_current(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 5)])
    root = (await store.load_context(convo.id)).session.id
    await _compact(store, convo.id, 3)
    await store.delete_session(convo.id, (await store.load_context(convo.id)).session.id)
    context = await store.load_context(convo.id)
    assert context.session.id == root
    assert texts([m.message for m in context.messages]) == ["m1", "m2", "m3", "m4"]
    await store.delete_session(convo.id, root)
    context = await store.load_context(convo.id)
    assert context.session.reason == "start" and context.messages == ()
    await store.append(convo.id, Message.user("fresh"))
    assert [m.seq for m in (await store.load_context(convo.id)).messages] == [5]


async def test_delete_conversation_is_real_and_complete(store: Store) -> None:
    keep = await store.create_conversation()
    await store.append(keep.id, Message.user("keep"))
    gone = await store.create_conversation()
    await store.append_many(gone.id, [m for i in range(3) for m in turn(i)])
    await _compact(store, gone.id, 4)
    await store.new_session(gone.id, summarize=fake_summary)
    await store.drain()
    await store.delete_conversation(gone.id)
    with pytest.raises(NotFoundError):
        await store.open_conversation(gone.id)
    async with store.engine.connect() as conn:
        for table in (messages, sessions, summaries, compactions):
            count = (
                await conn.execute(
                    select(func.count())
                    .select_from(table)
                    .where(table.c.conversation_id == gone.id)
                )
            ).scalar()
            assert count == 0, table.name
    assert texts((await store.load_context(keep.id)).to_messages()) == ["keep"]


async def test_edit_under_a_summary_marks_resummarisation(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 9)])
    await _compact(store, convo.id, 6)
    await store.edit_message(convo.id, 4, Message.user("m4 edited"))
    await store.edit_message(convo.id, 5, Message.user("m5 edited"))
    conv = await store.open_conversation(convo.id)
    assert conv.resummarize_from == 4
    history = await store.history(convo.id)
    assert texts([m.message for m in history])[3] == "m4 edited"
    # The engine re-summarises from 4: the boundary moves back, the mark clears.
    await store.commit_compaction(
        convo.id,
        CompactionRecord(cut_seq=3, summary=StoredSummary("redo"), resummarized_from=1),
        version=conv.version,
        session_id=conv.current_session_id,
    )
    context = await store.load_context(convo.id)
    assert context.conversation.resummarize_from is None
    assert texts([m.message for m in context.messages]) == [
        "m3",
        "m4 edited",
        "m5 edited",
        "m6",
        "m7",
        "m8",
    ]


async def test_summary_with_lone_surrogates_is_stored_and_read_back_equal(store: Store) -> None:
    # an extractive summary can quote a lone surrogate a tool sent; PostgreSQL's text rejects it
    text = "quoted \ud800 and \udfff end"
    convo = await store.create_conversation()
    await store.append_many(convo.id, [m for i in range(4) for m in turn(i)])
    read = await store.load_context(convo.id)
    await store.commit_compaction(
        convo.id,
        CompactionRecord(cut_seq=10, summary=StoredSummary(text, {"sections": 1}), file_ops={}),
        version=read.version,
        session_id=read.session.id,
    )
    context = await store.load_context(convo.id)
    assert context.summary is not None
    assert context.summary.text == text
    assert context.summary.meta == {"sections": 1}
