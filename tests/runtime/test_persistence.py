"""A ContextManager kept in a store: a restart, or a second process on the same conversation,
sends the same bytes; the history is append-only once stored. A real SQLite file (the commit
path's retry is tested on both databases in ``tests/store/test_single_writer.py``)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from abridged.core.budget import BudgetSettings
from abridged.core.windows import ModelLimits
from abridged.engine.compaction import CompactionHooks
from abridged.engine.compaction_settings import CompactionSettings
from abridged.engine.prune import PruneSettings
from abridged.engine.summarize.extractive import ExtractiveSummarizer
from abridged.errors import MessageValidationError, SettingError, StoreUnavailableError
from abridged.formats.openai_chat import messages_to_openai
from abridged.runtime import ContextManager
from abridged.runtime.background import Host
from abridged.runtime.driver import SummarizerFactory
from abridged.runtime.history import load_history
from abridged.store import Store
from tests.runtime.test_context_manager import make, openai_session, openai_step

# prunes small savings near the tail too, so that a state holds a summary and pruned outputs
# the small outputs (700 characters) stay under min_result_tokens: kept until a summary
EAGER_PRUNE = CompactionSettings(
    prune=PruneSettings(
        protect_recent_tokens=1_000,
        protect_recent_steps=1,
        min_savings_tokens=300,
        min_result_tokens=256,
    )
)


def _mixed_session(steps: int) -> list[dict[str, Any]]:
    """An agent session whose every third output is bulky (pruned) and the others small (kept
    until a summary covers them): it sees prunes and compactions."""
    items = openai_session(0)
    for k in range(steps):
        items += openai_step(k, 2_400 if k % 3 == 0 else 700)
    return items


def _chat(turns: int) -> list[dict[str, Any]]:
    """A plain chat (no tool output to prune, nothing near the trigger): a system prompt and
    ``turns`` questions with their answers."""
    items: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for k in range(turns):
        items += [
            {"role": "user", "content": f"question {k}"},
            {"role": "assistant", "content": f"answer {k}"},
        ]
    return items


async def _drive(cm: ContextManager, items: list[dict[str, Any]]) -> None:
    """Feed ``items`` call by call (the list grows in place)."""
    live: list[dict[str, Any]] = []
    for item in items:
        if item["role"] == "assistant" and live:
            await cm.aprepare(live)
        live.append(item)


async def test_a_restart_sends_the_same_bytes(store: Store) -> None:
    first = make(store=store, settings=EAGER_PRUNE)
    live: list[dict[str, Any]] = []
    last = ""
    # drive until the state has both a summary and pruned outputs in its tail
    for item in _mixed_session(200):
        if item["role"] == "assistant" and live:
            last = json.dumps((await first.aprepare(live)).messages)
            if first.state.compactions and first.state.pruned:
                break
        live.append(item)
    assert first.state.compactions >= 1 and first.state.pruned
    cid = first.conversation_id
    assert cid is not None and len(await store.compactions(cid)) == first.state.compactions
    again = make(store=store, conversation_id=cid, settings=EAGER_PRUNE)
    ctx = await again.aprepare(list(live))
    assert json.dumps(ctx.messages) == last
    # the pinned task comes before the summary, after the restart as before it
    sent = json.loads(last)
    assert sent[1] == live[1] and "Summary of the earlier part" in sent[2]["content"]
    assert again.state.leading == first.state.leading == 1
    assert again.state.summary == first.state.summary
    assert again.state.cut == first.state.cut
    assert dict(again.state.pruned) == dict(first.state.pruned)
    # nothing was stored twice
    assert len(await store.stored_messages(cid)) == len(live) - 1  # all but the system prompt
    # the store's own view of the context is the one sent (after the system prompt)
    stored = (await store.load_context(cid)).to_messages()
    assert json.dumps(messages_to_openai(stored)) == json.dumps(json.loads(last)[1:])


async def test_two_processes_on_one_conversation_send_the_same_bytes(store: Store) -> None:
    items = _mixed_session(12)
    # a narrow gap between trigger and target: several compactions in the run
    narrow = BudgetSettings(trigger_ratio=0.8, target_ratio=0.5, keep_recent_tokens=2_816)
    one = make(store=store, budget=narrow)
    await _drive(one, items)
    two = make(store=store, conversation_id=one.conversation_id, budget=narrow)
    live = list(items)
    for k in range(12, 90):
        live += openai_step(k, 2_400 if k % 3 == 0 else 700)
        # whichever goes first compacts and commits; the other adopts it from the store
        first, second = (one, two) if k % 2 else (two, one)
        a = json.dumps((await first.aprepare(live)).messages)
        b = json.dumps((await second.aprepare(live)).messages)
        assert a == b, k
    assert one.state.compactions >= 2
    assert len(await store.compactions(one.conversation_id or "")) >= 2


async def test_a_stored_history_is_append_only(store: Store) -> None:
    items = openai_session(6)
    cm = make(store=store)
    await cm.aprepare(items)
    edited = [dict(i) for i in items]
    edited[3] = {**edited[3], "content": "a different log"}
    with pytest.raises(MessageValidationError) as info:
        await make(store=store, conversation_id=cm.conversation_id).aprepare(edited)
    assert info.value.context["conversation_id"] == cm.conversation_id
    with pytest.raises(MessageValidationError, match="keeps every message"):
        await make(store=store, conversation_id=cm.conversation_id).aprepare(items[:4])
    # what was stored is intact, and the whole history still works
    assert len(await store.stored_messages(cm.conversation_id or "")) == len(items) - 1
    ctx = await make(store=store, conversation_id=cm.conversation_id).aprepare(items)
    assert ctx.messages == items


def test_the_sync_forms_refuse_a_store(tmp_path: Any) -> None:
    cm = make(store=Store(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"))
    with pytest.raises(SettingError, match="aprepare"):
        cm.prepare([{"role": "user", "content": "hi"}])
    with pytest.raises(SettingError, match="conversation_id"):
        make(conversation_id="c1")


async def test_a_refused_edit_leaves_the_manager_usable(store: Store) -> None:
    """The manager rolled its state back for the edit the store refused: with the stored
    history again, it sends what the store holds, as a fresh manager does."""
    cm = make(store=store, settings=EAGER_PRUNE)
    live: list[dict[str, Any]] = []
    for item in _mixed_session(60):
        if item["role"] == "assistant" and live:
            await cm.aprepare(live)
        live.append(item)
    assert cm.state.compactions >= 1
    edited = [dict(i) for i in live]
    edited[2] = {**edited[2], "content": "an edited first step"}
    with pytest.raises(MessageValidationError):
        await cm.aprepare(edited)
    with pytest.raises(MessageValidationError):  # still refused when passed again
        await cm.aprepare(edited)
    again = json.dumps((await cm.aprepare(list(live))).messages)
    fresh = make(store=store, conversation_id=cm.conversation_id, settings=EAGER_PRUNE)
    assert again == json.dumps((await fresh.aprepare(list(live))).messages)
    # reset() forgets the state in memory; the next call reads it from the store
    cm.reset()
    assert json.dumps((await cm.aprepare(list(live))).messages) == again


async def test_write_behind_is_stored_by_aflush_and_a_failed_write_is_written_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a chat (no tool output to prune, nothing near the trigger): nothing is due, the new
    # messages are written behind
    items = _chat(3)
    cm = make(store=store)
    await cm.aprepare(items[:3])
    cid = cm.conversation_id or ""
    info = await store.open_conversation(cid)
    await cm.aprepare(items[:5], stored=info, write_behind=True)
    await cm.aflush()
    assert len(await store.stored_messages(cid)) == 4  # every message after the system prompt

    # The store fails the write behind (a fault planted in the store's one append path): the
    # caller hears it from ``aflush``; the next call reads the store again and writes it all.
    real = store.append_many
    failed: list[int] = []

    async def failing(*args: Any, **kwargs: Any) -> Any:
        failed.append(1)
        raise StoreUnavailableError(
            "the database cannot be reached", operation="append_many", cause="planted"
        )

    monkeypatch.setattr(store, "append_many", failing)
    await cm.aprepare(items[:6], stored=await store.open_conversation(cid), write_behind=True)
    with pytest.raises(StoreUnavailableError):
        await cm.aflush()
    assert failed and len(await store.stored_messages(cid)) == 4
    monkeypatch.setattr(store, "append_many", real)
    ctx = await cm.aprepare(items, stored=await store.open_conversation(cid), write_behind=True)
    await cm.aflush()
    stored = await store.stored_messages(cid)
    assert len(stored) == len(items) - 1
    assert [s.seq for s in stored] == list(range(1, len(items)))
    assert ctx.messages is not None


async def test_a_conversation_read_before_an_unflushed_write_behind_stores_nothing_twice(
    store: Store,
) -> None:
    # the caller forgot ``aflush`` and passes the conversation it read before the held-back
    # messages were written (by the next call): they are stored once, in order
    items = _chat(3)
    cm = make(store=store)
    await cm.aprepare(items[:3])
    cid = cm.conversation_id or ""
    await cm.aprepare(items[:5], stored=await store.open_conversation(cid), write_behind=True)
    stale = await store.open_conversation(cid)  # the two new messages are not stored yet
    await cm.aprepare(items, stored=stale, write_behind=True)
    await cm.aflush()
    stored = await store.stored_messages(cid)
    assert [s.message.text for s in stored] == [i["content"] for i in items[1:]]
    assert [s.seq for s in stored] == list(range(1, len(items)))


# -- one commit path ---------------------------------------------------------------------------


async def _stored_rows(store: Store, cid: str) -> dict[str, Any]:
    """What a commit leaves in the store, without the ids and times that differ per row."""
    context = await store.load_context(cid)
    summary = context.summary
    return {
        "compactions": [
            (replace(c.record, summary=replace(c.record.summary, id=None)), c.version)
            for c in await store.compactions(cid)
        ],
        "summary": None
        if summary is None
        else (summary.text, dict(summary.meta), summary.carried_seqs, dict(summary.file_ops)),
        "carry_from": context.session.carry_from,
        "prune_boundary": context.conversation.prune_boundary,
        "pruned": {seq: m.text for seq, m in context.pruned.items()},
        "version": context.conversation.version,
        "sent": json.dumps(messages_to_openai(context.to_messages())),
    }


async def test_a_manager_and_a_conversations_manager_commit_the_same_rows(store: Store) -> None:
    # one result (a summary and a prune), committed by a caller's manager and by the manager
    # of a Conversation holding the same stored history: the one commit path, the same rows
    caller = make(store=store, settings=EAGER_PRUNE)
    await caller.aprepare(_mixed_session(16))
    assert not caller.state.compacted  # below the trigger: the compaction below is the first
    plan = caller.planner_for((), manual=True)()
    assert plan is not None
    result = await caller.run_plan(plan, ExtractiveSummarizer(), CompactionHooks())
    assert result.status == "compacted" and result.state.carried and result.state.pruned
    cid = caller.conversation_id
    assert cid is not None
    twin = await store.create_conversation()
    await store.append_many(twin.id, [s.message for s in await store.stored_messages(cid)])
    hosted = ContextManager.for_conversation(
        ModelLimits(16_384, 4_096, source="override", known=True),
        budget=BudgetSettings(),
        settings=EAGER_PRUNE,
        counter=caller.counter,
        summarizers=SummarizerFactory(None),
        store=store,
        conversation_id=twin.id,
        owner=None,
    )
    hosted.load(await load_history(store, twin.id, caller.history[:1]))
    reloads: list[str] = []

    async def reload() -> None:
        reloads.append("reload")

    hosted.attach(
        Host(
            summarizer=lambda budget: ExtractiveSummarizer(),
            hooks=CompactionHooks,
            plan=lambda size: asyncio.sleep(0),
            notice=reloads.append,
            reload=reload,
            started_session=lambda session: None,
        )
    )
    by_caller = await caller.commit(result, duration_ms=12.5)
    by_hosted = await hosted.commit(result, duration_ms=12.5, reload=reload)
    assert by_caller is not None and by_hosted is not None
    assert not by_caller.lost and not by_hosted.lost and reloads == []
    assert by_caller.version == by_hosted.version
    rows = await _stored_rows(store, cid)
    assert rows == await _stored_rows(store, twin.id)
    assert rows["compactions"] and rows["pruned"] and rows["summary"] is not None
    assert caller.state.summary == hosted.state.summary == result.state.summary
    assert dict(caller.state.pruned) == dict(hosted.state.pruned)
    # a reopened manager sends what the store holds
    reopened = make(store=store, conversation_id=cid, settings=EAGER_PRUNE)
    sent = (await reopened.aprepare(_mixed_session(16))).messages
    assert json.dumps(sent[1:]) == rows["sent"]


def test_only_the_persistence_module_writes_a_compaction() -> None:
    # the store's writes of a compaction's result (its summary, its prune) are made in one
    # place, reached only by ContextManager.commit; a fork copies a committed state instead
    package = Path(__file__).parents[2] / "src" / "abridged"
    writers = {
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if "store" not in p.relative_to(package).parts[:1]
        and re.search(r"\.(commit_compaction|set_prune_boundary)\(", p.read_text())
    }
    assert writers == {"runtime/persistence.py", "runtime/forking.py"}
    callers = {
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if re.search(r"\b(commit_result|_persisted\.commit)\(", p.read_text())
    }
    assert callers == {"runtime/persistence.py", "runtime/context_manager.py"}
