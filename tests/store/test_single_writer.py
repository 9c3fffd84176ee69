"""The single writer: compare-and-swap on conversations.version, the loser's re-read, and
races between processes."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from abridged.core.model import Message, Text, ToolCall, ToolResult
from abridged.errors import ConflictError, ContentionError, StoreError
from abridged.store import CompactionRecord, Context, Store, StoredSummary
from abridged.store.schema import sessions, summaries

from .helpers import keep_last

ROOT = Path(__file__).resolve().parents[2]


async def test_two_commits_on_one_version_one_wins(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 11)])
    read = await store.load_context(convo.id)
    version = read.version
    await store.commit_compaction(
        convo.id,
        CompactionRecord(6, StoredSummary("winner")),
        version=version,
        session_id=read.session.id,
        on_conflict="raise",
    )
    with pytest.raises(ConflictError) as info:
        await store.commit_compaction(
            convo.id,
            CompactionRecord(4, StoredSummary("loser")),
            version=version,
            session_id=read.session.id,
            on_conflict="raise",
        )
    assert info.value.context["expected_version"] == version
    assert info.value.context["found_version"] == version + 1
    context = await store.load_context(convo.id)
    assert context.summary is not None and context.summary.text == "winner"
    assert len(await store.compactions(convo.id)) == 1
    async with store.engine.connect() as conn:
        texts = (await conn.execute(select(summaries.c.text))).scalars().all()
        assert texts == ["winner"]  # the loser left nothing behind
        assert (await conn.execute(select(func.count()).select_from(sessions))).scalar() == 2


async def test_loser_skips_when_the_winner_covered_its_work(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 11)])
    calls = 0

    async def compactor(context: Context) -> CompactionRecord:
        nonlocal calls
        calls += 1
        # While "the model" runs, another writer commits the same compaction.
        await store.commit_compaction(convo.id, keep_last(5, text="other"))
        return CompactionRecord(6, StoredSummary("mine"))

    outcome = await store.commit_compaction(convo.id, compactor)
    assert (outcome.status, outcome.attempts, calls) == ("skipped", 1, 1)
    (only,) = await store.compactions(convo.id)
    assert only.record.summary.text == "other up to 6"


async def test_loser_retries_once_when_not_covered(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 11)])
    calls = 0

    async def compactor(context: Context) -> CompactionRecord:
        nonlocal calls
        calls += 1
        if calls == 1:
            await store.commit_compaction(convo.id, keep_last(8, text="small"))  # cut at 3 < 7
        return CompactionRecord(7, StoredSummary(f"mine from version {context.version}"))

    outcome = await store.commit_compaction(convo.id, compactor)
    assert (outcome.status, outcome.attempts, calls) == ("committed", 2, 2)
    context = await store.load_context(convo.id)
    assert context.summary is not None and context.summary.text == "mine from version 1"
    assert [m.seq for m in context.messages] == [7, 8, 9, 10]


async def test_contention_is_reported_after_one_retry(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 11)])
    calls = 0

    async def compactor(context: Context) -> CompactionRecord:
        nonlocal calls
        calls += 1
        await store.set_prune_boundary(convo.id, calls)  # someone always changes state
        return CompactionRecord(7, StoredSummary("never"))

    with pytest.raises(ContentionError) as info:
        await store.commit_compaction(convo.id, compactor)
    assert info.value.context["conversation_id"] == convo.id
    assert calls == 2
    assert await store.compactions(convo.id) == []


async def _planned(store: Store, n: int = 10) -> tuple[str, Context]:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, n + 1)])
    return convo.id, await store.load_context(convo.id)


async def test_a_planned_commit_wins_at_once(store: Store) -> None:
    cid, read = await _planned(store)
    record = CompactionRecord(6, StoredSummary("mine"))
    outcome = await store.commit_compaction(
        cid, record, version=read.version, session_id=read.session.id
    )
    assert (outcome.status, outcome.attempts, outcome.version) == ("committed", 1, 1)
    assert outcome.version == (await store.open_conversation(cid)).version


async def test_a_planned_commit_is_retried_once_after_another_change(store: Store) -> None:
    # the winner moved the prune boundary: the same record is committed at the version re-read
    cid, read = await _planned(store)
    await store.set_prune_boundary(cid, 4)
    outcome = await store.commit_compaction(
        cid,
        CompactionRecord(6, StoredSummary("mine")),
        version=read.version,
        session_id=read.session.id,
    )
    assert (outcome.status, outcome.attempts, outcome.version) == ("committed", 2, 2)
    context = await store.load_context(cid)
    assert context.summary is not None and context.summary.text == "mine"
    assert [m.seq for m in context.messages] == [6, 7, 8, 9, 10]


async def test_a_planned_commit_covered_by_the_winner_is_skipped(store: Store) -> None:
    cid, read = await _planned(store)
    await store.commit_compaction(cid, keep_last(4, text="winner"))  # cut at 7 >= 6
    outcome = await store.commit_compaction(
        cid,
        CompactionRecord(6, StoredSummary("mine")),
        version=read.version,
        session_id=read.session.id,
    )
    assert outcome.status == "skipped"
    (only,) = await store.compactions(cid)
    assert only.record.summary.text == "winner up to 7"


async def test_a_planned_commit_after_the_winner_compacted_less_builds_on_it(
    store: Store,
) -> None:
    cid, read = await _planned(store)
    await store.commit_compaction(cid, keep_last(8, text="small"))  # cut at 3 < 6
    outcome = await store.commit_compaction(
        cid,
        CompactionRecord(6, StoredSummary("mine")),
        version=read.version,
        session_id=read.session.id,
    )
    assert (outcome.status, outcome.attempts) == ("committed", 2)
    context = await store.load_context(cid)
    assert context.summary is not None and context.summary.text == "mine"
    assert [m.seq for m in context.messages] == [6, 7, 8, 9, 10]


async def test_a_planned_commit_after_a_session_switch_is_skipped(store: Store) -> None:
    # /new moved the conversation to another session: the record belongs to one left behind
    cid, read = await _planned(store)
    await store.new_session(cid)
    outcome = await store.commit_compaction(
        cid,
        CompactionRecord(6, StoredSummary("mine")),
        version=read.version,
        session_id=read.session.id,
    )
    assert outcome.status == "skipped"
    assert await store.compactions(cid) == []


async def test_a_planned_commit_that_loses_twice_is_contention(store: Store) -> None:
    cid, read = await _planned(store)
    await store.set_prune_boundary(cid, 2)

    class Busy(Store):
        """A real store whose re-read is followed at once by another writer's change."""

        async def load_context(self, conversation_id: str, **kwargs: object) -> Context:
            context = await super().load_context(conversation_id, **kwargs)  # type: ignore[arg-type]
            await store.set_prune_boundary(conversation_id, 3)
            return context

    busy = Busy(store.engine.url.render_as_string(hide_password=False))
    try:
        with pytest.raises(ContentionError) as info:
            await busy.commit_compaction(
                cid,
                CompactionRecord(6, StoredSummary("never")),
                version=read.version,
                session_id=read.session.id,
            )
    finally:
        await busy.close()
    assert info.value.context["conversation_id"] == cid
    assert await store.compactions(cid) == []


async def test_no_transaction_is_held_across_the_model_call(store: Store) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 6)])
    other = Store(store.engine.url.render_as_string(hide_password=False))

    async def compactor(context: Context) -> CompactionRecord:
        # Another store (its own connections) can write meanwhile: nothing is locked.
        await asyncio.wait_for(other.append(convo.id, Message.user("meanwhile")), timeout=5)
        await asyncio.wait_for(other.new_session(convo.id), timeout=5)
        return CompactionRecord(3, StoredSummary("late"))

    try:
        outcome = await store.commit_compaction(convo.id, compactor)
    finally:
        await other.close()
    assert outcome.status == "skipped"  # the new session covers it


async def test_prune_boundary_only_moves_forward(store: Store) -> None:
    convo = await store.create_conversation()
    after = await store.set_prune_boundary(convo.id, 5)
    assert (after.prune_boundary, after.version) == (5, 1)
    same = await store.set_prune_boundary(convo.id, 3)
    assert (same.prune_boundary, same.version) == (5, 1)


async def test_pruned_forms_are_stored_once_and_read_with_the_context(store: Store) -> None:
    convo = await store.create_conversation()
    call = ToolCall("c1", "bash", "{}")
    await store.append_many(
        convo.id,
        [
            Message.user("go"),
            Message.assistant("", tool_calls=[call]),
            Message.tool("c1", "x" * 5_000, name="bash"),
            Message.user("next"),
        ],
    )
    context = await store.load_context(convo.id)
    original = context.messages[2].message
    form = original.replace(parts=(ToolResult("c1", "bash", (Text("[pruned]"),)),))
    info = await store.set_prune_boundary(convo.id, 4, pruned={3: form})
    assert (info.prune_boundary, info.version) == (4, 1)
    context = await store.load_context(convo.id)
    assert dict(context.pruned) == {3: form}
    # a second form for the same message is not stored: forward only, and nothing changes
    other = original.replace(parts=(ToolResult("c1", "bash", (Text("[other]"),)),))
    again = await store.set_prune_boundary(convo.id, 4, pruned={3: other})
    assert again.version == 1
    assert dict((await store.load_context(convo.id)).pruned) == {3: form}
    # an edit of the message gives it other tool results: its old form no longer applies
    await store.edit_message(convo.id, 3, Message.tool("c9", "edited", name="bash"))
    assert dict((await store.load_context(convo.id)).pruned) == {}


async def test_nothing_to_do(store: Store) -> None:
    convo = await store.create_conversation()
    outcome = await store.commit_compaction(convo.id, keep_last(5))
    assert outcome.status == "nothing"
    assert (await store.open_conversation(convo.id)).version == 0


async def test_a_record_without_its_planned_version_is_refused(store: Store) -> None:
    cid, read = await _planned(store)
    record = CompactionRecord(6, StoredSummary("mine"))
    with pytest.raises(StoreError, match="version and session"):
        await store.commit_compaction(cid, record, version=read.version)
    with pytest.raises(StoreError, match="give no version"):
        await store.commit_compaction(cid, keep_last(2), version=read.version)
    assert await store.compactions(cid) == []


def test_the_store_has_one_compaction_commit_entry_point() -> None:
    # every commit of a compaction goes through Store.commit_compaction; the other entry
    # points (``compact`` with a compactor, ``commit_planned`` with a record) were folded in
    compacting = {
        name
        for name in dir(Store)
        if not name.startswith("_") and "compact" in name and callable(getattr(Store, name))
    }
    assert compacting == {"commit_compaction", "compactions"}
    package = ROOT / "src" / "abridged"
    callers = {
        str(p.relative_to(ROOT))
        for root in (package, ROOT / "tests", ROOT / "bench")
        for p in root.rglob("*.py")
        if re.search(r"\b(store|self)\.(compact|commit_planned)\(", p.read_text())
    }
    assert callers == set()


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.worker", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


@pytest.mark.parametrize("workers", [3])
async def test_processes_racing_to_compact_one_commits(
    store: Store, db_url: str, tmp_path: Path, workers: int
) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 41)])
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    racers = [
        _spawn("race", db_url, convo.id, "30", str(barrier), str(workers)) for _ in range(workers)
    ]
    appender = _spawn("append", db_url, convo.id, "40", "late")
    results = [_result(p) for p in racers]
    _result(appender)
    statuses = sorted(str(r["status"]) for r in results)
    assert statuses == ["committed"] + ["skipped"] * (workers - 1)
    assert len(await store.compactions(convo.id)) == 1
    stored = await store.stored_messages(convo.id)
    assert [m.seq for m in stored] == list(range(1, 81))  # every message once, in order
    texts = [m.message.text for m in stored]
    assert texts[:40] == [f"m{i}" for i in range(1, 41)]
    assert [t for t in texts if t.startswith("late-")] == [f"late-{i}" for i in range(40)]
    context = await store.load_context(convo.id)
    # No append was lost from the context, whichever side of the commit it fell on.
    assert [m.seq for m in context.messages] == list(range(30, 81))


async def test_processes_with_different_cuts_never_lose_messages(
    store: Store, db_url: str, tmp_path: Path
) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 41)])
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    cuts = [10, 20, 30]
    racers = [_spawn("race", db_url, convo.id, str(c), str(barrier), "3") for c in cuts]
    results = [_result(p) for p in racers]
    committed = [r for r in results if r["status"] == "committed"]
    assert 1 <= len(committed) <= 3
    # A loser whose cut was not covered retries once; losing again it reports contention.
    assert all(r["status"] in ("committed", "skipped", "contention") for r in results)
    done = await store.compactions(convo.id)
    assert len(done) == len(committed)
    assert [c.version for c in done] == sorted(c.version for c in done)
    context = await store.load_context(convo.id)
    assert context.session.carry_from == done[-1].record.cut_seq
    assert [m.seq for m in context.messages] == list(range(done[-1].record.cut_seq, 41))
    assert [m.seq for m in await store.stored_messages(convo.id)] == list(range(1, 41))
