"""Thirty successive compactions of one long single-task run through the ``ContextManager``:
the summary stays within its ceiling, holds at most one turn-in-progress part, and no
compaction is a forced recovery."""

from __future__ import annotations

import json

from abridged.core.model import Message, ToolCall
from abridged.core.tokens import estimate_text_tokens
from abridged.engine.compaction import CompactionSettings
from abridged.engine.summarize.prompts import TURN_PREFIX_LABEL
from abridged.events.engine import OverflowRecovered
from abridged.runtime import ContextManager

TASK = "Find out why the nightly export job is slow, fix it, and keep every public API unchanged."
COMPACTIONS = 30


def _output(k: int) -> str:
    lines = [
        f"export_batch_{k}: {1_000 + 37 * k} rows in {k % 9 + 1}.{k % 7} s",
        f"worker-{k % 5} queue depth {k * 7}; retries {k % 3}",
    ]
    if k % 10 == 0:
        lines.append(f"Note: shard-{k} must never be reindexed while the export runs (OPS-{k}).")
    body = "\n".join(lines) + "\n"
    filler = f"{k:05d} DEBUG export worker heartbeat ok, nothing to report\n" * 40
    return body + filler


def _step(k: int) -> list[Message]:
    call = ToolCall(f"call_{k}", "bash", json.dumps({"command": f"cat logs/export-{k}.log"}))
    return [
        Message.assistant(f"Checking export log {k}.", tool_calls=[call]),
        Message.tool(call.id, _output(k), name="bash"),
    ]


def test_thirty_compactions_of_one_turn_keep_one_bounded_summary() -> None:
    cm = ContextManager(
        context_window=16_384,
        max_output_tokens=4_096,
        settings=CompactionSettings(prune_enabled=False),
    )
    ceiling = cm.budget.summary_max
    history: list[Message] = [Message.system("You are a coding agent."), Message.user(TASK)]
    seen: list[str] = []
    k = 0
    while cm.state.compactions < COMPACTIONS:
        assert k < 2_000, f"only {cm.state.compactions} compactions after {k} steps"
        ctx = cm.prepare(history)
        assert ctx.tokens <= ctx.budget.input_budget
        # No step here exceeds the target: the run never needs a forced (overflow) compaction.
        assert not any(isinstance(e, OverflowRecovered) for e in ctx.events), k
        summary = cm.state.summary
        if summary is not None and (not seen or seen[-1] != summary):
            seen.append(summary)
            assert estimate_text_tokens(summary) <= ceiling, (cm.state.compactions, k)
            assert summary.count(TURN_PREFIX_LABEL) <= 1, cm.state.compactions
        history += _step(k)
        k += 1
    assert len(seen) >= COMPACTIONS
    final = seen[-1]
    # The task itself is still what the summary (or the pinned task) says.
    sent = cm.context_messages()
    assert any(TASK in m.text for m in sent)
    assert final.count(TURN_PREFIX_LABEL) <= 1
