"""The settings of a ContextManager: one knob never replaces another's defaults (issue 29's settings
trap), flat knobs by name, the window from the bundled registry, one error shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abridged.core.budget import BudgetSettings, compute_budget
from abridged.core.windows import ModelLimits
from abridged.engine.compaction_settings import CompactionSettings, prune_settings
from abridged.engine.prune import PruneSettings
from abridged.errors import SettingError
from abridged.events.engine import Pruned
from abridged.providers.registry import lookup_model
from abridged.runtime import ContextManager
from abridged.runtime.settings import Settings, resolve_settings

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
    """The policy given as the engine's ``PruneSettings``, as the flat ``prune=`` knob or in a
    flat ``Settings``: protected recent tokens stay the window's ``keep_recent`` and the old
    tool outputs are pruned, as with no settings at all."""
    policy = {"read_file": "keep"}
    managers = {
        "defaults": {},
        "engine": {"settings": CompactionSettings(prune=PruneSettings(tool_policy=policy))},
        "knob": {"prune": policy},
        "flat": {"settings": Settings(prune=policy)},
    }
    pruned: dict[str, bool] = {}
    for name, knobs in managers.items():
        cm = ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT, **knobs)
        protected = prune_settings(cm.settings, cm.budget).protect_recent_tokens
        assert protected == cm.budget.keep_recent == 1_689, name
        ctx = cm.prepare(session(14))
        pruned[name] = any(isinstance(e, Pruned) for e in ctx.events)
    assert pruned == dict.fromkeys(managers, True)


# -- the window from the model's name -----------------------------------------------------------


def test_a_model_name_resolves_its_window_from_the_registry() -> None:
    known = lookup_model("openai/gpt-4.1")
    assert known is not None
    for cm in (ContextManager("openai/gpt-4.1"), ContextManager(model="openai/gpt-4.1")):
        assert cm.budget.context_window == known.context_window
        assert cm.budget.max_output_tokens == known.max_output


def test_an_explicit_window_or_output_wins_over_the_registry() -> None:
    cm = ContextManager("openai/gpt-4.1", context_window=WINDOW, max_output_tokens=OUTPUT)
    assert (cm.budget.context_window, cm.budget.output_reserve) == (WINDOW, OUTPUT)
    limits = ContextManager(ModelLimits(WINDOW, OUTPUT, source="override", known=True))
    assert limits.budget.input_budget == cm.budget.input_budget


def test_an_unknown_model_without_a_window_is_a_setting_error() -> None:
    with pytest.raises(SettingError, match="not in the bundled registry") as info:
        ContextManager("acme/no-such-model-7")
    assert info.value.name == "context_window"
    with pytest.raises(SettingError, match="model"):
        ContextManager("openai/gpt-4.1", model="openai/gpt-4o")


# -- flat knobs -----------------------------------------------------------------------------------


def test_the_flat_knobs_of_the_issue() -> None:
    cm = ContextManager(
        "openai/gpt-4.1", trigger=0.85, keep_recent=20_000, prune={"read_file": "keep"}
    )
    budget = cm.budget
    assert budget.keep_recent == 20_000
    assert budget.trigger == int(0.85 * budget.input_budget)
    prune = prune_settings(cm.settings, budget)
    assert prune.policy_for("read_file") == "keep"
    assert prune.protect_recent_tokens == budget.keep_recent
    assert (
        cm.settings
        == ContextManager(
            "openai/gpt-4.1",
            settings=Settings(trigger=0.85, keep_recent=20_000, prune={"read_file": "keep"}),
        ).settings
    )


def test_knobs_go_on_top_of_the_engine_settings_and_change_nothing_else() -> None:
    cm = ContextManager(
        context_window=WINDOW,
        max_output_tokens=OUTPUT,
        budget=BudgetSettings(trigger_ratio=0.7, max_output_tokens=2_048),
        settings=CompactionSettings(headroom_steps=2),
        target=0.3,
        prune_mode="keep_none",
    )
    assert cm._budget_settings == BudgetSettings(
        trigger_ratio=0.7, target_ratio=0.3, max_output_tokens=2_048
    )
    assert cm.settings.headroom_steps == 2
    assert cm.settings.prune == PruneSettings(mode="keep_none")


def test_the_engine_settings_alone_are_kept_as_given() -> None:
    budget, settings = BudgetSettings(trigger_ratio=0.7), CompactionSettings(headroom_steps=2)
    cm = ContextManager(context_window=WINDOW, budget=budget, settings=settings)
    assert cm.settings is settings and cm._budget_settings is budget


def test_a_settings_object_with_a_budget_too_is_refused() -> None:
    with pytest.raises(SettingError, match="budget"):
        ContextManager(
            context_window=WINDOW, settings=Settings(trigger=0.9), budget=BudgetSettings()
        )


def test_an_unknown_knob_names_itself_and_the_nearest() -> None:
    with pytest.raises(SettingError, match="did you mean trigger") as info:
        ContextManager(context_window=WINDOW, triger=0.9)
    assert info.value.name == "triger"


KNOBS = st.fixed_dictionaries(
    {},
    optional={
        "trigger": st.floats(0.5, 1.0),
        "target": st.floats(0.25, 0.45),  # keep_recent and summary_max stay under it
        "keep_recent": st.integers(1, 1_000),
        "summary_max": st.integers(1, 1_000),
        "prune": st.dictionaries(
            st.sampled_from(["bash", "read_file", "grep"]),
            st.sampled_from(["prune", "summarize", "keep"]),
        ),
        "prune_mode": st.sampled_from(["auto", "keep_all", "keep_none"]),
        "protect_recent_steps": st.integers(0, 9),
        "protect_recent_tokens": st.integers(0, 5_000),
        "min_savings_tokens": st.integers(0, 5_000),
        "headroom_steps": st.integers(0, 9),
        "pin_first_task": st.booleans(),
    },
)


@given(KNOBS)
def test_every_knob_left_out_keeps_its_default(knobs: dict[str, Any]) -> None:
    budget_settings, compaction = resolve_settings(None, None, knobs)
    budget = compute_budget(WINDOW, OUTPUT, budget_settings)
    sized = prune_settings(CompactionSettings(), budget)
    prune = prune_settings(compaction, budget)
    flat = Settings.of(budget_settings, compaction)
    for name in Settings.names():
        if name in knobs:
            assert getattr(flat, name) == knobs[name]
        else:
            assert getattr(flat, name) == getattr(Settings(), name)
    if "protect_recent_tokens" not in knobs:
        assert prune.protect_recent_tokens == budget.keep_recent
        assert prune.protect_recent_tokens == sized.protect_recent_tokens
    if "min_savings_tokens" not in knobs:
        assert prune.min_savings_tokens == sized.min_savings_tokens


BAD = {
    bool: "yes",
    float: 1.5,
    int: -1,
    str: "nonsense",
}


@pytest.mark.parametrize("name", Settings.names())
def test_one_error_shape_for_every_knob(name: str) -> None:
    default = getattr(Settings(), name)
    bad: object = {"x": "shred"} if name == "prune" else BAD.get(type(default), -1)
    if name in {"keep_recent", "summary_max", "hard_limit_tokens"}:
        bad = 0
    with pytest.raises(SettingError) as info:
        ContextManager(context_window=WINDOW, **{name: bad})
    error = info.value
    assert error.name.startswith(name)
    assert repr(bad if name != "prune" else "shred") in str(error)
    assert error.valid and f"expected {error.valid}" in str(error)


def test_a_window_dependent_range_names_the_knob_as_given() -> None:
    with pytest.raises(SettingError, match=r"keep_recent=9000 .*target=5068") as info:
        ContextManager(context_window=WINDOW, max_output_tokens=OUTPUT, keep_recent=9_000)
    assert info.value.name == "keep_recent"
