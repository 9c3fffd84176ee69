"""A stored conversation forked where a history stopped continuing it: the fork keeps the
shared messages and the newest summary that covers only shared messages, and a manager on
the fork sends its parent's context up to the fork point. A real SQLite file."""

from __future__ import annotations

import json
from typing import Any

from abridged.runtime import ContextManager
from abridged.runtime.forking import fork_stored
from abridged.store import Store
from tests.runtime.test_context_manager import make
from tests.runtime.test_persistence import EAGER_PRUNE, _mixed_session


async def _compacted_twice(store: Store) -> tuple[ContextManager, list[dict[str, Any]]]:
    cm = make(store=store, settings=EAGER_PRUNE)
    live: list[dict[str, Any]] = []
    for item in _mixed_session(400):
        if item["role"] == "assistant" and live:
            await cm.aprepare(live)
            await cm.aflush()
            if cm.state.compactions >= 2:
                break
        live.append(item)
    assert cm.state.compactions >= 2
    return cm, live


async def test_an_edit_after_the_cut_inherits_the_newest_summary(store: Store) -> None:
    parent, live = await _compacted_twice(store)
    pid = parent.conversation_id
    assert pid is not None
    last = (await parent.aprepare(live)).messages
    await parent.aflush()
    edited = [*live[:-1], {**live[-1], "content": "edited"}]
    history = _messages(edited)
    made = await fork_stored(store, pid, "fork-1", history)
    assert made.shared == len(live) - 2  # everything stored but the edited one (no system)
    done = await store.compactions(pid)
    assert made.inherited_cut == done[-1].record.cut_seq
    mine = await store.compactions("fork-1")
    assert [c.record.trigger for c in mine] == ["fork"]
    assert mine[0].record.summary.text == done[-1].record.summary.text
    info = await store.open_conversation("fork-1")
    assert info.settings["forked"] == {"from": pid, "shared": made.shared}
    child = make(store=store, conversation_id="fork-1", settings=EAGER_PRUNE)
    sent = (await child.aprepare(edited)).messages
    # the parent's context, the edited message apart
    assert json.dumps(sent[:-1]) == json.dumps(last[:-1]) and sent[-1] == edited[-1]


async def test_an_edit_before_the_newest_cut_inherits_an_older_summary(store: Store) -> None:
    parent, live = await _compacted_twice(store)
    pid = parent.conversation_id
    assert pid is not None
    done = await store.compactions(pid)
    newest, older = done[-1].record.cut_seq, done[-2].record.cut_seq
    # the first message between the two cuts that is a tool output: history index = seq
    # (the session has a system prompt: stored message s is history index s)
    at = next(s for s in range(older, newest) if live[s]["role"] == "tool")
    edited = [*live[:at], {**live[at], "content": "edited"}]
    made = await fork_stored(store, pid, "fork-2", _messages(edited))
    assert made.shared == at - 1
    mine = await store.compactions("fork-2")
    assert [c.record.trigger for c in mine] == ["fork"]
    assert mine[0].record.cut_seq <= made.shared + 1 < newest
    # an edit before the first cut: nothing to inherit, the fork starts unsummarized
    first_cut = done[0].record.cut_seq
    early = next(s for s in range(1, first_cut) if live[s]["role"] == "tool")
    edited = [*live[:early], {**live[early], "content": "edited"}]
    made = await fork_stored(store, pid, "fork-3", _messages(edited))
    assert made.inherited_cut is None and await store.compactions("fork-3") == []


def _messages(items: list[dict[str, Any]]) -> list[Any]:
    """The abridged messages a manager reads from ``items`` (ids as a stored history has)."""
    cm = make()
    cm.prepare(items)
    return list(cm.history)
