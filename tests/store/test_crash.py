"""Crashes: a process SIGKILLed inside a compaction leaves the last committed state, and the
conversation goes on."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from abridged.core.model import Message
from abridged.store import Store
from abridged.store.schema import compactions, sessions, summaries

from .helpers import keep_last

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("point", ["before", "during", "commit", "after"])
async def test_sigkill_inside_a_compaction(store: Store, db_url: str, point: str) -> None:
    convo = await store.create_conversation()
    await store.append_many(convo.id, [Message.user(f"m{i}") for i in range(1, 21)])
    before = await store.load_context(convo.id)
    child = subprocess.run(
        [sys.executable, "-m", "tests.store.worker", "crash", db_url, convo.id, "15", point],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-3000:]
    # A fresh store, as after a restart.
    again = Store(db_url)
    try:
        after = await again.load_context(convo.id)
        async with again.engine.connect() as conn:
            counts = [
                (await conn.execute(select(func.count()).select_from(t))).scalar()
                for t in (compactions, summaries, sessions)
            ]
        if point == "after":
            assert after.version == before.version + 1
            assert after.summary is not None and after.summary.text == "crash test"
            assert [m.seq for m in after.messages] == list(range(15, 21))
            assert counts == [1, 1, 2]
        else:
            assert after == before  # the last committed state, exactly
            assert counts == [0, 0, 1]
        # The conversation continues: append, compact, read.
        await again.append(convo.id, Message.user("after the crash"))
        outcome = await again.commit_compaction(convo.id, keep_last(2))
        assert outcome.status == "committed"
        stored = await again.stored_messages(convo.id)
        assert [m.seq for m in stored] == list(range(1, 22))
        context = await again.load_context(convo.id)
        assert [m.message.text for m in context.messages] == ["m20", "after the crash"]
    finally:
        await again.close()
