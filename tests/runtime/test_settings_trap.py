"""One knob never replaces another's defaults: a per-tool prune policy keeps the window-sized
prune thresholds (issue 29's settings trap), through the engine and through a ContextManager."""

from __future__ import annotations

import json
from typing import Any

from abridged.core.budget import compute_budget
from abridged.engine.events import Pruned
from abridged.engine.prune import PruneSettings
from abridged.engine.triggers import CompactionSettings, prune_settings
from abridged.runtime import ContextManager

WINDOW, OUTPUT = 16_384, 4_096  # input budget 11,264; keep_recent 1,689


def session(steps: int, chars: int = 2_400) -> list[dict[str, Any]]:
    """An agent reading logs with ``read_log``: bulky tool results, one per step."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "Why does the queue back up?"}]
    for k in range(steps):
        call = {
            "id": f"call_{k}",
            "type": "function",
            "function": {"name": "read_log", "arguments": json.dumps({"part": k})},
        }
        line = f"2025-01-0{k % 9 + 1} INFO worker-{k} processed batch {k}: depth {k * 7}\n"
        items += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{k}", "content": (line * 60)[:chars]},
        ]
    return items


def test_a_tool_policy_keeps_the_window_sized_prune_thresholds() -> None:
    budget = compute_budget(WINDOW, OUTPUT)
    derived = prune_settings(CompactionSettings(), budget)
    policy = CompactionSettings(prune=PruneSettings(tool_policy={"read_file": "keep"}))
    given = prune_settings(policy, budget)
    assert given.policy_for("read_file") == "keep"
    assert given.protect_recent_tokens == derived.protect_recent_tokens == budget.keep_recent
    assert given.protect_recent_tokens < budget.input_budget
    assert given.min_savings_tokens == derived.min_savings_tokens
    assert given.min_result_tokens == derived.min_result_tokens


def test_an_explicit_threshold_wins_and_the_others_stay_sized() -> None:
    budget = compute_budget(WINDOW, OUTPUT)
    given = prune_settings(CompactionSettings(prune=PruneSettings(min_savings_tokens=10)), budget)
    assert given.min_savings_tokens == 10
    assert given.protect_recent_tokens == budget.keep_recent


def test_a_manager_with_a_tool_policy_still_prunes_on_a_small_window() -> None:
    pruned: dict[str, bool] = {}
    for name, settings in {
        "defaults": None,
        "policy": CompactionSettings(prune=PruneSettings(tool_policy={"read_file": "keep"})),
    }.items():
        cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT, settings=settings)
        ctx = cm.prepare(session(14))
        pruned[name] = any(isinstance(e, Pruned) for e in ctx.events)
    assert pruned == {"defaults": True, "policy": True}
