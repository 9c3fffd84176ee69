"""Tests of the wire output: the caller's own items, converted summary and pruned results."""

from __future__ import annotations

from typing import Any

from abridged.core.model import Message, Text, ToolResult
from abridged.engine.context import CompactionState
from abridged.runtime.output import OutputCache, render_context
from abridged.runtime.token_sums import TokenSums
from abridged.runtime.tracking import TrackedList


def anthropic_items() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.py"},
                {"type": "text", "text": "and then?"},
            ],
        },
        {"role": "assistant", "content": "done"},
    ]


def test_uncompacted_output_is_the_callers_items() -> None:
    tracked = TrackedList("anthropic", "auto", lambda: TokenSums(lambda m: 1, lambda m: 1))
    items = anthropic_items()
    tracked.sync(items, "sys")
    assert render_context(tracked, CompactionState()) == items


def test_a_cut_inside_an_item_converts_its_kept_part() -> None:
    tracked = TrackedList("anthropic", "auto", lambda: TokenSums(lambda m: 1, lambda m: 1))
    items = anthropic_items()
    tracked.sync(items, "sys")
    history = tracked.history  # system, go, tool_use, tool result, "and then?", done
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "user", "assistant"]
    state = CompactionState(summary="S", cut=4, through_id=history[3].id)
    out = render_context(tracked, state)
    assert out[0]["content"].endswith("S")  # the summary
    assert out[1]["content"] in ("and then?", [{"type": "text", "text": "and then?"}])
    assert out[2] is items[3]


def test_pruned_results_are_converted_and_the_cache_extends() -> None:
    tracked = TrackedList("openai", "auto", lambda: TokenSums(lambda m: 1, lambda m: 1))
    items: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a.py " * 100},
    ]
    tracked.sync(items, None)
    pruned = Message("tool", (ToolResult("c1", "ls", (Text("[pruned]"),)),))
    state = CompactionState(prune_boundary=3, pruned={2: pruned})
    cache = OutputCache()
    first = cache.get(tracked, state)
    assert first[:2] == items[:2] and first[2]["content"] == "[pruned]"
    items.append({"role": "assistant", "content": "ok"})
    tracked.sync(items, None)
    second = cache.get(tracked, state)
    assert second[:3] == first and second[3] is items[3] and first is not second
